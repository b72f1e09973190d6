import Foundation
import Logging
import PostgresNIO
import Shared

/// What one erasure removed, per table, and the record of it.
struct Erasure: Sendable, Equatable, Encodable {
    /// The device's pseudonym: what the tables held, and what the audit keeps (never the id sent).
    var pseudonym: String
    var erasedAt: Date
    /// Rows removed per event-level table; `day_device_counts` is the per-day counters lowered by one, `active_day_pairs`
    /// and `funnel_day_pairs` and `registration_day_pairs` the day pairs it was counted in (rows upserted, not deleted).
    var removed: [String: Int]
}

/// The SQL of `DELETE /v1/devices/{deviceId}` (docs/PRIVACY.md "Erasure"). The removal and the audit row, in one
/// transaction that holds the ingest lock exclusively: the batches being counted finish first and none starts until the device is gone, so no
/// batch half-written around the erasure leaves a row of it behind.
struct PostgresErasureStore: Sendable {
    let client: PostgresClient
    let schema: AnalyticsSchema
    let logger: Logger

    /// Every event-level table that names a device, in the order the erasure reports them.
    static let tables = ["device_activity", "device_days", "devices", "tour_marks", "untoured_events", "stop_visits", "credited_members",
                         "funnel_activity"]

    func erase(pseudonym: String, requestedBy: String, reason: String, clientAddress: String) async throws -> Erasure {
        let schema = self.schema
        let logger = self.logger
        return try await client.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(hashtext(\(AnalyticsSchema.ingestLockKey)))", logger: logger)
            let removedJSON = try await Self.removeRows(of: pseudonym, schema: schema, on: connection, logger: logger)
            let rows = try await connection.fetch("""
                INSERT INTO \(unescaped: schema.name).erasures (device_id, requested_by, reason, client_address, removed)
                VALUES (\(pseudonym)::uuid, \(requestedBy), \(reason), \(clientAddress), \(removedJSON)::jsonb)
                RETURNING erased_at
                """, as: Date.self, logger: logger)
            guard let erasedAt = rows.first,
                  let removed = try? JSONDecoder().decode([String: Int].self, from: Data(removedJSON.utf8)) else {
                throw ErasureError(description: "the erasure wrote no audit row")
            }
            return Erasure(pseudonym: pseudonym, erasedAt: erasedAt, removed: removed)
        }
    }

    /// Removes every event-level row of the device in `schema` (the caller holds the ingest lock exclusively); returns the
    /// rows removed per table as JSON. Each DELETE finds the device by an index led by its pseudonym (migration 12).
    static func removeRows(of pseudonym: String, schema: AnalyticsSchema, on connection: PostgresConnection, logger: Logger) async throws -> String {
        try await connection.fetch(removeRowsQuery(of: pseudonym, schema: schema), as: String.self, logger: logger).first ?? "{}"
    }

    static func removeRowsQuery(of pseudonym: String, schema: AnalyticsSchema) -> PostgresQuery {
        let s = schema.name
        // The daily series' device counters keep their meaning (distinct devices that day): each day the device was
        // counted on loses it, as every other distinct-device figure does. Sums of events stay (docs/PRIVACY.md).
        return """
                WITH dd AS (DELETE FROM \(unescaped: s).device_days WHERE device_id = \(pseudonym)::uuid RETURNING scope, day),
                counts AS (
                    UPDATE \(unescaped: s).day_device_counts c SET devices = c.devices - 1 FROM dd
                    WHERE c.scope = dd.scope AND c.day = dd.day RETURNING 1
                ),
                da AS (DELETE FROM \(unescaped: s).device_activity WHERE device_id = \(pseudonym)::uuid RETURNING scope, days),
                -- Its active days leave the distinct counts of every range (migration 14's day pairs), as from day_device_counts.
                pairs AS (
                    INSERT INTO \(unescaped: s).active_day_pairs AS p (scope, kind, day, previous, members)
                    SELECT da.scope, 'd', x.day, x.previous, -count(*) FROM da, \(unescaped: s).day_pairs(da.days) x
                    GROUP BY 1, 3, 4 ORDER BY 1, 3, 4
                    ON CONFLICT (scope, kind, day, previous) DO UPDATE SET members = p.members + EXCLUDED.members
                    RETURNING 1
                ),
                -- And from the devices report's (migration 16), in the bucket of the registration held (the snapshot's, before dv).
                registered AS (
                    INSERT INTO \(unescaped: s).registration_day_pairs AS p (scope, day, previous, registration, members)
                    SELECT da.scope, x.day, x.previous, \(unescaped: s).registration_key(r.platform, r.model, r.os_version, r.app_version), -count(*)
                    FROM da LEFT JOIN \(unescaped: s).devices r ON r.device_id = \(pseudonym)::uuid, \(unescaped: s).day_pairs(da.days) x
                    GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
                    ON CONFLICT (scope, day, previous, registration) DO UPDATE SET members = p.members + EXCLUDED.members
                    RETURNING 1
                ),
                -- Its funnel days leave every step's counts (migration 15) the same way.
                fa AS (DELETE FROM \(unescaped: s).funnel_activity WHERE device_id = \(pseudonym)::uuid RETURNING tour_id, kind, poi_id, days),
                funnel_pairs AS (
                    INSERT INTO \(unescaped: s).funnel_day_pairs AS p (tour_id, kind, poi_id, day, previous, devices)
                    SELECT fa.tour_id, fa.kind, fa.poi_id, x.day, x.previous, -count(*) FROM fa, \(unescaped: s).day_pairs(fa.days) x
                    GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 4, 2, 3, 5 -- key order (tour, day, kind, poi, previous), as the ingest locks
                    ON CONFLICT (tour_id, kind, poi_id, day, previous) DO UPDATE SET devices = p.devices + EXCLUDED.devices
                    RETURNING 1
                ),
                dv AS (DELETE FROM \(unescaped: s).devices WHERE device_id = \(pseudonym)::uuid RETURNING 1),
                tm AS (DELETE FROM \(unescaped: s).tour_marks WHERE device_id = \(pseudonym)::uuid RETURNING 1),
                ue AS (DELETE FROM \(unescaped: s).untoured_events WHERE device_id = \(pseudonym)::uuid RETURNING 1),
                sv AS (DELETE FROM \(unescaped: s).stop_visits WHERE device_id = \(pseudonym)::uuid RETURNING 1),
                cm AS (DELETE FROM \(unescaped: s).credited_members WHERE kind = 'd' AND member = \(pseudonym)::uuid RETURNING 1),
                removed AS (
                    SELECT jsonb_build_object(
                        'device_activity', (SELECT count(*) FROM da), 'device_days', (SELECT count(*) FROM dd),
                        'devices', (SELECT count(*) FROM dv), 'tour_marks', (SELECT count(*) FROM tm),
                        'untoured_events', (SELECT count(*) FROM ue), 'stop_visits', (SELECT count(*) FROM sv),
                        'credited_members', (SELECT count(*) FROM cm), 'day_device_counts', (SELECT count(*) FROM counts),
                        'active_day_pairs', (SELECT count(*) FROM pairs), 'funnel_activity', (SELECT count(*) FROM fa),
                        'funnel_day_pairs', (SELECT count(*) FROM funnel_pairs),
                        'registration_day_pairs', (SELECT count(*) FROM registered)) AS removed
                )
                SELECT removed::text FROM removed
                """
    }

    /// Every row of every event-level table that names `pseudonym` (device or tourist column), per table: for tests and
    /// for an operator checking an erasure by hand.
    func rowsNaming(_ pseudonym: String) async throws -> [String: Int] {
        var found: [String: Int] = [:]
        for table in IdConversion.tables {
            let condition = table.ids.sorted().map { "\($0) = $1::uuid" }.joined(separator: " OR ")
            var binds = PostgresBindings()
            binds.append(pseudonym)
            let count = try await client.fetch(
                PostgresQuery(unsafeSQL: "SELECT count(*)::bigint FROM \(schema.name).\(table.name) WHERE \(condition)", binds: binds),
                as: Int.self, logger: logger).first ?? 0
            found[table.name] = count
        }
        return found
    }
}

struct ErasureError: Error, CustomStringConvertible {
    let description: String
}
