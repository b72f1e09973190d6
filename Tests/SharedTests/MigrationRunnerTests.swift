import Foundation
import PostgresNIO
import Shared
import Testing
import TestSupport

@Suite("Migration runner", .stopsIfHung)
struct MigrationRunnerTests {
    let logger = TestServices.logger

    static let migrations = [
        Migration(1, "items", "CREATE TABLE items (id integer PRIMARY KEY); INSERT INTO items VALUES (1);"),
        Migration(2, "more items", "INSERT INTO items VALUES (2);"),
    ]

    @Test("applies pending migrations in order, once")
    func appliesOnce() async throws {
        let database = try await TestServices.freshDatabase()
        try await TestServices.withPostgres(database) { client in
            let runner = MigrationRunner(schema: "sample", migrations: Self.migrations)
            #expect(try await runner.run(on: client, logger: logger) == [1, 2])
            #expect(try await runner.run(on: client, logger: logger) == [])
            let items = try await client.fetch("SELECT id FROM sample.items ORDER BY id", as: Int.self, logger: logger)
            #expect(items == [1, 2])
            let extended = MigrationRunner(schema: "sample", migrations: Self.migrations + [Migration(3, "third", "INSERT INTO items VALUES (3);")])
            #expect(try await extended.run(on: client, logger: logger) == [3])
        }
    }

    @Test("two instances starting together take turns under the advisory lock")
    func concurrentRunners() async throws {
        let database = try await TestServices.freshDatabase()
        // Two separate clients, as two service instances would have.
        let applied = try await withThrowingTaskGroup(of: [Int].self) { group in
            for _ in 0..<2 {
                group.addTask {
                    try await TestServices.withPostgres(database) { client in
                        try await MigrationRunner(schema: "race", migrations: Self.migrations).run(on: client, logger: logger)
                    }
                }
            }
            return try await group.reduce(into: [[Int]]()) { $0.append($1) }
        }
        // One applied both, the other found nothing to do; CREATE TABLE would have failed if both had run it.
        #expect(applied.sorted { $0.count < $1.count } == [[], [1, 2]])
    }

    @Test("a failing migration rolls back entirely and is not recorded")
    func failureRollsBack() async throws {
        let database = try await TestServices.freshDatabase()
        try await TestServices.withPostgres(database) { client in
            let broken = MigrationRunner(schema: "broken", migrations: [
                Migration(1, "half", "CREATE TABLE half (id integer); INSERT INTO no_such_table VALUES (1);"),
            ])
            await #expect(throws: MigrationError.self) { try await broken.run(on: client, logger: logger) }
            let tables = try await client.fetch(
                "SELECT count(*)::bigint FROM information_schema.tables WHERE table_schema = 'broken' AND table_name = 'half'", as: Int.self, logger: logger)
            #expect(tables == [0])
            let versions = try await client.fetch("SELECT count(*)::bigint FROM broken.schema_migrations", as: Int.self, logger: logger)
            #expect(versions == [0])
        }
    }
}

@Suite("SQL script splitting", .stopsIfHung)
struct SQLScriptTests {
    @Test("splits on semicolons outside quotes, dollar quotes and comments")
    func split() {
        let script = """
            CREATE TABLE a (note text DEFAULT 'x;y'); -- a comment; still a comment
            CREATE FUNCTION f() RETURNS int AS $$ SELECT 1; $$ LANGUAGE sql;
            INSERT INTO "odd;name" VALUES ('it''s; fine');
            -- only a comment;
            """
        #expect(SQLScript.statements(script) == [
            "CREATE TABLE a (note text DEFAULT 'x;y')",
            "-- a comment; still a comment\nCREATE FUNCTION f() RETURNS int AS $$ SELECT 1; $$ LANGUAGE sql",
            #"INSERT INTO "odd;name" VALUES ('it''s; fine')"#,
        ])
    }
}
