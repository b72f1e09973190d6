import Foundation
import Logging
import PostgresNIO
import Shared

/// The pruning's SQL (docs/ANALYTICS.md "Retention"). Every batch is one transaction that first takes the ingest lock
/// shared (as every ingest batch does: `replay --activate` and an erasure, which take it exclusively, never see a batch
/// half done), then picks at most `batchSize` rows with `FOR UPDATE SKIP LOCKED` (rows a batch being counted holds are
/// left for the next pass, so pruning never waits on the ingest and cannot deadlock with it) and deletes or trims them.
/// Row-picking by age uses the BRIN indexes of migration 13.
struct PostgresPruningStore: Sendable {
    let client: PostgresClient
    let schema: AnalyticsSchema
    let logger: Logger
    var batchSize = 5_000

    /// One pass over every table; nil when another replica holds the pass (it prunes the same rows). Returns rows
    /// pruned per table (`device_activity` and `tourist_activity`: rows deleted plus rows whose days were cut).
    func pass(_ policy: RetentionPolicy, now: Date) async throws -> [String: Int]? {
        let lockKey = "itour.analytics.prune.\(schema.name)"
        let logger = self.logger
        return try await client.withConnection { connection -> [String: Int]? in
            let locked = try await connection.fetch("SELECT pg_try_advisory_lock(hashtext(\(lockKey)))", as: Bool.self, logger: logger)
            guard locked.first == true else { return nil }
            do {
                let pruned = try await prune(policy, now: now, on: connection)
                try await connection.query("SELECT pg_advisory_unlock(hashtext(\(lockKey)))", logger: logger)
                return pruned
            } catch {
                _ = try? await connection.query("SELECT pg_advisory_unlock(hashtext(\(lockKey)))", logger: logger)
                throw error
            }
        }
    }

    private func prune(_ policy: RetentionPolicy, now: Date, on connection: PostgresConnection) async throws -> [String: Int] {
        let s = schema.name
        let first = policy.firstEventDay(now: now)
        let firstDay = first.description
        let firstInstant = first.start
        let firstDedupeDay = policy.firstDedupeDay(now: now).description
        var pruned: [String: Int] = [:]

        /// Runs `statement` (one batch, answering the rows it pruned) until a batch prunes fewer than `batchSize`.
        func drain(_ table: String, _ statement: @escaping @Sendable () -> PostgresQuery) async throws {
            var total = 0
            while true {
                let rows = try await connection.withTransaction(logger: logger) { transaction in
                    try await transaction.query("SELECT pg_advisory_xact_lock_shared(hashtext(\(AnalyticsSchema.ingestLockKey)))", logger: logger)
                    return try await transaction.fetch(statement(), as: Int.self, logger: logger).first ?? 0
                }
                total += rows
                if rows < batchSize { break }
            }
            pruned[table] = total
        }
        let n = batchSize

        try await drain("processed_events") {
            """
            WITH gone AS (
                DELETE FROM \(unescaped: s).processed_events WHERE ctid = ANY(ARRAY(
                    SELECT ctid FROM \(unescaped: s).processed_events WHERE counted_on < \(firstDedupeDay)::date LIMIT \(n) FOR UPDATE SKIP LOCKED))
                RETURNING 1
            )
            SELECT count(*)::bigint FROM gone
            """
        }
        try await drain("tour_marks") {
            """
            WITH gone AS (
                DELETE FROM \(unescaped: s).tour_marks WHERE ctid = ANY(ARRAY(
                    SELECT ctid FROM \(unescaped: s).tour_marks WHERE occurred_at < \(firstInstant) LIMIT \(n) FOR UPDATE SKIP LOCKED))
                RETURNING 1
            )
            SELECT count(*)::bigint FROM gone
            """
        }
        // A tour's hour × weekday report reads its credited arrivals from untoured_events: they move into its hour_visits
        // as they go (rows in key order, as the ingest writes them), so the sum stays.
        try await drain("untoured_events") {
            """
            WITH gone AS (
                DELETE FROM \(unescaped: s).untoured_events WHERE ctid = ANY(ARRAY(
                    SELECT ctid FROM \(unescaped: s).untoured_events WHERE occurred_at < \(firstInstant) LIMIT \(n) FOR UPDATE SKIP LOCKED))
                RETURNING type, occurred_at, tour_id
            ), folded AS (
                INSERT INTO \(unescaped: s).hour_visits AS h (scope, day, hour, visits)
                SELECT tour_id, (occurred_at AT TIME ZONE 'UTC')::date, extract(hour FROM occurred_at AT TIME ZONE 'UTC')::smallint, count(*)
                FROM gone WHERE tour_id IS NOT NULL AND type = 'poi.arrived'
                GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
                ON CONFLICT (scope, day, hour) DO UPDATE SET visits = h.visits + EXCLUDED.visits
            )
            SELECT count(*)::bigint FROM gone
            """
        }
        for table in ["device_days", "stop_visits", "credited_members"] {
            try await drain(table) {
                """
                WITH gone AS (
                    DELETE FROM \(unescaped: s).\(unescaped: table) WHERE ctid = ANY(ARRAY(
                        SELECT ctid FROM \(unescaped: s).\(unescaped: table) WHERE day < \(firstDay)::date LIMIT \(n) FOR UPDATE SKIP LOCKED))
                    RETURNING 1
                )
                SELECT count(*)::bigint FROM gone
                """
            }
        }
        pruned["device_activity"] = try await trimActivity("device_activity", column: "device_id", before: firstDay, on: connection)
        pruned["tourist_activity"] = try await trimActivity("tourist_activity", column: "tourist_id", before: firstDay, on: connection)
        return pruned
    }

