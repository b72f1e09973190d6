import Foundation
import HummingbirdTesting
import PostgresNIO
import Shared
import Testing
import TestSupport
@testable import Admin

/// Imports across admin replicas (issue 44): an import is claimed by the admin running it, and only an import
/// whose claim expired is failed, at an admin's start or by any admin's periodic sweep. Real Postgres throughout.
@Suite("Import leases", .stopsIfHung)
struct ImportLeaseTests {
    /// A fresh, migrated admin schema with one owner (imports belong to a user).
    private static func prepared(_ body: @Sendable (PostgresAdminRepository, PostgresClient, UUID) async throws -> Void) async throws -> DatabaseSettings {
        let database = try await TestServices.freshDatabase()
        try await TestServices.withPostgres(database) { client in
            try await AdminMigrations.runner.run(on: client, logger: TestServices.logger)
            let repository = PostgresAdminRepository(client: client, logger: TestServices.logger)
            let user = AdminUser(id: UUID.random(), email: AdminHarness.ownerEmail, role: .owner)
            _ = try await repository.createIfAbsent(user, passwordHash: try await PasswordHasher(cost: 4).hash(AdminHarness.ownerPassword))
            try await body(repository, client, user.id)
        }
        return database
    }

    private static func job(_ userId: UUID, _ phase: ImportJob.Phase, _ name: String) -> ImportJob {
        ImportJob(id: UUID.random(), userId: userId, fileName: name, skipBadRows: false, phase: phase, totalRows: 3, message: nil,
                  report: [], createdAt: Date())
    }

    private static func expire(_ id: UUID, _ client: PostgresClient) async throws {
        try await client.query("UPDATE admin.import_jobs SET lease_expires_at = now() - interval '1 second' WHERE id = \(id)",
                               logger: TestServices.logger)
    }

    private static func leaseExpiry(_ id: UUID, _ client: PostgresClient) async throws -> Date? {
        try await client.fetch("SELECT lease_expires_at FROM admin.import_jobs WHERE id = \(id)", as: Date?.self,
                               logger: TestServices.logger).first ?? nil
    }

    @Test("a starting admin leaves another replica's leased imports running and fails those whose lease expired, saying so on the page")
    func startAndSweep() async throws {
        let live = Self.job(UUID.random(), .applying, "live.csv")
        let expiredApplying = Self.job(UUID.random(), .applying, "applying.csv")
        let expiredReading = Self.job(UUID.random(), .reading, "reading.csv")
        let done = Self.job(UUID.random(), .done, "done.csv")
        // Rows of an admin of the previous version (no owner, no lease): one it is still running, one long silent.
        let (legacyRecent, legacyOld) = (UUID.random(), UUID.random())
        let database = try await Self.prepared { repository, client, userId in
            func mine(_ job: ImportJob) -> ImportJob { var job = job; job.userId = userId; return job }
            try await repository.createJob(mine(live), owner: "other-host/1", lease: .seconds(600))
            for job in [expiredApplying, expiredReading, done] {
                try await repository.createJob(mine(job), owner: "gone-host/2", lease: .seconds(600))
                try await Self.expire(job.id, client)
            }
            try await client.query("""
                INSERT INTO admin.import_jobs (id, user_id, file_name, skip_bad_rows, phase, updated_at)
                VALUES (\(legacyRecent), \(userId), 'legacy-recent.csv', false, 'applying', now()),
                       (\(legacyOld), \(userId), 'legacy-old.csv', false, 'applying', now() - interval '10 minutes')
                """, logger: TestServices.logger)
        }

        // The second replica: its start sweeps once; its heartbeat (1 s) sweeps again and again.
        let admin = try Admin.buildApplication(settings: TestServices.serviceSettings(name: "admin", database: database, kafka: TestServices.kafka()),
                                               admin: AdminHarness.settings(["ADMIN_IMPORT_LEASE_SECONDS": "2", "ADMIN_IMPORT_HEARTBEAT_SECONDS": "1"]))
        try await admin.test(.router) { client in
            let web = WebClient(client: client)
            #expect(try await TestServices.eventually(timeout: .seconds(30)) { try await web.get("/login").status == .ok })
            try await TestServices.withPostgres(database) { postgres in
                let repository = PostgresAdminRepository(client: postgres, logger: TestServices.logger)
                // Served pages come after the start's sweep.
                #expect(try await repository.job(id: expiredApplying.id)?.phase == .failed)
                #expect(try await repository.job(id: expiredApplying.id)?.message == ImportLeaseKeeper.maybeApplied)
                #expect(try await repository.job(id: expiredReading.id)?.phase == .failed)
                #expect(try await repository.job(id: expiredReading.id)?.message == ImportLeaseKeeper.notSent)
                #expect(try await repository.job(id: done.id)?.phase == .done)
                #expect(try await repository.job(id: legacyOld)?.phase == .failed)

                // Several of this replica's sweeps later, the other replica's imports still run.
                try await Task.sleep(for: .seconds(3))
                #expect(try await repository.job(id: live.id)?.phase == .applying)
                #expect(try await repository.job(id: live.id)?.message == nil)
                #expect(try await repository.job(id: legacyRecent)?.phase == .applying)

                // The other replica stops renewing: a periodic sweep, not a start, fails its import.
                try await Self.expire(live.id, postgres)
                #expect(try await TestServices.eventually(timeout: .seconds(30)) {
                    try await repository.job(id: live.id)?.phase == .failed
                })
                #expect(try await repository.job(id: live.id)?.message == ImportLeaseKeeper.maybeApplied)
            }

