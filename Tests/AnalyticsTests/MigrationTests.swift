import Foundation
import PostgresNIO
import Shared
import Testing
import TestSupport
@testable import Analytics

@Suite("Analytics schema")
struct MigrationTests {
    @Test("the analytics migrations apply to a fresh database, and again as a no-op")
    func migrations() async throws {
        let database = try await TestServices.freshDatabase()
        try await TestServices.withPostgres(database) { client in
            let applied = try await AnalyticsMigrations.runner.run(on: client, logger: TestServices.logger)
            #expect(applied == AnalyticsMigrations.runner.migrations.map(\.version))
            #expect(try await AnalyticsMigrations.runner.run(on: client, logger: TestServices.logger).isEmpty)
        }
    }
}
