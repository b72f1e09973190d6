import Foundation
import Logging
import PostgresNIO
import Shared

/// The pruning's SQL (docs/ANALYTICS.md "Retention"). Every batch is one transaction that first takes the ingest lock
/// shared (as every ingest batch does: `replay --activate` and an erasure, which take it exclusively, never see a batch
/// half done), then picks about `batchSize` rows with `FOR UPDATE SKIP LOCKED` (rows a batch being counted holds are
/// left for the next pass, so pruning never waits on the ingest and cannot deadlock with it) and deletes or trims them.
/// Which block ranges hold old rows comes from the BRIN indexes of migration 13; the day pairs' rows at 0 (deleted
/// whatever their day) are found by a scan of their table, once a pass.
struct PostgresPruningStore: Sendable {
    let client: PostgresClient
    let schema: AnalyticsSchema
    let logger: Logger
    var batchSize = 5_000

    /// One pass over every table; nil when another replica holds the pass (it prunes the same rows). Returns rows
    /// pruned per table (`device_activity` and `tourist_activity`: rows deleted plus rows whose days were cut).
    func pass(_ policy: RetentionPolicy, now: Date) async throws -> [String: Int]? {
        try await pass(now: now) { policy }
    }

    /// The same, with the policy asked for only once the pass is this replica's: what it costs (the broker asked for
    /// the topic's retention and its oldest message) is paid by one replica an hour, not by every one.
    func pass(now: Date, policy: @Sendable () async -> RetentionPolicy) async throws -> [String: Int]? {
        let lockKey = "itour.analytics.prune.\(schema.name)"
        let logger = self.logger
        return try await client.withConnection { connection -> [String: Int]? in
            let locked = try await connection.fetch("SELECT pg_try_advisory_lock(hashtext(\(lockKey)))", as: Bool.self, logger: logger)
            guard locked.first == true else { return nil }
            do {
                let pruned = try await prune(await policy(), now: now, on: connection)
                try await connection.query("SELECT pg_advisory_unlock(hashtext(\(lockKey)))", logger: logger)
                return pruned
            } catch {
                _ = try? await connection.query("SELECT pg_advisory_unlock(hashtext(\(lockKey)))", logger: logger)
                throw error
            }
        }
    }

    private func prune(_ policy: RetentionPolicy, now: Date, on connection: PostgresConnection) async throws -> [String: Int] {
        let firstDay = policy.firstEventDay(now: now).description
        var pruned: [String: Int] = [:]
        // No window known (the broker could not say how long the topic keeps messages): every id stays this pass.
        if let firstDedupeDay = policy.firstDedupeDay(now: now)?.description {
            pruned["processed_events"] = try await drain("processed_events", "counted_on", before: firstDedupeDay, on: connection)
        }
        pruned["tour_marks"] = try await drain("tour_marks", "occurred_at", before: firstDay, instant: true, on: connection)
        // A tour's credited arrivals are in its hour_visits already (the ingest adds them as it credits them).
        pruned["untoured_events"] = try await drain("untoured_events", "occurred_at", before: firstDay, instant: true, on: connection)
        for table in ["device_days", "stop_visits", "credited_members"] {
            pruned[table] = try await drain(table, "day", before: firstDay, on: connection)
        }
        pruned["device_activity"] = try await trimActivity("device_activity", column: "device_id", before: firstDay, on: connection)
        pruned["tourist_activity"] = try await trimActivity("tourist_activity", column: "tourist_id", before: firstDay, on: connection)
        pruned["funnel_activity"] = try await trimFunnel(before: firstDay, on: connection)
        // Day pairs no member has any more (a late event, a credit or a newer registration moved them away): a row at 0
        // adds nothing to the sums the reports read, so it goes, whatever its day. Safe with the ingest's and the erasure's
        // upserts (`ON CONFLICT ... DO UPDATE SET n = p.n + EXCLUDED.n`): a row is deleted only while this batch holds it
        // and it is still 0 (FOR UPDATE re-reads a row changed since the batch's snapshot and skips it unless still 0; a row
        // an upsert holds is skipped), and an upsert that meets a row being deleted waits for the delete, then inserts its
        // delta as a new row, which is 0 + delta: every sum stays what it was.
        for (table, column) in [("active_day_pairs", "members"), ("funnel_day_pairs", "devices"), ("registration_day_pairs", "members")] {
            pruned[table] = try await drain(table, where: "\(column) = $1", 0, on: connection)
        }
        return pruned
    }