            #expect(try await web.login().status == .seeOther)
            let page = try await web.get("/import/\(expiredApplying.id.uuidString.lowercased())")
            #expect(page.status == .ok)
            #expect(page.contains("Interrupted: the admin server running this import stopped while catalog was applying it, and imports are not resumed."))
            #expect(page.contains("check the content before importing again"))
            #expect(!page.contains("refreshes itself"))
        }
    }

    @Test("the heartbeat renews its own imports' leases, so another replica's sweeps leave them alone until it stops")
    func heartbeatRenews() async throws {
        let running = Self.job(UUID.random(), .applying, "running.csv")
        let queued = Self.job(UUID.random(), .reading, "queued.csv")
        // A lease of many heartbeats: on a loaded machine renewals can come many seconds late (two CI runs' did, with 3 s
        // and 8 s leases). Wall-clock bounds are generous for the same reason; what is asserted is the order of things.
        let first = ImportLease(owner: ImportLease.ownerId(), duration: .seconds(20), heartbeat: .seconds(1))
        let second = ImportLease(owner: ImportLease.ownerId(), duration: .seconds(20), heartbeat: .seconds(1))
        #expect(first.owner != second.owner)
        _ = try await Self.prepared { repository, client, userId in
            for var job in [running, queued] {
                job.userId = userId
                try await repository.createJob(job, owner: first.owner, lease: first.duration)
            }
            let created = try #require(try await Self.leaseExpiry(running.id, client))
            let owner = ImportLeaseKeeper(jobs: repository, lease: first, logger: TestServices.logger)
            let other = ImportLeaseKeeper(jobs: repository, lease: second, logger: TestServices.logger)
            try await TestServices.withServices([other]) {
                try await TestServices.withServices([owner]) {
                    // Until renewals have carried both leases a whole lease past their first expiry: longer than the lease,
                    // so without them both would have expired and the other replica failed them.
                    let carried = try await TestServices.eventually(timeout: .seconds(180)) {
                        for id in [running.id, queued.id] {
                            guard let renewed = try await Self.leaseExpiry(id, client), renewed > created.addingTimeInterval(20) else { return false }
                        }
                        return true
                    }
                    #expect(carried, "the leases were not renewed past their first expiry")
                    for id in [running.id, queued.id] {
                        #expect(try await repository.job(id: id)?.phase != .failed)
                    }
                }
                // The owner stopped: its leases run out and the other replica's sweep fails both imports.
                #expect(try await TestServices.eventually(timeout: .seconds(120)) {
                    let phases = [try await repository.job(id: running.id)?.phase, try await repository.job(id: queued.id)?.phase]
                    return phases == [.failed, .failed]
                })
                #expect(try await repository.job(id: running.id)?.message == ImportLeaseKeeper.maybeApplied)
                #expect(try await repository.job(id: queued.id)?.message == ImportLeaseKeeper.notSent)
            }
        }
    }
}
