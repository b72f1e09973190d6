import Logging
import PostgresNIO

/// Where Postgres is, from `POSTGRES_*` environment variables.
public struct DatabaseSettings: Sendable {
    public var host: String
    public var port: Int
    public var user: String
    public var password: String?
    public var database: String
    public var maximumConnections: Int
    /// `POSTGRES_SSLMODE`: whether the connection uses TLS, and what of the server's certificate is checked.
    public var sslMode: PostgresSSLMode
    /// `POSTGRES_SSL_ROOT_CERT`: PEM file of the certificate authorities the server's certificate must chain to
    /// (verify-ca, verify-full); nil: the system's.
    public var sslRootCertificate: String?

    public init(host: String = "127.0.0.1", port: Int = 5433, user: String = "itour", password: String? = nil,
                database: String = "itour", maximumConnections: Int = 10,
                sslMode: PostgresSSLMode = .disable, sslRootCertificate: String? = nil) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database
        self.maximumConnections = maximumConnections
        self.sslMode = sslMode
        self.sslRootCertificate = sslRootCertificate
    }

    /// The variables `init(environment:)` reads.
    public static let variables: [ConfigVariable] = [
        .postgresHost, .postgresPort, .postgresUser, .postgresPassword, .postgresDatabase, .postgresMaxConnections,
        .postgresSSLMode, .postgresSSLRootCertificate,
    ]

    /// Refused at start, naming the variable: an SSL mode libpq does not name or this client does not offer, a
    /// root certificate with a mode that checks none (disable, require), and one that is not a readable PEM file.
    public init(environment: Environment) throws {
        let sslMode: PostgresSSLMode = try environment.choice(.postgresSSLMode)
        let rootCertificate = environment.optionalString(.postgresSSLRootCertificate)
        if let rootCertificate {
            guard sslMode.verifiesCertificate else {
                throw ConfigurationError(name: ConfigVariable.postgresSSLRootCertificate.name,
                                         message: "is set, but POSTGRES_SSLMODE is \(sslMode.rawValue), which checks no certificate: use verify-ca or verify-full")
            }
            let certificates: [NIOSSLCertificate]
            do {
                certificates = try NIOSSLCertificate.fromPEMFile(rootCertificate)
            } catch {
                throw ConfigurationError(name: ConfigVariable.postgresSSLRootCertificate.name,
                                         message: "names \(rootCertificate), which is not a readable PEM file of certificates (\(error))")
            }
            guard !certificates.isEmpty else {
                throw ConfigurationError(name: ConfigVariable.postgresSSLRootCertificate.name, message: "names \(rootCertificate), which holds no certificate")
            }
        }
        self.init(
            host: environment.string(.postgresHost),
            port: try environment.int(.postgresPort),
            user: environment.string(.postgresUser),
            password: environment.optionalString(.postgresPassword),
            database: environment.string(.postgresDatabase),
            maximumConnections: try environment.int(.postgresMaxConnections, in: 1...1_000, unit: "connections"),
            sslMode: sslMode,
            sslRootCertificate: rootCertificate
        )
    }

    /// The TLS client configuration `sslMode` asks for (nil for disable): require checks nothing of the server's
    /// certificate, verify-ca its chain, verify-full its chain and that it names `host` (for an IP address, an IP
    /// entry among its subject alternative names).
    public var tlsConfiguration: TLSConfiguration? {
        var configuration = TLSConfiguration.makeClientConfiguration()
        switch sslMode {
        case .disable: return nil
        case .require: configuration.certificateVerification = .none
        case .verifyCA: configuration.certificateVerification = .noHostnameVerification
        case .verifyFull: configuration.certificateVerification = .fullVerification
        }
        if let sslRootCertificate { configuration.trustRoots = .file(sslRootCertificate) }
        return configuration
    }

    /// postgres-nio's TLS setting: every mode but disable insists on TLS (`.require`: a server without it is refused,
    /// never used in the clear).
    public var tls: PostgresClient.Configuration.TLS {
        tlsConfiguration.map { .require($0) } ?? .disable
    }

    public func makeClient(logger: Logger) -> PostgresClient {
        var configuration = PostgresClient.Configuration(host: host, port: port, username: user, password: password,
                                                         database: database, tls: tls)
        configuration.options.maximumConnections = maximumConnections
        configuration.options.connectionIdleTimeout = .seconds(60)
        return PostgresClient(configuration: configuration, backgroundLogger: logger)
    }
}

/// `POSTGRES_SSLMODE`, in libpq's words. libpq's `allow` and `prefer` are left out: both let a connection go
/// without TLS, unnoticed, when the server does not offer it.
public enum PostgresSSLMode: String, CaseIterable, Sendable {
    /// No TLS (the local demo cluster).
    case disable
    /// TLS, the server's certificate unchecked: safe from eavesdroppers, not from an impostor.
    case require
    /// TLS, the certificate checked against the root certificate(s), not the host name.
    case verifyCA = "verify-ca"
    /// TLS, the certificate checked against the root certificate(s) and the host name.
    case verifyFull = "verify-full"

    var verifiesCertificate: Bool { self == .verifyCA || self == .verifyFull }
}

extension ConfigVariable {
    public static let postgresSSLMode = optional(
        "POSTGRES_SSLMODE", default: PostgresSSLMode.disable.rawValue,
        "TLS to Postgres, libpq's names: disable, require (unchecked certificate), verify-ca (its chain) or verify-full (chain and host name)")
    public static let postgresSSLRootCertificate = optional(
        "POSTGRES_SSL_ROOT_CERT", default: nil,
        "with verify-ca or verify-full: PEM file of the CAs the server's certificate must chain to; unset: the system's")
}

extension PostgresClient {
    /// True when Postgres answers `SELECT 1` within the timeout.
    public func isReachable(timeout: Duration = .seconds(2), logger: Logger) async -> Bool {
        (try? await withTimeout(timeout) { try await self.query("SELECT 1", logger: logger).collect() }) != nil
    }
}

extension PostgresConnection {
    /// Runs a query and decodes every row into a tuple of the given column types. (`PostgresClient` has
    /// the same through `withConnection`.)
    public func fetch<each Column: PostgresDecodable & Sendable>(_ query: PostgresQuery, as types: (repeat each Column).Type,
                                                      logger: Logger) async throws -> [(repeat each Column)] {
        let sequence = try await self.query(query, logger: logger)
        var rows: [(repeat each Column)] = []
        for try await row in sequence.decode(types) { rows.append(row) }
        return rows
    }
}

extension PostgresClient {
    /// Runs a query on a pooled connection and decodes every row into a tuple of the given column types.
    public func fetch<each Column: PostgresDecodable & Sendable>(_ query: PostgresQuery, as types: (repeat each Column).Type,
                                                      logger: Logger) async throws -> [(repeat each Column)] {
        try await withConnection { connection in try await connection.fetch(query, as: types, logger: logger) }
    }
}
