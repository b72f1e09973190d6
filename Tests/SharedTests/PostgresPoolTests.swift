import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import Testing
import TestSupport
@testable import Shared

@Suite("Postgres pool as a service")
struct PostgresPoolTests {
    /// A service that writes in transactions of several statements, as analytics' ingest does, until it is
    /// cancelled or a statement fails; records that it got out of the loop.
    struct Transactions: Service {
        let client: PostgresClient
        let started: Flag
        let answered: Flag

        func run() async throws {
            started.value = true
            do {
                while !Task.isCancelled {
                    try await client.withTransaction(logger: TestServices.logger) { connection in
                        for _ in 0..<20 { try await connection.query("SELECT pg_sleep(0.01)", logger: TestServices.logger) }
                    }
                }
            } catch {}
            answered.value = true
        }
    }

    /// With a raw `PostgresClient` in its place, the group did not end in 4 of 6 runs: cancelled together with the
    /// writer, the client closed under a transaction in flight and never answered it (the hang that held a failing
    /// test's suite until CI's time limit). Three rounds, so that a regression is all but sure to show.
    @Test("a cancelled group ends: the pool answers the transaction in flight before it closes", arguments: 1...3)
    func cancelledGroupEnds(round: Int) async throws {
        let client = DatabaseSettings(port: TestServices.postgresPort, database: "itour", maximumConnections: 1)
            .makeClient(logger: TestServices.logger)
        let started = Flag(false), answered = Flag(false), ended = Flag(false)
        let group = ServiceGroup(configuration: .init(services: [.init(service: PostgresPool(client)),
                                                                 .init(service: Transactions(client: client, started: started, answered: answered))],
                                                      logger: TestServices.logger))
        let running = Task {
            try? await group.run()
            ended.value = true
        }
        _ = try await TestServices.eventually(timeout: .seconds(30), interval: .milliseconds(10)) { started.value }
        try await Task.sleep(for: .milliseconds(300))
        running.cancel()
        let groupEnded = try await TestServices.eventually(timeout: .seconds(30), interval: .milliseconds(50)) { ended.value }
        #expect(groupEnded, "the group did not end within 30 s of being cancelled")
        #expect(answered.value, "the writer got out of its loop")
    }
}
