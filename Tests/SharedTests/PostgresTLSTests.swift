import Foundation
import Logging
import PostgresNIO
import Shared
import Testing
import TestSupport

/// `POSTGRES_SSLMODE` and `POSTGRES_SSL_ROOT_CERT` against a real Postgres serving TLS: a cluster of this test's
/// own (scripts/postgres.sh with `ssl=on`), with a certificate authority and a server certificate made by openssl,
/// whose pg_hba.conf lets TCP clients in over TLS only.
@Suite("Postgres over TLS", .serialized, .stopsIfHung)
struct PostgresTLSTests {
    let logger = TestServices.logger

    @Test("each SSL mode against a TLS-only server: verify-full connects with the right CA and refuses a wrong CA or a name the certificate lacks; verify-ca checks the chain only; require checks nothing; disable is refused")
    func modes() async throws {
        let server = try await TLSPostgres.start()
        do {
            try await checkModes(server)
            await server.stop()
        } catch {
            await server.stop()
            throw error
        }
    }

    private func checkModes(_ server: TLSPostgres) async throws {
        let ca = server.certificates.authority, otherCA = server.certificates.otherAuthority
        // The certificate names "localhost" only: a client that asks for 127.0.0.1 gets a certificate not naming it.

        // verify-full: chain and name. Through the services' own client (DatabaseSettings.makeClient).
        let verified = server.settings(host: "localhost", .verifyFull, rootCertificate: ca)
        let session = try await sessionTLS(verified)
        #expect(session.ssl, "the session is not encrypted")
        #expect(session.version.hasPrefix("TLSv1."), "TLS version \(session.version)")

        let wrongCA = try #require(await refusal(server.settings(host: "localhost", .verifyFull, rootCertificate: otherCA)),
                                   "verify-full connected with a CA that signed nothing")
        #expect(wrongCA.contains("CERTIFICATE_VERIFY_FAILED"), "\(wrongCA)")
        // The services' client with the wrong CA never gets a session either.
        let reachable = try await TestServices.withPostgres(server.settings(host: "localhost", .verifyFull, rootCertificate: otherCA)) { client in
            await client.isReachable(timeout: .seconds(3), logger: logger)
        }
        #expect(!reachable, "the pool got a session with a CA that signed nothing")

        let wrongName = try #require(await refusal(server.settings(host: "127.0.0.1", .verifyFull, rootCertificate: ca)),
                                     "verify-full connected to a host its certificate does not name")
        #expect(wrongName.contains("failedToValidateHostname"), "\(wrongName)")

        // verify-ca: the chain, not the name.
        #expect(try await sessionTLS(server.settings(host: "127.0.0.1", .verifyCA, rootCertificate: ca)).ssl)
        let verifyCAWrongCA = try #require(await refusal(server.settings(host: "127.0.0.1", .verifyCA, rootCertificate: otherCA)),
                                           "verify-ca connected with a CA that signed nothing")
        #expect(verifyCAWrongCA.contains("CERTIFICATE_VERIFY_FAILED"), "\(verifyCAWrongCA)")

        // require: TLS, nothing checked.
        #expect(try await sessionTLS(server.settings(host: "127.0.0.1", .require, rootCertificate: nil)).ssl)

        // disable: the server's pg_hba.conf has no line for a TCP client without TLS.
        let plain = try #require(await refusal(server.settings(host: "127.0.0.1", .disable, rootCertificate: nil)),
                                 "a client without TLS got in")
        #expect(plain.contains("no encryption"), "\(plain)")
    }

    @Test("require and the verify modes never fall back to a plain connection: a server without TLS is refused")
    func noTLSServer() async throws {
        // make test's own Postgres has no TLS.
        let settings = DatabaseSettings(port: TestServices.postgresPort, maximumConnections: 1, sslMode: .require)
        let refused = try #require(await refusal(settings), "require connected to a server without TLS")
        #expect(refused.contains("sslUnsupported"), "\(refused)")
    }

    /// Whether the session that `settings`' client (the services' `makeClient`) opens is encrypted, and with which
    /// TLS version, as the server sees it.
    private func sessionTLS(_ settings: DatabaseSettings) async throws -> (ssl: Bool, version: String) {
        try await TestServices.withPostgres(settings) { client in
            try await withTimeout(.seconds(20)) {
                let rows = try await client.fetch("SELECT ssl, COALESCE(version, '') FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
                                                  as: (Bool, String).self, logger: logger)
                let row = try #require(rows.first)
                return (row.0, row.1)
            }
        }
    }

    /// Why one connection with `settings`' TLS configuration was refused (the error in full); nil if it connected. One
    /// connection rather than the pool, which retries a refused connection with back-off and gives no reason.
    private func refusal(_ settings: DatabaseSettings) async -> String? {
        do {
            let tls: PostgresConnection.Configuration.TLS = try settings.tlsConfiguration.map { .require(try NIOSSLContext(configuration: $0)) } ?? .disable
            let configuration = PostgresConnection.Configuration(host: settings.host, port: settings.port, username: settings.user,
                                                                 password: settings.password, database: settings.database, tls: tls)
            let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
            try await connection.close()
            return nil
        } catch {
            return String(reflecting: error)
        }
    }
}

/// A Postgres cluster of a test's own on a free port, serving TLS with a certificate for "localhost" signed by a
/// throwaway authority, and accepting TCP connections over TLS only (`hostssl`; trust, as make test's cluster).
struct TLSPostgres {
    let port: Int
    let directory: String
    let certificates: TestCertificates

    private static var root: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized
    }

    static func start() async throws -> TLSPostgres {
        let certificates = try await TestCertificates.make(subjectAltNames: ["DNS:localhost"])
        let hba = "\(certificates.directory)/pg_hba.conf"
        try """
            # TCP only over TLS; the socket (scripts/postgres.sh's own psql) as make test's cluster.
            local    all all                trust
            hostssl  all all 127.0.0.1/32   trust
            hostssl  all all ::1/128        trust

            """.write(toFile: hba, atomically: true, encoding: .utf8)
        try certificates.restrict(certificates.serverKey)
        try certificates.handToPostgresUser([certificates.serverCertificate, certificates.serverKey, hba])
        let options = ["-c ssl=on", "-c ssl_cert_file=\(certificates.serverCertificate)", "-c ssl_key_file=\(certificates.serverKey)",
                       "-c hba_file=\(hba)", "-c fsync=off"].joined(separator: " ")
        var lastError: (any Error)?
        for _ in 0..<3 {   // the free port may be taken before the cluster binds it
            let port = try PrivateBroker.freePort()
            let server = TLSPostgres(port: port, directory: "\(certificates.directory)/cluster-\(port)", certificates: certificates)
            do {
                try await TestProcess.run(root.appendingPathComponent("scripts/postgres.sh").path, ["start", server.directory, String(port)],
                                          environment: ["POSTGRES_OPTS": options])
                return server
            } catch {
                lastError = error
                await server.stopCluster()
            }
        }
        certificates.remove()
        throw lastError!
    }

    func settings(host: String, _ mode: PostgresSSLMode, rootCertificate: String?) -> DatabaseSettings {
        DatabaseSettings(host: host, port: port, database: "itour", maximumConnections: 1, sslMode: mode, sslRootCertificate: rootCertificate)
    }

    func stop() async {
        await stopCluster()
        certificates.remove()
    }

    private func stopCluster() async {
        _ = try? await TestProcess.run(Self.root.appendingPathComponent("scripts/postgres.sh").path, ["stop", directory, String(port)])
    }
}
