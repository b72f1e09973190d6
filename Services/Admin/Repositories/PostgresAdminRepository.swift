import Foundation
import Logging
import PostgresNIO
import Shared

/// The admin's SQL: every statement the admin runs is in this file, parameterised by `PostgresQuery`
/// interpolation.
struct PostgresAdminRepository: AdminRepository {
    let client: PostgresClient
    let logger: Logger

    // MARK: users

    private func users(_ query: PostgresQuery) async throws -> [AdminUser] {
        try await client.fetch(query, as: (UUID, String, String).self, logger: logger).map {
            AdminUser(id: $0.0, email: $0.1, role: Role(rawValue: $0.2) ?? .viewer)
        }
    }

    func users() async throws -> [AdminUser] {
        try await users("SELECT id, email, role FROM admin.users ORDER BY lower(email)")
    }

    func user(id: UUID) async throws -> AdminUser? {
        try await users("SELECT id, email, role FROM admin.users WHERE id = \(id)").first
    }

    func credentials(email: String) async throws -> (user: AdminUser, passwordHash: String)? {
        let rows = try await client.fetch("""
            SELECT id, email, role, password_hash FROM admin.users WHERE lower(email) = lower(\(email))
            """, as: (UUID, String, String, String).self, logger: logger)
        return rows.first.map { (AdminUser(id: $0.0, email: $0.1, role: Role(rawValue: $0.2) ?? .viewer), $0.3) }
    }

    func create(_ user: AdminUser, passwordHash: String) async throws -> Bool {
        try await createIfAbsent(user, passwordHash: passwordHash)
    }

    func createIfAbsent(_ user: AdminUser, passwordHash: String) async throws -> Bool {
        let inserted = try await client.fetch("""
            INSERT INTO admin.users (id, email, password_hash, role) VALUES (\(user.id), \(user.email), \(passwordHash), \(user.role.rawValue))
            ON CONFLICT DO NOTHING RETURNING id
            """, as: UUID.self, logger: logger)
        return !inserted.isEmpty
    }

    func setRole(_ role: Role, of id: UUID) async throws {
        try await client.query("UPDATE admin.users SET role = \(role.rawValue) WHERE id = \(id)", logger: logger)
        if role != .editor {
            try await client.query("DELETE FROM admin.tour_editors WHERE user_id = \(id)", logger: logger)
        }
    }