    /// Deletes the rows of `table` whose `column` is before the UTC day `day` (its midnight when `instant`); the BRIN index
    /// lists which block ranges hold such rows.
    private func drain(_ table: String, _ column: String, before day: String, instant: Bool = false,
                       on connection: PostgresConnection) async throws -> Int {
        let cutoff = instant ? "($1::date::timestamp AT TIME ZONE 'UTC')" : "$1::date"
        return try await drain(table, where: "\(column) < \(cutoff)", day, on: connection)
    }

    /// Deletes the rows of `table` that meet `condition` (SQL, `value` its `$1`), a range of heap blocks per batch: one scan
    /// (through an index the condition can use, else of the table) lists once which ranges hold such rows, then each batch
    /// reads only its own blocks (a TID range scan), so no batch reads again the rows an earlier one deleted. A range holds
    /// about `batchSize` rows (the table's rows per block from its statistics). Returns the rows deleted.
    private func drain(_ table: String, where condition: String, _ value: some PostgresNonThrowingEncodable & Sendable,
                       on connection: PostgresConnection) async throws -> Int {
        let relation = "\(schema.name).\(table)"
        var binds = PostgresBindings()
        binds.append(value)
        binds.append(batchSize)
        let ranges = try await connection.fetch(PostgresQuery(unsafeSQL: """
            WITH per_range AS (
                SELECT CASE WHEN reltuples > 0 AND relpages > 0 THEN greatest(1, ceil($2 * relpages / reltuples))::bigint
                            ELSE greatest(1, $2 / 100)::bigint END AS blocks
                FROM pg_class WHERE oid = '\(relation)'::regclass
            )
            SELECT DISTINCT (ctid::text::point)[0]::bigint / p.blocks * p.blocks, p.blocks
            FROM \(relation), per_range p WHERE \(condition) ORDER BY 1
            """, binds: binds), as: (Int, Int).self, logger: logger)
        var total = 0
        for (first, blocks) in ranges {
            var binds = PostgresBindings()
            binds.append(value)
            binds.append("(\(first),0)")
            binds.append("(\(first + blocks),0)")
            total += try await connection.withTransaction(logger: logger) { transaction in
                try await transaction.query("SELECT pg_advisory_xact_lock_shared(hashtext(\(AnalyticsSchema.ingestLockKey)))", logger: logger)
                return try await transaction.fetch(PostgresQuery(unsafeSQL: """
                    WITH gone AS (
                        DELETE FROM \(relation) WHERE ctid = ANY(ARRAY(
                            SELECT ctid FROM \(relation) WHERE ctid >= $2::tid AND ctid < $3::tid AND \(condition)
                            FOR UPDATE SKIP LOCKED))
                        RETURNING 1
                    )
                    SELECT count(*)::bigint FROM gone
                    """, binds: binds), as: Int.self, logger: logger).first ?? 0
            }
        }
        return total
    }

    /// Cuts the days before `first` off the rows of an activity table that have any, walking it in key order `batchSize`
    /// keys at a time (so no batch's transaction reads the whole table): a batch locks and changes only such rows (`lower(days) < first`; the walk reads the others without a lock,
    /// and no index on `days` is added: it would make the ingest's updates of `days` non-HOT). A row left with no day is
    /// deleted, and for a device's all-events row, so is its registration (`devices`): a device with no activity kept
    /// appears in no report.
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
                    WITH walked AS (
                        SELECT scope, \(unescaped: column) AS member FROM \(unescaped: s).\(unescaped: table)
                        WHERE (scope, \(unescaped: column)) > (\(position.0), \(position.1 ?? zero))
                           OR (\(position.1 == nil) AND scope = \(position.0))
                        ORDER BY scope, \(unescaped: column) LIMIT \(n)
                    ), chunk AS (
                        SELECT a.scope, a.\(unescaped: column) AS member, a.days
                        FROM \(unescaped: s).\(unescaped: table) a JOIN walked w ON a.scope = w.scope AND a.\(unescaped: column) = w.member
                        WHERE lower(a.days) < \(first)::date
                        ORDER BY a.scope, a.\(unescaped: column) FOR UPDATE OF a SKIP LOCKED
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
                        SELECT scope, member FROM walked ORDER BY scope DESC, member DESC LIMIT 1
                    )
                    SELECT (SELECT count(*) FROM walked)::bigint, ((SELECT count(*) FROM gone) + (SELECT count(*) FROM trimmed))::bigint,
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

