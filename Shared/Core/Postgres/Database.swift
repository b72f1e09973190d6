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

    public init(host: String = "127.0.0.1", port: Int = 5433, user: String = "itour", password: String? = nil,
                database: String = "itour", maximumConnections: Int = 10) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database
        self.maximumConnections = maximumConnections
    }

    /// The variables `init(environment:)` reads.
    public static let variables: [ConfigVariable] = [
        .postgresHost, .postgresPort, .postgresUser, .postgresPassword, .postgresDatabase, .postgresMaxConnections,
    ]

    public init(environment: Environment) throws {
        self.init(
            host: environment.string(.postgresHost),
            port: try environment.int(.postgresPort),
            user: environment.string(.postgresUser),
            password: environment.optionalString(.postgresPassword),
            database: environment.string(.postgresDatabase),
            maximumConnections: try environment.int(.postgresMaxConnections)
        )
    }

    public func makeClient(logger: Logger) -> PostgresClient {
        var configuration = PostgresClient.Configuration(host: host, port: port, username: user, password: password,
                                                         database: database, tls: .disable)
        configuration.options.maximumConnections = maximumConnections
        configuration.options.connectionIdleTimeout = .seconds(60)
        return PostgresClient(configuration: configuration, backgroundLogger: logger)
    }
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
    public func fetch<each Column: PostgresDecodable>(_ query: PostgresQuery, as types: (repeat each Column).Type,
                                                      logger: Logger) async throws -> [(repeat each Column)] {
        let sequence = try await self.query(query, logger: logger)
        var rows: [(repeat each Column)] = []
        for try await row in sequence.decode(types) { rows.append(row) }
        return rows
    }
}

extension PostgresClient {
    /// Runs a query on a pooled connection and decodes every row into a tuple of the given column types.
    public func fetch<each Column: PostgresDecodable>(_ query: PostgresQuery, as types: (repeat each Column).Type,
                                                      logger: Logger) async throws -> [(repeat each Column)] {
        try await withConnection { connection in try await connection.fetch(query, as: types, logger: logger) }
    }
}
