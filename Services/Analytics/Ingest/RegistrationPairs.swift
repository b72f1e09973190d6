import Foundation
import Logging
import PostgresNIO
import Shared

/// The devices report's day pairs per registration (migration 16, docs/ANALYTICS.md "Distinct counts from day pairs"):
/// the pairs a batch adds to `device_activity`, in the bucket of each device's registration, and a device's pairs moved
/// when the batch stores a newer registration that changes its bucket.
extension PostgresIngestStore {
    /// Runs before the batch's `device_activity` statement, which it leaves as it is: it locks the batch's activity rows
    /// (an empty one inserted for each new key, so every key is held), and only then, in later statements, reads the
    /// registrations and days. Whoever changes a device's registration holds the device's all-events row from this point of
    /// its own batch to its commit (every event of a device adds a day to that row), so the registration read here is the
    /// one this batch's pairs belong to: a batch that changed it either committed before the lock was granted (a new
    /// statement sees it) or waits for this one.
    func bucketDeviceDays(_ delta: AggregateDelta, schema: String, on connection: PostgresConnection) async throws {
        guard !delta.devices.isEmpty else { return }
        let members = Array(delta.devices)
        let scopes = members.map(\.scope), ids = members.map(\.member), days = members.map(\.day)
        // Key order (all-events rows, the nil scope, first), as the activity statement locks them. A key another batch
        // inserted after this statement's snapshot is not ours to fill: the batch is applied again (ActivityRace).
        let raced = try await connection.fetch("""
            WITH keys AS (
                SELECT DISTINCT s, m FROM unnest(\(scopes)::uuid[], \(ids)::uuid[]) AS x(s, m)
            ), locked AS MATERIALIZED (
                SELECT a.scope, a.device_id FROM \(unescaped: schema).device_activity a
                WHERE (a.scope, a.device_id) IN (SELECT s, m FROM keys)
                ORDER BY a.scope, a.device_id FOR UPDATE
            ), missing AS MATERIALIZED (
                SELECT s, m FROM keys k WHERE NOT EXISTS (SELECT 1 FROM locked l WHERE l.scope = k.s AND l.device_id = k.m)
            ), inserted AS (
                INSERT INTO \(unescaped: schema).device_activity (scope, device_id, days)
                SELECT s, m, '{}' FROM missing ORDER BY s, m
                ON CONFLICT DO NOTHING
                RETURNING 1
            )
            SELECT ((SELECT count(*) FROM missing) - (SELECT count(*) FROM inserted))::bigint
            """, as: Int.self, logger: logger)
        if let raced = raced.first, raced > 0 { throw ActivityRace(rows: raced, table: "device_activity") }

        // Each device of the batch with the registration the batch brings for it, if any (`has`), so the bucket
        // is decided in one pass over the devices (a join of two unnests would be planned as nested loops: 100 rows guessed).
        let devices = Array(Set(ids)).sorted()
        let brought = devices.map { delta.registrations[$0] }
        let has = brought.map { $0 != nil }, at = brought.map { $0?.occurredAt ?? Date(timeIntervalSince1970: 0) }
        let events = brought.map { $0?.eventId ?? AggregateDelta.Scope.all }
        let platforms = brought.map { $0?.platform ?? "" }, models = brought.map { $0?.model ?? "" }
        let osVersions = brought.map { $0?.osVersion ?? "" }, appVersions = brought.map { $0?.appVersion ?? "" }
        if !delta.registrations.isEmpty {
            // Its own statement, before any pair is written: a batch waiting here for another's new key holds no pair row.
            try await connection.query("""
                INSERT INTO \(unescaped: schema).registrations (registration, platform, model, os_version, app_version)
                SELECT DISTINCT ON (k) k, p, m, o, a FROM (
                    SELECT \(unescaped: schema).registration_key(p, m, o, a) AS k, p, m, o, a
                    FROM unnest(\(has)::boolean[], \(platforms)::text[], \(models)::text[], \(osVersions)::text[], \(appVersions)::text[]) AS x(h, p, m, o, a)
                    WHERE h
                ) r
                ORDER BY k
                ON CONFLICT DO NOTHING
                """, logger: logger)
        }
        // One statement for the new days' pairs and the moves, so registration_day_pairs is locked once per batch, in key
        // order. `changed` … `pairs` are the activity statement's rule (each new day's pair, and the next active day's moved),
        // per device: the days the rows have now are the days before the batch. A device whose bucket the batch changes (a
        // newer registration with other values; never registered is the nil key) has the pairs of all its rows, every
        // scope, moved from the old bucket to the new one, and its new days go to the new one.
        try await connection.query("""
            WITH batch AS (
                SELECT s, m, range_agg(daterange(DATE '1970-01-01' + d, DATE '1970-01-01' + d, '[]')) AS days
                FROM unnest(\(scopes)::uuid[], \(ids)::uuid[], \(days)::integer[]) AS x(s, m, d)
                GROUP BY s, m
            ), changed AS MATERIALIZED (
                SELECT b.s, b.m, a.days AS old, b.days - a.days AS added
                FROM batch b JOIN \(unescaped: schema).device_activity a ON a.scope = b.s AND a.device_id = b.m
                WHERE NOT isempty(b.days - a.days)
            ), added_days AS (
                SELECT c.s, c.m, c.old, c.old + c.added AS new, c.added, lower(r) + g AS day
                FROM changed c, unnest(c.added) r, generate_series(0, upper(r) - lower(r) - 1) g
            ), touched AS (
                SELECT s, m, old, new, day FROM added_days
                UNION ALL
                SELECT s, m, old, new, n FROM (SELECT s, m, old, new, added, lower(new * datemultirange(daterange(day + 1, NULL))) AS n FROM added_days) x
                WHERE n IS NOT NULL AND NOT added @> n
            ), pairs AS (
                SELECT s, m, day, COALESCE(upper(new * datemultirange(daterange(NULL, day))) - 1, '-infinity') AS previous, 1 AS n FROM touched
                UNION ALL
                SELECT s, m, day, COALESCE(upper(old * datemultirange(daterange(NULL, day))) - 1, '-infinity'), -1 FROM touched WHERE old @> day
            ), buckets AS MATERIALIZED (
                -- The bucket held, and the one after the batch: the registration it brings if newer than the one held (the
                -- upsert's rule), else the one held.
                SELECT r.m, \(unescaped: schema).registration_key(d.platform, d.model, d.os_version, d.app_version) AS held,
                       CASE WHEN r.h AND (d.device_id IS NULL OR (r.at, r.event_id) > (d.registered_at, d.event_id))
                            THEN \(unescaped: schema).registration_key(r.p, r.mo, r.o, r.a)
                            ELSE \(unescaped: schema).registration_key(d.platform, d.model, d.os_version, d.app_version) END AS bucket
                FROM unnest(\(devices)::uuid[], \(has)::boolean[], \(at)::timestamptz[], \(events)::uuid[], \(platforms)::text[],
                            \(models)::text[], \(osVersions)::text[], \(appVersions)::text[]) AS r(m, h, at, event_id, p, mo, o, a)
                LEFT JOIN \(unescaped: schema).devices d ON d.device_id = r.m
            ), moved AS (
                SELECT a.scope AS s, p.day, p.previous, b.held, b.bucket
                FROM buckets b JOIN \(unescaped: schema).device_activity a ON a.device_id = b.m, \(unescaped: schema).day_pairs(a.days) p
                WHERE b.held <> b.bucket
            ), deltas AS (
                SELECT x.s, x.day, x.previous, b.bucket AS registration, x.n FROM pairs x JOIN buckets b ON b.m = x.m
                UNION ALL
                SELECT s, day, previous, held, -1 FROM moved
                UNION ALL
                SELECT s, day, previous, bucket, 1 FROM moved
            )
            INSERT INTO \(unescaped: schema).registration_day_pairs AS p (scope, day, previous, registration, members)
            SELECT s, day, previous, registration, sum(n) FROM deltas
            GROUP BY s, day, previous, registration HAVING sum(n) <> 0
            ORDER BY s, day, previous, registration
            ON CONFLICT (scope, day, previous, registration) DO UPDATE SET members = p.members + EXCLUDED.members
            """, logger: logger)
    }
}
