import Foundation
import PostgresNIO
import Shared
import Testing
import TestSupport
@testable import Admin

@Suite("Admin schema", .stopsIfHung)
struct MigrationTests {
    @Test("the admin migrations apply to a fresh database, and again as a no-op")
    func migrations() async throws {
        let database = try await TestServices.freshDatabase()
        try await TestServices.withPostgres(database) { client in
            let applied = try await AdminMigrations.runner.run(on: client, logger: TestServices.logger)
            #expect(applied == AdminMigrations.runner.migrations.map(\.version))
            #expect(try await AdminMigrations.runner.run(on: client, logger: TestServices.logger).isEmpty)
        }
    }
}
