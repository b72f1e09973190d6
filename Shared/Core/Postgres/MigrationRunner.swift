import Logging
import PostgresNIO

/// One versioned step of a service's schema. Versions are applied in order, each once.
public struct Migration: Sendable {
    public let version: Int
    public let name: String
    public let sql: String

    public init(_ version: Int, _ name: String, _ sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }
}

/// Applies a service's migrations to its own schema at start-up. A Postgres advisory lock per schema
/// makes instances that start together take turns: the second finds the work done.
public struct MigrationRunner: Sendable {
    public let schema: String
    public let migrations: [Migration]

    public init(schema: String, migrations: [Migration]) {
        precondition(schema.allSatisfy { $0.isLetter || $0 == "_" }, "schema names are plain identifiers")
        precondition(Set(migrations.map(\.version)).count == migrations.count, "migration versions are unique")
        self.schema = schema
        self.migrations = migrations.sorted { $0.version < $1.version }
    }

    /// Applies what is missing; returns the versions it applied.
    @discardableResult
    public func run(on client: PostgresClient, logger: Logger) async throws -> [Int] {
        try await client.withConnection { connection in
            let lockKey = "itour.migrations.\(schema)"
            _ = try await connection.query("SELECT pg_advisory_lock(hashtext(\(lockKey)))", logger: logger).collect()
            do {
                let applied = try await apply(on: connection, logger: logger)
                _ = try await connection.query("SELECT pg_advisory_unlock(hashtext(\(lockKey)))", logger: logger).collect()
                return applied
            } catch {
                _ = try? await connection.query("SELECT pg_advisory_unlock(hashtext(\(lockKey)))", logger: logger).collect()
                throw error
            }
        }
    }

    private func apply(on connection: PostgresConnection, logger: Logger) async throws -> [Int] {
        // Identifiers cannot be bound; `schema` is checked to be a plain identifier in init.
        try await execute("CREATE SCHEMA IF NOT EXISTS \(schema)", on: connection, logger: logger)
        try await execute("""
            CREATE TABLE IF NOT EXISTS \(schema).schema_migrations (
                version integer PRIMARY KEY,
                name text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now()
            )
            """, on: connection, logger: logger)
        var done = Set<Int>()
        for version in try await connection.fetch(
            PostgresQuery(unsafeSQL: "SELECT version FROM \(schema).schema_migrations"), as: Int.self, logger: logger) {
            done.insert(version)
        }
        var applied: [Int] = []
        for migration in migrations where !done.contains(migration.version) {
            logger.info("applying migration", metadata: ["schema": "\(schema)", "version": "\(migration.version)", "name": "\(migration.name)"])
            try await execute("BEGIN", on: connection, logger: logger)
            do {
                try await execute("SET LOCAL search_path TO \(schema)", on: connection, logger: logger)
                for statement in SQLScript.statements(migration.sql) {
                    try await execute(statement, on: connection, logger: logger)
                }
                _ = try await connection.query(
                    PostgresQuery(unsafeSQL: "INSERT INTO \(schema).schema_migrations (version, name) VALUES ($1, $2)",
                                  binds: try bindings(migration.version, migration.name)),
                    logger: logger).collect()
                try await execute("COMMIT", on: connection, logger: logger)
            } catch {
                try? await execute("ROLLBACK", on: connection, logger: logger)
                throw MigrationError(schema: schema, version: migration.version, name: migration.name, underlying: "\(String(reflecting: error))")
            }
            applied.append(migration.version)
        }
        return applied
    }

    private func execute(_ sql: String, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
    }

    private func bindings(_ version: Int, _ name: String) throws -> PostgresBindings {
        var binds = PostgresBindings()
        binds.append(version)
        binds.append(name)
        return binds
    }
}

public struct MigrationError: Error, CustomStringConvertible {
    public let schema: String
    public let version: Int
    public let name: String
    public let underlying: String

    public var description: String { "migration \(schema) v\(version) (\(name)) failed: \(underlying)" }
}
