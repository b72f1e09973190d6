import Foundation
import Logging
import PostgresNIO
import Shared

/// What a batch changes in the funnel's per-device days (migration 15, docs/ANALYTICS.md "Distinct counts from day
/// pairs"): the (tour, step, device, day) a batch's marks, own arrivals and newly credited arrivals give, and those a
/// credit moved away from a tour may take (only if no other arrival of that device holds the day; decided in SQL).
struct FunnelDays: Sendable {
    /// A device's day in one step of a tour: kind "s" started, "c" completed, "v" arrived at `poi` (the nil UUID otherwise).
    struct Step: Hashable, Sendable {
        var tour: UUID
        var kind: String
        var poi: UUID
        var device: String
        var day: Int32
    }

    var added: Set<Step> = []
    var released: Set<Step> = []

    init(events: [TrackingEvent], delta: AggregateDelta) {
        for mark in events.compactMap(TourAttribution.Mark.init) {
            added.insert(Step(tour: mark.tourId, kind: mark.kind, poi: AggregateDelta.Scope.all, device: mark.deviceId,
                              day: Day(containing: mark.occurredAt).number))
        }
        for visit in delta.stopVisits {
            added.insert(Step(tour: visit.tour, kind: "v", poi: visit.poi, device: visit.device, day: visit.day))
        }
        for move in delta.arrivalMoves {
            let day = Day(containing: move.occurredAt).number
            if let to = move.to { added.insert(Step(tour: to, kind: "v", poi: move.poiId, device: move.deviceId, day: day)) }
            if let from = move.from { released.insert(Step(tour: from, kind: "v", poi: move.poiId, device: move.deviceId, day: day)) }
        }
    }

    var isEmpty: Bool { added.isEmpty && released.isEmpty }
}