    func setPasswordHash(_ hash: String, of id: UUID) async throws {
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query("UPDATE admin.users SET password_hash = \(hash) WHERE id = \(id)", logger: logger)
            try await connection.query("DELETE FROM admin.sessions WHERE user_id = \(id)", logger: logger)
        }
    }

    func delete(id: UUID) async throws {
        try await client.query("DELETE FROM admin.users WHERE id = \(id)", logger: logger)
    }

    func ownerCount() async throws -> Int {
        try await client.fetch("SELECT count(*)::bigint FROM admin.users WHERE role = 'owner'", as: Int.self, logger: logger).first ?? 0
    }

    // MARK: sessions

    func createSession(tokenHash: String, userId: UUID, csrfToken: String, expiresAt: Date) async throws {
        try await client.query("""
            INSERT INTO admin.sessions (token_hash, user_id, csrf_token, expires_at) VALUES (\(tokenHash), \(userId), \(csrfToken), \(expiresAt))
            """, logger: logger)
    }

    func session(tokenHash: String, now: Date) async throws -> AdminSession? {
        let rows = try await client.fetch("""
            SELECT u.id, u.email, u.role, s.csrf_token FROM admin.sessions s JOIN admin.users u ON u.id = s.user_id
            WHERE s.token_hash = \(tokenHash) AND s.expires_at > \(now)
            """, as: (UUID, String, String, String).self, logger: logger)
        return rows.first.map { AdminSession(user: AdminUser(id: $0.0, email: $0.1, role: Role(rawValue: $0.2) ?? .viewer), csrfToken: $0.3) }
    }

    func deleteSession(tokenHash: String) async throws {
        try await client.query("DELETE FROM admin.sessions WHERE token_hash = \(tokenHash)", logger: logger)
    }

    func deleteExpiredSessions(now: Date) async throws {
        try await client.query("DELETE FROM admin.sessions WHERE expires_at <= \(now)", logger: logger)
    }

    // MARK: tour editors

    func editors(of tourId: UUID) async throws -> [AdminUser] {
        try await users("""
            SELECT u.id, u.email, u.role FROM admin.tour_editors e JOIN admin.users u ON u.id = e.user_id
            WHERE e.tour_id = \(tourId) ORDER BY lower(u.email)
            """)
    }

    func tours(editedBy userId: UUID) async throws -> Set<UUID> {
        Set(try await client.fetch("SELECT tour_id FROM admin.tour_editors WHERE user_id = \(userId)", as: UUID.self, logger: logger))
    }

    func assign(userId: UUID, to tourId: UUID) async throws {
        try await client.query("""
            INSERT INTO admin.tour_editors (tour_id, user_id) VALUES (\(tourId), \(userId)) ON CONFLICT DO NOTHING
            """, logger: logger)
    }

    func unassign(userId: UUID, from tourId: UUID) async throws {
        try await client.query("DELETE FROM admin.tour_editors WHERE tour_id = \(tourId) AND user_id = \(userId)", logger: logger)
    }

    func removeTour(_ tourId: UUID) async throws {
        try await client.query("DELETE FROM admin.tour_editors WHERE tour_id = \(tourId)", logger: logger)
    }

    // MARK: login throttling

    func failures(key: String) async throws -> LoginFailures? {
        try await client.fetch("""
            SELECT failures, last_failure_at, locked_until FROM admin.login_failures WHERE key = \(key)
            """, as: (Int, Date, Date?).self, logger: logger).first.map { LoginFailures(count: $0.0, lastFailureAt: $0.1, lockedUntil: $0.2) }
    }

    func updateFailures<Result: Sendable>(keys: [String],
                                          _ update: @escaping @Sendable ([String: LoginFailures]) -> (changes: [String: LoginFailures?], result: Result))
        async throws -> Result {
        let logger = logger
        // Locked in one order, so two attempts at the same keys never wait on each other crosswise.
        let keys = Set(keys).sorted()
        return try await client.withTransaction(logger: logger) { connection in
            var current: [String: LoginFailures] = [:]
            for key in keys {
                try await connection.query("""
                    INSERT INTO admin.login_failures (key, failures, last_failure_at) VALUES (\(key), 0, now()) ON CONFLICT (key) DO NOTHING
                    """, logger: logger)
                let rows = try await connection.fetch("""
                    SELECT failures, last_failure_at, locked_until FROM admin.login_failures WHERE key = \(key) FOR UPDATE
                    """, as: (Int, Date, Date?).self, logger: logger)
                if let row = rows.first, row.0 > 0 { current[key] = LoginFailures(count: row.0, lastFailureAt: row.1, lockedUntil: row.2) }
            }
            let (changes, result) = update(current)
            for key in keys {
                guard let change = changes[key] else { continue }
                if let failures = change {
                    try await connection.query("""
                        UPDATE admin.login_failures SET failures = \(failures.count), last_failure_at = \(failures.lastFailureAt),
                            locked_until = \(failures.lockedUntil)
                        WHERE key = \(key)
                        """, logger: logger)
                } else {
                    try await connection.query("DELETE FROM admin.login_failures WHERE key = \(key)", logger: logger)
                }
            }
            return result
        }
    }

    func deleteQuietFailures(before: Date, now: Date) async throws {
        try await client.query("""
            DELETE FROM admin.login_failures WHERE last_failure_at < \(before) AND (locked_until IS NULL OR locked_until <= \(now))
            """, logger: logger)
    }

    // MARK: import jobs

    func createJob(_ job: ImportJob, owner: String, lease: Duration) async throws {
        let report = try String(decoding: JSONCoding.encoder.encode(job.report), as: UTF8.self)
        try await client.query("""
            INSERT INTO admin.import_jobs (id, user_id, file_name, skip_bad_rows, phase, total_rows, message, report, created_at, updated_at,
                                           owner, lease_expires_at)
            VALUES (\(job.id), \(job.userId), \(job.fileName), \(job.skipBadRows), \(job.phase.rawValue), \(job.totalRows), \(job.message),
                    \(report)::jsonb, \(job.createdAt), \(job.createdAt), \(owner), now() + make_interval(secs => \(lease.seconds)))
            """, logger: logger)
    }

    func updateJob(id: UUID, phase: ImportJob.Phase, message: String?, report: [CatalogBatchRowResult]?) async throws {
        let reportText = try report.map { String(decoding: try JSONCoding.encoder.encode($0), as: UTF8.self) }
        try await client.query("""
            UPDATE admin.import_jobs SET phase = \(phase.rawValue), message = \(message),
                report = COALESCE(\(reportText)::jsonb, report), updated_at = now()
            WHERE id = \(id)
            """, logger: logger)
    }

    func job(id: UUID) async throws -> ImportJob? {
        try await jobs("""
            SELECT id, user_id, file_name, skip_bad_rows, phase, total_rows, message, report::text, created_at
            FROM admin.import_jobs WHERE id = \(id)
            """).first
    }

    func recentJobs(limit: Int) async throws -> [ImportJob] {
        try await jobs("""
            SELECT id, user_id, file_name, skip_bad_rows, phase, total_rows, message, report::text, created_at
            FROM admin.import_jobs ORDER BY created_at DESC LIMIT \(limit)
            """)
    }

    func renewLeases(owner: String, lease: Duration) async throws -> Int {
        try await client.fetch("""
            UPDATE admin.import_jobs SET lease_expires_at = now() + make_interval(secs => \(lease.seconds))
            WHERE owner = \(owner) AND phase NOT IN ('done', 'failed') RETURNING id
            """, as: UUID.self, logger: logger).count
    }

    func failExpiredJobs(notSent: String, maybeApplied: String) async throws -> [UUID] {
        // Postgres's clock decides, for every replica alike. An UPDATE re-reads a row it waited for, so a renewal
        // that commits first keeps the import, and two replicas sweeping at once fail it once. A row without a
        // lease (an admin of the previous version, mid-upgrade) is left 5 minutes after its last change: such an
        // admin waits up to 2 minutes for catalog's answer and never renews. The owner's own later update still wins
        // (updateJob): what it learned from catalog is better than this guess.
        try await client.fetch("""
            UPDATE admin.import_jobs
            SET phase = 'failed', message = CASE WHEN phase = 'applying' THEN \(maybeApplied) ELSE \(notSent) END, updated_at = now()
            WHERE phase NOT IN ('done', 'failed') AND COALESCE(lease_expires_at, updated_at + interval '5 minutes') < now()
            RETURNING id
            """, as: UUID.self, logger: logger)
    }

    private func jobs(_ query: PostgresQuery) async throws -> [ImportJob] {
        try await client.fetch(query, as: (UUID, UUID, String, Bool, String, Int, String?, String?, Date).self, logger: logger).map { row in
            let report = row.7.flatMap { try? JSONCoding.decoder.decode([CatalogBatchRowResult].self, from: Data($0.utf8)) } ?? []
            return ImportJob(id: row.0, userId: row.1, fileName: row.2, skipBadRows: row.3, phase: ImportJob.Phase(rawValue: row.4) ?? .failed,
                             totalRows: row.5, message: row.6, report: report, createdAt: row.8)
        }
    }
}
