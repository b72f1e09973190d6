import Foundation
import PostgresNIO
import Shared
import Testing
import TestSupport
@testable import Catalog

/// How the command consumer meets a failure (DESIGN.md, "Dead letters"), with errors a real Postgres gives.
@Suite("Failure policy", .stopsIfHung)
struct FailurePolicyTests {
    struct CatalogFault: Error, CustomStringConvertible {
        var description: String { "the staged transaction cannot read that" }
    }

    /// The error Postgres throws for `sql`.
    static func error(of sql: String) async throws -> any Error {
        try await TestServices.withPostgres(DatabaseSettings(port: TestServices.postgresPort)) { client in
            do {
                _ = try await client.query(PostgresQuery(unsafeSQL: sql), logger: TestServices.logger).collect()
            } catch {
                return error
            }
            Issue.record("\(sql) did not fail")
            return CatalogFault()
        }
    }

    @Test("content the database refuses is refused at once; its transient failures are retried and reset the count of catalog's own")
    func verdicts() async throws {
        let refused = try await Self.error(of: "SELECT 1 / 0")
        let transient = try await Self.error(of: "SELECT * FROM no_such_table_here")
        var policy = FailurePolicy()
        guard case .refuse(let reason) = try policy.verdict(refused) else { Issue.record("division by zero was retried"); return }
        #expect(reason.hasPrefix("catalog could not store this command") && reason.contains("SQLSTATE 22012"), "\(reason)")

        var faults = FailurePolicy()
        for _ in 1..<CommandConsumer.programErrorAttempts - 1 {
            guard case .retry = try faults.verdict(CatalogFault()) else { Issue.record("refused too soon"); return }
        }
        // A database failure between them: catalog's own errors count again from nothing.
        guard case .retry = try faults.verdict(transient) else { Issue.record("a missing table (class 42) was refused"); return }
        for _ in 1..<CommandConsumer.programErrorAttempts {
            guard case .retry = try faults.verdict(CatalogFault()) else { Issue.record("the database's failure did not reset the count"); return }
        }
        guard case .refuse(let fault) = try faults.verdict(CatalogFault()) else { Issue.record("catalog's own fault retried for ever"); return }
        #expect(fault == "catalog could not apply this command: the staged transaction cannot read that")
        #expect(faults.attempt == 2 * CommandConsumer.programErrorAttempts - 2)

        var transients = FailurePolicy()
        for _ in 0..<3 * CommandConsumer.programErrorAttempts {
            guard case .retry = try transients.verdict(transient) else { Issue.record("a transient failure was refused"); return }
        }
        var cancelled = FailurePolicy()
        #expect(throws: CancellationError.self) { try cancelled.verdict(CancellationError()) }
    }
}