extension PostgresIngestStore {
    /// Merges a batch's funnel days into `funnel_activity` and moves the day pairs that changes in `funnel_day_pairs`, in
    /// the batch's transaction, after `stop_visits` and `untoured_events` hold the batch (a released day is kept while
    /// either still has an arrival of that device, tour, stop and day).
    func writeFunnel(_ funnel: FunnelDays, schema: String, on connection: PostgresConnection) async throws {
        guard !funnel.isEmpty else { return }
        let added = Array(funnel.added), released = Array(funnel.released)
        // Whether a released day is still held is read with this statement's snapshot, taken after the batch locked its
        // devices' device_activity rows (`write`; a device new to two batches makes one retry): any other batch that could
        // give the device another arrival has the device's events, so it committed before that lock (and is seen here) or
        // waits for ours. A lock of the funnel rows of its own would be one more round trip for nothing.
        // Rows new to the table are inserted first, in key order (`fresh`: a batch inserting the same row waits on ours);
        // only the others are read, locked in key order (`old`: a data-modifying CTE runs to completion when first read,
        // so `fresh` is done before any row is locked), and updated. Per row: the days before (`old`), after (`new`); the pairs
        // that differ are those of the days that changed and of the next active day after each, before and after (as for
        // active_day_pairs, migration 14).
        let raced = try await connection.fetch("""
            WITH plus AS (
                SELECT t, k, p, m, range_agg(daterange(DATE '1970-01-01' + d, DATE '1970-01-01' + d, '[]')) AS days
                FROM unnest(\(added.map(\.tour))::uuid[], \(added.map(\.kind))::"char"[], \(added.map(\.poi))::uuid[],
                            \(added.map(\.device))::uuid[], \(added.map(\.day))::integer[]) AS x(t, k, p, m, d)
                GROUP BY t, k, p, m
            ), minus AS (
                SELECT t, k, p, m, range_agg(daterange(DATE '1970-01-01' + d, DATE '1970-01-01' + d, '[]')) AS days
                FROM unnest(\(released.map(\.tour))::uuid[], \(released.map(\.kind))::"char"[], \(released.map(\.poi))::uuid[],
                            \(released.map(\.device))::uuid[], \(released.map(\.day))::integer[]) AS x(t, k, p, m, d)
                WHERE NOT EXISTS (SELECT 1 FROM \(unescaped: schema).stop_visits v
                                  WHERE v.tour_id = x.t AND v.day = DATE '1970-01-01' + x.d AND v.poi_id = x.p AND v.device_id = x.m)
                  AND NOT EXISTS (SELECT 1 FROM \(unescaped: schema).untoured_events u
                                  WHERE u.device_id = x.m AND u.occurred_at >= (DATE '1970-01-01' + x.d)::timestamp AT TIME ZONE 'UTC'
                                    AND u.occurred_at < (DATE '1970-01-01' + x.d + 1)::timestamp AT TIME ZONE 'UTC'
                                    AND u.tour_id = x.t AND u.poi_id = x.p AND u.type = 'poi.arrived')
                GROUP BY t, k, p, m
            ), batch AS (
                SELECT t, k, p, m, COALESCE(plus.days, '{}') AS plus, COALESCE(minus.days, '{}') AS minus
                FROM plus FULL JOIN minus USING (t, k, p, m)
            ), fresh AS (
                -- Most of a batch's rows: inserted without being read first.
                INSERT INTO \(unescaped: schema).funnel_activity AS f (tour_id, kind, poi_id, device_id, days)
                SELECT t, k, p, m, plus - minus FROM batch WHERE NOT isempty(plus - minus) ORDER BY t, k, p, m
                ON CONFLICT (tour_id, kind, poi_id, device_id) DO NOTHING
                RETURNING f.tour_id, f.kind, f.poi_id, f.device_id, f.days
            ), old AS MATERIALIZED (
                SELECT f.tour_id, f.kind, f.poi_id, f.device_id, f.days FROM \(unescaped: schema).funnel_activity f
                WHERE (f.tour_id, f.kind, f.poi_id, f.device_id) IN (
                    SELECT t, k, p, m FROM batch b
                    WHERE NOT EXISTS (SELECT 1 FROM fresh n WHERE n.tour_id = b.t AND n.kind = b.k AND n.poi_id = b.p AND n.device_id = b.m))
                ORDER BY f.tour_id, f.kind, f.poi_id, f.device_id FOR UPDATE
            ), changed AS MATERIALIZED (
                SELECT b.t, b.k, b.p, b.m, o.days AS old, (o.days + b.plus) - b.minus AS new, true AS existed
                FROM batch b JOIN old o ON o.tour_id = b.t AND o.kind = b.k AND o.poi_id = b.p AND o.device_id = b.m
                WHERE (o.days + b.plus) - b.minus <> o.days
                UNION ALL
                SELECT tour_id, kind, poi_id, device_id, '{}', days, false FROM fresh
            ), stored AS (
                UPDATE \(unescaped: schema).funnel_activity f SET days = c.new FROM changed c
                WHERE f.tour_id = c.t AND f.kind = c.k AND f.poi_id = c.p AND f.device_id = c.m AND c.existed AND NOT isempty(c.new)
            ), emptied AS (
                DELETE FROM \(unescaped: schema).funnel_activity f USING changed c
                WHERE f.tour_id = c.t AND f.kind = c.k AND f.poi_id = c.p AND f.device_id = c.m AND c.existed AND isempty(c.new)
            ), touched AS (
                -- Each changed day, and the next day of either version after it if both have it (the only unchanged days
                -- whose previous day differs): each day once, so no DISTINCT, and old/new carried along for `pairs`. A new
                -- row's days are all changed.
                SELECT c.t, c.k, c.p, c.old, c.new, e.day
                FROM changed c, unnest((c.new - c.old) + (c.old - c.new)) r, generate_series(0, upper(r) - lower(r) - 1) g,
                    LATERAL (VALUES (lower(r) + g, true),
                                    (CASE WHEN NOT isempty(c.old)
                                          THEN lower((c.old + c.new) * datemultirange(daterange(lower(r) + g + 1, NULL))) END, false)) e(day, changed)
                WHERE e.changed OR (c.old @> e.day AND c.new @> e.day)
            ), pairs AS (
                SELECT t, k, p, day, COALESCE(upper(v.days * datemultirange(daterange(NULL, day))) - 1, '-infinity') AS previous, v.n
                FROM touched, LATERAL (VALUES (new, 1), (old, -1)) v(days, n) WHERE v.days @> day
            ), counted AS (
                INSERT INTO \(unescaped: schema).funnel_day_pairs AS f (tour_id, kind, poi_id, day, previous, devices)
                SELECT t, k, p, day, previous, sum(n) FROM pairs GROUP BY t, k, p, day, previous HAVING sum(n) <> 0
                ORDER BY t, day, k, p, previous
                ON CONFLICT (tour_id, kind, poi_id, day, previous) DO UPDATE SET devices = f.devices + EXCLUDED.devices
            )
            -- A row to insert that is neither new nor read was inserted by another batch after this statement's snapshot
            -- (or deleted by pruning between `fresh` and `old`).
            SELECT count(*)::bigint FROM batch b
            WHERE NOT isempty(b.plus - b.minus)
              AND NOT EXISTS (SELECT 1 FROM fresh n WHERE n.tour_id = b.t AND n.kind = b.k AND n.poi_id = b.p AND n.device_id = b.m)
              AND NOT EXISTS (SELECT 1 FROM old o WHERE o.tour_id = b.t AND o.kind = b.k AND o.poi_id = b.p AND o.device_id = b.m)
            """, as: Int.self, logger: logger)
        // A row another batch inserted after this statement's snapshot (or pruning deleted under it): its days are unknown
        // here, so the batch is rolled back and applied again (the ingest retries), reading them then.
        if let raced = raced.first, raced > 0 { throw ActivityRace(rows: raced, table: "funnel_activity") }
    }
}