    /// `trimActivity` for `funnel_activity` (migration 15), whose rows are keyed by tour, step and device: the days before
    /// `first` cut off in key order, `batchSize` keys a batch, a row left with none deleted. `funnel_day_pairs` is an
    /// aggregate and stays (but for its rows at 0, `prune`). Returns the rows deleted or cut.
    private func trimFunnel(before first: String, on connection: PostgresConnection) async throws -> Int {
        let s = schema.name, n = batchSize
        var after: (tour: UUID, kind: String, poi: UUID, device: UUID)?
        var total = 0
        while true {
            let position = after
            let zero = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
            let rows = try await connection.withTransaction(logger: logger) { transaction in
                try await transaction.query("SELECT pg_advisory_xact_lock_shared(hashtext(\(AnalyticsSchema.ingestLockKey)))", logger: logger)
                return try await transaction.fetch("""
                    WITH walked AS (
                        SELECT tour_id, kind, poi_id, device_id FROM \(unescaped: s).funnel_activity
                        WHERE \(position == nil) OR (tour_id, kind, poi_id, device_id)
                            > (\(position?.tour ?? zero), \(position?.kind ?? "s")::"char", \(position?.poi ?? zero), \(position?.device ?? zero))
                        ORDER BY tour_id, kind, poi_id, device_id LIMIT \(n)
                    ), chunk AS (
                        SELECT a.tour_id, a.kind, a.poi_id, a.device_id, a.days
                        FROM \(unescaped: s).funnel_activity a JOIN walked w USING (tour_id, kind, poi_id, device_id)
                        WHERE lower(a.days) < \(first)::date
                        ORDER BY a.tour_id, a.kind, a.poi_id, a.device_id FOR UPDATE OF a SKIP LOCKED
                    ), gone AS (
                        DELETE FROM \(unescaped: s).funnel_activity a USING chunk c
                        WHERE (a.tour_id, a.kind, a.poi_id, a.device_id) = (c.tour_id, c.kind, c.poi_id, c.device_id) AND upper(c.days) <= \(first)::date
                        RETURNING 1
                    ), trimmed AS (
                        UPDATE \(unescaped: s).funnel_activity a SET days = a.days - datemultirange(daterange(NULL, \(first)::date))
                        FROM chunk c
                        WHERE (a.tour_id, a.kind, a.poi_id, a.device_id) = (c.tour_id, c.kind, c.poi_id, c.device_id) AND upper(c.days) > \(first)::date
                        RETURNING 1
                    ), last AS (
                        SELECT * FROM walked ORDER BY tour_id DESC, kind DESC, poi_id DESC, device_id DESC LIMIT 1
                    )
                    SELECT (SELECT count(*) FROM walked)::bigint, ((SELECT count(*) FROM gone) + (SELECT count(*) FROM trimmed))::bigint,
                           (SELECT tour_id FROM last), (SELECT kind::text FROM last), (SELECT poi_id FROM last), (SELECT device_id FROM last)
                    """, as: (Int, Int, UUID?, String?, UUID?, UUID?).self, logger: logger).first
            }
            guard let (walked, changed, tour, kind, poi, device) = rows else { break }
            total += changed
            guard walked == n, let tour, let kind, let poi, let device else { break }
            after = (tour, kind, poi, device)
        }
        return total
    }
}