    /// Cuts the days before `first` off every row of an activity table, walking it in key order a batch at a time; a row
    /// left with no day is deleted, and for a device's all-events row, so is its registration (`devices`): a device with
    /// no activity kept appears in no report.
    private func trimActivity(_ table: String, column: String, before first: String, on connection: PostgresConnection) async throws -> Int {
        let s = schema.name, n = batchSize, all = AggregateDelta.Scope.all
        let registrations = table == "device_activity"
            ? ", registrations AS (DELETE FROM \(s).devices d USING gone g WHERE g.scope = '\(all.uuidString.lowercased())' AND d.device_id = g.member)"
            : ""
        let zero = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        var after: (UUID, UUID?) = (zero, nil)
        var total = 0
        while true {
            let position = after
            let rows = try await connection.withTransaction(logger: logger) { transaction in
                try await transaction.query("SELECT pg_advisory_xact_lock_shared(hashtext(\(AnalyticsSchema.ingestLockKey)))", logger: logger)
                return try await transaction.fetch("""
                    WITH chunk AS (
                        SELECT scope, \(unescaped: column) AS member, days FROM \(unescaped: s).\(unescaped: table)
                        WHERE (scope, \(unescaped: column)) > (\(position.0), \(position.1 ?? zero))
                           OR (\(position.1 == nil) AND scope = \(position.0))
                        ORDER BY scope, \(unescaped: column) LIMIT \(n) FOR UPDATE SKIP LOCKED
                    ), gone AS (
                        DELETE FROM \(unescaped: s).\(unescaped: table) a USING chunk c
                        WHERE a.scope = c.scope AND a.\(unescaped: column) = c.member AND upper(c.days) <= \(first)::date
                        RETURNING a.scope, a.\(unescaped: column) AS member
                    ), trimmed AS (
                        UPDATE \(unescaped: s).\(unescaped: table) a SET days = a.days - datemultirange(daterange(NULL, \(first)::date))
                        FROM chunk c
                        WHERE a.scope = c.scope AND a.\(unescaped: column) = c.member AND lower(c.days) < \(first)::date AND upper(c.days) > \(first)::date
                        RETURNING 1
                    )\(unescaped: registrations), last AS (
                        SELECT scope, member FROM chunk ORDER BY scope DESC, member DESC LIMIT 1
                    )
                    SELECT (SELECT count(*) FROM chunk)::bigint, ((SELECT count(*) FROM gone) + (SELECT count(*) FROM trimmed))::bigint,
                           (SELECT scope FROM last), (SELECT member FROM last)
                    """, as: (Int, Int, UUID?, UUID?).self, logger: logger).first
            }
            guard let (walked, changed, scope, member) = rows else { break }
            total += changed
            guard walked == n, let scope, let member else { break }
            after = (scope, member)
        }
        return total
    }
}
