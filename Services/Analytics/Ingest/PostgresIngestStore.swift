import Foundation
import Logging
import PostgresNIO
import Shared

/// The ingest's SQL. Each aggregate table takes one statement per batch, its rows passed as parallel
/// arrays through `unnest`, so a batch of ten thousand events costs about ten round trips, not ten
/// thousand. Rows are sorted by key so two writers on overlapping rows lock them in one order.
struct PostgresIngestStore: IngestStore {
    let client: PostgresClient
    /// The schema holding the tables: `analytics`, or a replay's fresh schema.
    let schema: AnalyticsSchema
    let logger: Logger
    /// Runs last inside each batch's transaction; tests make it throw to show a failure there commits nothing.
    var beforeCommit: (@Sendable () async throws -> Void)?

    func storedOffsets(topic: String) async throws -> [Int32: Int64] {
        var offsets: [Int32: Int64] = [:]
        for (partition, offset) in try await client.fetch(
            "SELECT partition, next_offset FROM \(unescaped: schema.name).consumer_offsets WHERE topic = \(topic)",
            as: (Int32, Int64).self, logger: logger) {
            offsets[partition] = offset
        }
        return offsets
    }

    func countedEvents() async throws -> Int {
        try await client.fetch("SELECT count(*)::bigint FROM \(unescaped: schema.name).processed_events", as: Int.self, logger: logger).first ?? 0
    }

    func saveNames(_ names: [CatalogName]) async throws {
        guard !names.isEmpty else { return }
        // Stops travel as array literals (unnest cannot take arrays of different lengths); "" stands for none.
        let stops = names.map { name in name.stops.map { "{" + $0.map { $0.uuidString.lowercased() }.joined(separator: ",") + "}" } ?? "" }
        // DISTINCT ON: one row per entity, the one saving them in turn would keep (the first of equals), since a
        // statement's ON CONFLICT cannot touch a row twice.
        try await client.query("""
            INSERT INTO \(unescaped: schema.name).catalog_names AS n (entity_id, kind, name, version, stops)
            SELECT DISTINCT ON (entity_id) entity_id, kind, name, version, NULLIF(stops, '')::uuid[]
            FROM unnest(\(names.map(\.entityId))::uuid[], \(names.map(\.kind))::text[], \(names.map(\.name))::text[],
                        \(names.map(\.version))::integer[], \(stops)::text[]) WITH ORDINALITY AS r(entity_id, kind, name, version, stops, n)
            ORDER BY entity_id, version DESC, stops <> '' DESC, n
            ON CONFLICT (entity_id) DO UPDATE SET kind = EXCLUDED.kind, name = EXCLUDED.name, version = EXCLUDED.version, stops = EXCLUDED.stops
            WHERE EXCLUDED.version > n.version
               -- A tour named before analytics kept stops gets them when catalog.events is read again.
               OR (EXCLUDED.version = n.version AND n.stops IS NULL AND EXCLUDED.stops IS NOT NULL)
            """, logger: logger)
    }

    func apply(_ batch: IngestBatch) async throws -> ApplyOutcome {
        let schema = self.schema.name
        let logger = self.logger
        let beforeCommit = self.beforeCommit
        return try await client.withTransaction(logger: logger) { connection -> ApplyOutcome in
            // The lock is shared with every other batch; `replay --activate` takes it exclusively to swap
            // schemas between batches, never in the middle of one. COMMIT does not wait for the WAL flush:
            // if Postgres itself crashed, the last batches would be lost whole (aggregates, ids and offsets
            // together) and read again from the topic, so still counted once. JIT compilation is off for the batch: the
            // planner's guess for an `unnest` of thousands of rows would have it compile statements for longer than they run.
            try await connection.query("""
                SELECT pg_advisory_xact_lock_shared(hashtext(\(AnalyticsSchema.ingestLockKey))), set_config('synchronous_commit', 'off', true),
                       set_config('jit', 'off', true)
                """, logger: logger)
            if !batch.expectedOffsets.isEmpty {
                let partitions = Array(batch.expectedOffsets.keys)
                var stored: [Int32: Int64] = [:]
                for (partition, offset) in try await connection.fetch("""
                    SELECT partition, next_offset FROM \(unescaped: schema).consumer_offsets
                    WHERE topic = \(batch.topic) AND partition = ANY(\(partitions)) FOR UPDATE
                    """, as: (Int32, Int64).self, logger: logger) {
                    stored[partition] = offset
                }
                if batch.expectedOffsets.contains(where: { partition, expected in (stored[partition] ?? -1) < expected }) {
                    return .offsetsMovedBack
                }
            }

            // The answer is NULL when every id was new, the usual case, else the new ones as one array.
            let ids = batch.sortedIds
            let fresh = try await connection.fetch("""
                WITH inserted AS (
                    INSERT INTO \(unescaped: schema).processed_events (id) SELECT unnest(\(ids)::uuid[])
                    ON CONFLICT DO NOTHING RETURNING id
                )
                SELECT CASE WHEN count(*) = \(ids.count) THEN NULL ELSE COALESCE(array_agg(id), '{}') END FROM inserted
                """, as: [UUID]?.self, logger: logger)
            var events = batch.events
            var delta = batch.delta
            if let freshIds = fresh.first ?? nil {
                let freshSet = Set(freshIds)
                events = batch.events.filter { freshSet.contains($0.id) }
                delta = AggregateDelta(events)
            }
            let kept = try await Self.droppingErased(events, schema: schema, on: connection, logger: logger)
            if kept.count < events.count {
                events = kept
                delta = AggregateDelta(events)
            }
            try await attribute(events, into: &delta, schema: schema, on: connection)
            try await write(delta, schema: schema, on: connection)
            try await writeFunnel(FunnelDays(events: events, delta: delta), schema: schema, on: connection)
            let counted = events.count

            let partitions = batch.nextOffsets.keys.filter { batch.resetOffsets[$0] == nil }.sorted()
            let offsets = partitions.map { batch.nextOffsets[$0]! }
            let topics = Array(repeating: batch.topic, count: partitions.count)
            try await connection.query("""
                INSERT INTO \(unescaped: schema).consumer_offsets AS o (topic, partition, next_offset)
                SELECT * FROM unnest(\(topics)::text[], \(partitions)::integer[], \(offsets)::bigint[])
                ON CONFLICT (topic, partition) DO UPDATE SET next_offset = GREATEST(o.next_offset, EXCLUDED.next_offset)
                """, logger: logger)
            if !batch.resetOffsets.isEmpty {
                let partitions = batch.resetOffsets.keys.sorted()
                let offsets = partitions.map { batch.nextOffsets[$0] ?? batch.resetOffsets[$0]! }
                let topics = Array(repeating: batch.topic, count: partitions.count)
                try await connection.query("""
                    INSERT INTO \(unescaped: schema).consumer_offsets AS o (topic, partition, next_offset)
                    SELECT * FROM unnest(\(topics)::text[], \(partitions)::integer[], \(offsets)::bigint[])
                    ON CONFLICT (topic, partition) DO UPDATE SET next_offset = EXCLUDED.next_offset
                    """, logger: logger)
            }
            try await beforeCommit?()
            return .applied(new: counted, duplicates: batch.received - counted)
        }
    }

    /// `events` less those of an erased device that occurred before its latest erasure (docs/PRIVACY.md "Erasure"): a
    /// redelivery, or a replay of the topic, never brings an erased device back. One lookup per batch, by
    /// `erasures_by_device`.
    static func droppingErased(_ events: [TrackingEvent], schema: String, on connection: PostgresConnection, logger: Logger) async throws -> [TrackingEvent] {
        guard !events.isEmpty else { return events }
        let devices = Array(Set(events.map(\.deviceId))).sorted()
        var erasedAt: [String: Date] = [:]
        for try await (device, at) in try await connection.query("""
            SELECT device_id, max(erased_at) FROM \(unescaped: schema).erasures WHERE device_id = ANY(\(devices)::uuid[]) GROUP BY device_id
            """, logger: logger).decode((String, Date).self) {
            erasedAt[device] = at
        }
        guard !erasedAt.isEmpty else { return events }
        return events.filter { event in erasedAt[event.deviceId].map { event.occurredAt >= $0 } ?? true }
    }

    /// Tour attribution (DESIGN.md): stores the batch's tour marks, decides again the tour of the stored tourless
    /// events a new mark can change (the device's, up to 4 h after it), then stores the batch's tourless events
    /// with the tour the marks now give them. What that credits or moves is added to `delta`, so the batch's one
    /// write of the aggregates carries it.
    private func attribute(_ events: [TrackingEvent], into delta: inout AggregateDelta, schema: String,
                           on connection: PostgresConnection) async throws {
        let marks = events.compactMap(TourAttribution.Mark.init).sorted { ($0.deviceId, $0.occurredAt) < ($1.deviceId, $1.occurredAt) }
        let untoured = events.compactMap(TourAttribution.Untoured.init).sorted { $0.eventId.orderKey < $1.eventId.orderKey }
        let window = "\(Int(TourAttribution.window.components.seconds)) seconds"
        // The open tour of an untoured_events row or unnest row `u` (with device_id, tourist_id, occurred_at).
        let openTour = """
            SELECT CASE WHEN EXISTS (
                SELECT 1 FROM \(schema).tour_marks c
                WHERE c.device_id = u.device_id AND c.kind = 'c' AND c.tour_id = s.tour_id
                  AND c.occurred_at >= s.occurred_at AND c.occurred_at < u.occurred_at
            ) THEN NULL ELSE s.tour_id END
            FROM \(schema).tour_marks s
            WHERE s.device_id = u.device_id AND s.kind = 's'
              AND s.occurred_at <= u.occurred_at AND s.occurred_at >= u.occurred_at - '\(window)'::interval
              AND (u.tourist_id IS NULL OR s.tourist_id IS NULL OR s.tourist_id = u.tourist_id)
            ORDER BY s.occurred_at DESC, s.event_id DESC
            LIMIT 1
            """
        if !marks.isEmpty {
            try await connection.query("""
                INSERT INTO \(unescaped: schema).tour_marks (device_id, occurred_at, event_id, kind, tour_id, tourist_id)
                SELECT d, t, e, k, tour, NULLIF(tourist, '')::uuid
                FROM unnest(\(marks.map(\.deviceId))::uuid[], \(marks.map(\.occurredAt))::timestamptz[], \(marks.map(\.eventId))::uuid[],
                            \(marks.map(\.kind))::"char"[], \(marks.map(\.tourId))::uuid[], \(marks.map { $0.touristId ?? "" })::text[])
                     AS x(d, t, e, k, tour, tourist)
                ON CONFLICT DO NOTHING
                """, logger: logger)
            // The stored tourless events a mark `m` can decide: an index range per mark. As a join, the planner (guessing 100
            // rows for an unnest) scanned every stored tourless event, O(events counted) per batch; OFFSET 0 keeps the
            // subquery from being flattened into that join.
            let eventsAfterMark = """
                SELECT * FROM \(schema).untoured_events u WHERE u.device_id = m.device_id
                  AND u.occurred_at >= m.at AND u.occurred_at <= m.at + '\(window)'::interval OFFSET 0
                """
            // The rows the marks can move are locked first, in key order, by a statement of their own: the one below then
            // reads them with a snapshot taken after the locks are held, so a batch that moved them (and stored its marks)
            // before us has committed and is seen. Read in the same statement as the UPDATE, a row another batch moved
            // while we waited on its lock would be updated from the snapshot's old tour (A→C where that batch did A→B),
            // and B would keep the credit in every aggregate.
            try await connection.query("""
                SELECT 1 FROM \(unescaped: schema).untoured_events u
                WHERE u.event_id IN (
                    SELECT u.event_id FROM unnest(\(marks.map(\.deviceId))::uuid[], \(marks.map(\.occurredAt))::timestamptz[]) AS m(device_id, at)
                    CROSS JOIN LATERAL (\(unescaped: eventsAfterMark)) u)
                ORDER BY u.event_id FOR UPDATE
                """, logger: logger)
            // Events phones send in order are not stored yet when their start arrives: this finds only late starts'
            // and completions' events.
            for try await (type, occurredAt, poiId, dwell, deviceId, touristId, from, to) in try await connection.query("""
                WITH marks AS (
                    SELECT DISTINCT device_id, at FROM unnest(\(marks.map(\.deviceId))::uuid[], \(marks.map(\.occurredAt))::timestamptz[]) AS m(device_id, at)
                ), decided AS (
                    SELECT DISTINCT u.event_id, u.tour_id AS old_tour, (\(unescaped: openTour)) AS new_tour
                    FROM marks m CROSS JOIN LATERAL (\(unescaped: eventsAfterMark)) u
                )
                UPDATE \(unescaped: schema).untoured_events u SET tour_id = d.new_tour
                FROM decided d
                WHERE u.event_id = d.event_id AND d.old_tour IS DISTINCT FROM d.new_tour
                RETURNING u.type, u.occurred_at, u.poi_id, u.dwell_seconds, u.device_id, u.tourist_id, d.old_tour, d.new_tour
                """, logger: logger).decode((String, Date, UUID, Double?, String, String?, UUID?, UUID?).self) {
                delta.move(TourAttribution.Change(type: type, occurredAt: occurredAt, poiId: poiId, dwellSeconds: dwell,
                                                  deviceId: deviceId, touristId: touristId, from: from, to: to))
            }
        }
        guard !untoured.isEmpty else { return }
        var credited: [(UUID, UUID)] = []
        // The open tour of each, set-based (the rule of `openTour`, the same predicates): the marks that can decide any of
        // them (each device's own, from 4 h before its first event to its last: one late event widens only its device's
        // read) are read once, a primary-key range per device, then joined in memory, instead of two index probes per event.
        var spans: [String: (first: Date, last: Date)] = [:]
        for event in untoured {
            let span = spans[event.deviceId] ?? (event.occurredAt, event.occurredAt)
            spans[event.deviceId] = (min(span.first, event.occurredAt), max(span.last, event.occurredAt))
        }
        let devices = spans.keys.sorted()
        // The planner guesses 100 rows for an unnest and would join the thousands it holds to the marks by nested loops,
        // each over every mark: hash joins, for this statement only (the per-device reads are LATERAL, nested loops by
        // nature); the setting it had is put back after it.
        let nestloop = try await connection.fetch("SELECT current_setting('enable_nestloop'), set_config('enable_nestloop', 'off', true)",
                                                  as: (String, String).self, logger: logger).first?.0 ?? "on"
        for try await row in try await connection.query("""
            WITH u(event_id, device_id, tourist_id, occurred_at, type, poi_id, dwell_seconds) AS (
                SELECT e, d, NULLIF(tourist, '')::uuid, t, ty, p, NULLIF(dw, 'NaN')
                FROM unnest(\(untoured.map(\.eventId))::uuid[], \(untoured.map(\.deviceId))::uuid[], \(untoured.map { $0.touristId ?? "" })::text[],
                            \(untoured.map(\.occurredAt))::timestamptz[], \(untoured.map(\.type))::text[], \(untoured.map(\.poiId))::uuid[],
                            \(untoured.map { $0.dwellSeconds ?? .nan })::double precision[]) AS x(e, d, tourist, t, ty, p, dw)
            ), marks AS MATERIALIZED (
                SELECT m.device_id, m.occurred_at, m.event_id, m.kind, m.tour_id, m.tourist_id
                FROM unnest(\(devices)::uuid[], \(devices.map { spans[$0]!.first })::timestamptz[], \(devices.map { spans[$0]!.last })::timestamptz[])
                     AS b(device_id, first, last)
                CROSS JOIN LATERAL (
                    SELECT * FROM \(unescaped: schema).tour_marks t
                    WHERE t.device_id = b.device_id AND t.occurred_at >= b.first - '\(unescaped: window)'::interval AND t.occurred_at <= b.last
                    OFFSET 0 -- kept a subquery: flattened, it would become a hash join over every mark
                ) m
            ), opened AS (
                SELECT DISTINCT ON (u.event_id) u.event_id, u.device_id, u.occurred_at, s.tour_id, s.occurred_at AS started
                FROM u JOIN marks s ON s.device_id = u.device_id AND s.kind = 's'
                  AND s.occurred_at <= u.occurred_at AND s.occurred_at >= u.occurred_at - '\(unescaped: window)'::interval
                  AND (u.tourist_id IS NULL OR s.tourist_id IS NULL OR s.tourist_id = u.tourist_id)
                ORDER BY u.event_id, s.occurred_at DESC, s.event_id DESC
            ), completed AS (
                SELECT DISTINCT o.event_id FROM opened o JOIN marks c ON c.device_id = o.device_id AND c.kind = 'c' AND c.tour_id = o.tour_id
                  AND c.occurred_at >= o.started AND c.occurred_at < o.occurred_at
            ), stored AS (
                INSERT INTO \(unescaped: schema).untoured_events (event_id, device_id, tourist_id, occurred_at, type, poi_id, dwell_seconds, tour_id)
                SELECT u.event_id, u.device_id, u.tourist_id, u.occurred_at, u.type, u.poi_id, u.dwell_seconds,
                       CASE WHEN c.event_id IS NULL THEN o.tour_id END
                FROM u LEFT JOIN opened o ON o.event_id = u.event_id LEFT JOIN completed c ON c.event_id = u.event_id
                ON CONFLICT DO NOTHING
                RETURNING event_id, tour_id
            )
            SELECT event_id, tour_id FROM stored WHERE tour_id IS NOT NULL
            """, logger: logger).decode((UUID, UUID).self) {
            credited.append(row)
        }
        try await connection.query("SELECT set_config('enable_nestloop', \(nestloop), true)", logger: logger)
        guard !credited.isEmpty else { return }
        let byId = Dictionary(untoured.map { ($0.eventId, $0) }, uniquingKeysWith: { first, _ in first })
        for (eventId, tour) in credited {
            if let event = byId[eventId] { delta.move(event.credited(to: tour)) }
        }
    }

    private func write(_ delta: AggregateDelta, schema: String, on connection: PostgresConnection) async throws {
        try await bucketDeviceDays(delta, schema: schema, on: connection)
        for (table, column, kind, members) in [("device_activity", "device_id", AggregateDelta.CreditedMember.Kind.device, delta.devices),
                                               ("tourist_activity", "tourist_id", .tourist, delta.tourists)]
        where !members.isEmpty {
            // One row per scope and member, the batch's days new to it merged into the days it had (rows locked first, in
            // key order, so the days they had are the days they have); the pairs of (active day, active day before it)
            // that this changes are moved in active_day_pairs (migration 14): each new day's, and the next active day's.
            let raced = try await connection.fetch("""
                WITH batch AS (
                    SELECT s, m, range_agg(daterange(DATE '1970-01-01' + d, DATE '1970-01-01' + d, '[]')) AS days
                    FROM unnest(\(members.map(\.scope))::uuid[], \(members.map(\.member))::uuid[], \(members.map(\.day))::integer[]) AS x(s, m, d)
                    GROUP BY s, m
                ), old AS MATERIALIZED (
                    SELECT a.scope, a.\(unescaped: column) AS member, a.days FROM \(unescaped: schema).\(unescaped: table) a
                    WHERE (a.scope, a.\(unescaped: column)) IN (SELECT s, m FROM batch)
                    ORDER BY a.scope, a.\(unescaped: column) FOR UPDATE
                ), changed AS MATERIALIZED (
                    SELECT b.s, b.m, COALESCE(o.days, '{}') AS old, b.days - COALESCE(o.days, '{}') AS added, o.scope IS NOT NULL AS existed
                    FROM batch b LEFT JOIN old o ON o.scope = b.s AND o.member = b.m
                    WHERE NOT isempty(b.days - COALESCE(o.days, '{}'))
                ), stored AS (
                    INSERT INTO \(unescaped: schema).\(unescaped: table) AS a (scope, \(unescaped: column), days)
                    SELECT s, m, added FROM changed ORDER BY s, m
                    ON CONFLICT (scope, \(unescaped: column)) DO UPDATE SET days = a.days + EXCLUDED.days
                    RETURNING a.scope, a.\(unescaped: column) AS member, a.xmax <> 0 AS updated
                ), added_days AS (
                    SELECT c.s, c.old, c.old + c.added AS new, c.added, lower(r) + g AS day
                    FROM changed c, unnest(c.added) r, generate_series(0, upper(r) - lower(r) - 1) g
                ), touched AS (
                    -- Each new day, and the active day after it unless that is new too (no two new days share it).
                    SELECT s, old, new, day FROM added_days
                    UNION ALL
                    SELECT s, old, new, n FROM (SELECT s, old, new, added, lower(new * datemultirange(daterange(day + 1, NULL))) AS n FROM added_days) x
                    WHERE n IS NOT NULL AND NOT added @> n
                ), pairs AS (
                    SELECT s, day, COALESCE(upper(new * datemultirange(daterange(NULL, day))) - 1, '-infinity') AS previous, 1 AS n FROM touched
                    UNION ALL
                    SELECT s, day, COALESCE(upper(old * datemultirange(daterange(NULL, day))) - 1, '-infinity'), -1 FROM touched WHERE old @> day
                ), counted AS (
                    INSERT INTO \(unescaped: schema).active_day_pairs AS p (scope, kind, day, previous, members)
                    SELECT s, \(kind.rawValue)::"char", day, previous, sum(n) FROM pairs GROUP BY s, day, previous HAVING sum(n) <> 0
                    ORDER BY s, day, previous
                    ON CONFLICT (scope, kind, day, previous) DO UPDATE SET members = p.members + EXCLUDED.members
                )
                SELECT count(*)::bigint FROM stored s JOIN changed c ON c.s = s.scope AND c.m = s.member WHERE s.updated AND NOT c.existed
                """, as: Int.self, logger: logger)
            // A row another transaction inserted after this statement's snapshot: the days it had are unknown here, so the
            // batch is rolled back and applied again (the ingest retries), reading them then.
            if let raced = raced.first, raced > 0 { throw ActivityRace(rows: raced, table: table) }
        }
        if !delta.devices.isEmpty {
            // The triples new to device_days are the devices each day gains.
            try await connection.query("""
                WITH added AS (
                    INSERT INTO \(unescaped: schema).device_days (scope, day, device_id)
                    SELECT s, DATE '1970-01-01' + d, m
                    FROM unnest(\(delta.devices.map(\.scope))::uuid[], \(delta.devices.map(\.day))::integer[],
                                \(delta.devices.map(\.member))::uuid[]) AS x(s, d, m)
                    ORDER BY s, d, m
                    ON CONFLICT DO NOTHING
                    RETURNING scope, day
                )
                INSERT INTO \(unescaped: schema).day_device_counts AS c (scope, day, devices)
                SELECT scope, day, count(*) FROM added GROUP BY scope, day ORDER BY scope, day
                ON CONFLICT (scope, day) DO UPDATE SET devices = c.devices + EXCLUDED.devices
                """, logger: logger)
        }

        let creditedRows = delta.credited.filter { $0.value != 0 }.sorted {
            ($0.key.tour.orderKey.0, $0.key.tour.orderKey.1, $0.key.day, $0.key.kind.rawValue, $0.key.member)
                < ($1.key.tour.orderKey.0, $1.key.tour.orderKey.1, $1.key.day, $1.key.kind.rawValue, $1.key.member)
        }
        if !creditedRows.isEmpty {
            // After device_days and tourist_activity: a member the tour's own events count that day is left out.
            let rows = creditedRows
            try await connection.query("""
                INSERT INTO \(unescaped: schema).credited_members AS c (tour_id, day, kind, member, events)
                SELECT t, DATE '1970-01-01' + d, k, m, n
                FROM unnest(\(rows.map(\.key.tour))::uuid[], \(rows.map(\.key.day))::integer[], \(rows.map(\.key.kind.rawValue))::"char"[],
                            \(rows.map(\.key.member))::uuid[], \(rows.map(\.value))::integer[]) AS x(t, d, k, m, n)
                WHERE NOT CASE k
                    WHEN 'd' THEN EXISTS (SELECT 1 FROM \(unescaped: schema).device_days dd
                                          WHERE dd.scope = t AND dd.day = DATE '1970-01-01' + d AND dd.device_id = m)
                    ELSE EXISTS (SELECT 1 FROM \(unescaped: schema).tourist_activity a
                                 WHERE a.scope = t AND a.tourist_id = m AND a.days @> (DATE '1970-01-01' + d))
                END
                ON CONFLICT (tour_id, day, kind, member) DO UPDATE SET events = c.events + EXCLUDED.events
                """, logger: logger)
            let lost = rows.filter { $0.value < 0 }
            if !lost.isEmpty {
                try await connection.query("""
                    DELETE FROM \(unescaped: schema).credited_members c
                    USING unnest(\(lost.map(\.key.tour))::uuid[], \(lost.map(\.key.day))::integer[], \(lost.map(\.key.kind.rawValue))::"char"[],
                                 \(lost.map(\.key.member))::uuid[]) AS x(t, d, k, m)
                    WHERE c.events <= 0 AND c.tour_id = t AND c.day = DATE '1970-01-01' + d AND c.kind = k AND c.member = m
                    """, logger: logger)
            }
        }

        if !delta.pois.isEmpty {
            let rows = delta.pois.sorted { ($0.key.scope.orderKey.0, $0.key.scope.orderKey.1, $0.key.day, $0.key.poi.orderKey.0, $0.key.poi.orderKey.1)
                < ($1.key.scope.orderKey.0, $1.key.scope.orderKey.1, $1.key.day, $1.key.poi.orderKey.0, $1.key.poi.orderKey.1) }
            try await connection.query("""
                INSERT INTO \(unescaped: schema).day_poi_stats AS p (scope, day, poi_id, views, visits, dwell_count, dwell_sum, media_plays)
                SELECT s, DATE '1970-01-01' + d, poi, v, vi, dc, ds, mp
                FROM unnest(\(rows.map(\.key.scope))::uuid[], \(rows.map(\.key.day))::integer[], \(rows.map(\.key.poi))::uuid[],
                            \(rows.map(\.value.views))::bigint[], \(rows.map(\.value.visits))::bigint[],
                            \(rows.map(\.value.dwellCount))::bigint[], \(rows.map(\.value.dwellSum))::double precision[],
                            \(rows.map(\.value.mediaPlays))::bigint[]) AS x(s, d, poi, v, vi, dc, ds, mp)
                ON CONFLICT (scope, day, poi_id) DO UPDATE SET views = p.views + EXCLUDED.views, visits = p.visits + EXCLUDED.visits,
                    dwell_count = p.dwell_count + EXCLUDED.dwell_count, dwell_sum = p.dwell_sum + EXCLUDED.dwell_sum,
                    media_plays = p.media_plays + EXCLUDED.media_plays
                """, logger: logger)
        }

        if !delta.tours.isEmpty {
            let rows = delta.tours.sorted { ($0.key.day, $0.key.tour.orderKey.0, $0.key.tour.orderKey.1) < ($1.key.day, $1.key.tour.orderKey.0, $1.key.tour.orderKey.1) }
            try await connection.query("""
                INSERT INTO \(unescaped: schema).day_tour_stats AS t (day, tour_id, starts, completions, duration_count, duration_sum)
                SELECT DATE '1970-01-01' + d, tour, st, co, dc, ds
                FROM unnest(\(rows.map(\.key.day))::integer[], \(rows.map(\.key.tour))::uuid[], \(rows.map(\.value.starts))::bigint[],
                            \(rows.map(\.value.completions))::bigint[], \(rows.map(\.value.durationCount))::bigint[],
                            \(rows.map(\.value.durationSum))::double precision[]) AS x(d, tour, st, co, dc, ds)
                ON CONFLICT (day, tour_id) DO UPDATE SET starts = t.starts + EXCLUDED.starts, completions = t.completions + EXCLUDED.completions,
                    duration_count = t.duration_count + EXCLUDED.duration_count, duration_sum = t.duration_sum + EXCLUDED.duration_sum
                """, logger: logger)
        }

        if !delta.hours.isEmpty {
            let rows = delta.hours.sorted { ($0.key.scope.orderKey.0, $0.key.scope.orderKey.1, $0.key.day, $0.key.hour)
                < ($1.key.scope.orderKey.0, $1.key.scope.orderKey.1, $1.key.day, $1.key.hour) }
            try await connection.query("""
                INSERT INTO \(unescaped: schema).hour_visits AS h (scope, day, hour, visits)
                SELECT s, DATE '1970-01-01' + d, hr, v
                FROM unnest(\(rows.map(\.key.scope))::uuid[], \(rows.map(\.key.day))::integer[], \(rows.map(\.key.hour))::smallint[],
                            \(rows.map(\.value))::bigint[]) AS x(s, d, hr, v)
                ON CONFLICT (scope, day, hour) DO UPDATE SET visits = h.visits + EXCLUDED.visits
                """, logger: logger)
        }
        if !delta.stopVisits.isEmpty {
            let rows = delta.stopVisits.sorted { ($0.tour.orderKey.0, $0.tour.orderKey.1, $0.day, $0.poi.orderKey.0, $0.poi.orderKey.1, $0.device)
                < ($1.tour.orderKey.0, $1.tour.orderKey.1, $1.day, $1.poi.orderKey.0, $1.poi.orderKey.1, $1.device) }
            try await connection.query("""
                INSERT INTO \(unescaped: schema).stop_visits (tour_id, poi_id, day, device_id)
                SELECT t, p, DATE '1970-01-01' + d, dev
                FROM unnest(\(rows.map(\.tour))::uuid[], \(rows.map(\.poi))::uuid[], \(rows.map(\.day))::integer[],
                            \(rows.map(\.device))::uuid[]) AS x(t, p, d, dev)
                ON CONFLICT DO NOTHING
                """, logger: logger)
        }
        if !delta.searches.isEmpty {
            let rows = delta.searches.sorted { ($0.key.day, $0.key.query) < ($1.key.day, $1.key.query) }
            try await connection.query("""
                INSERT INTO \(unescaped: schema).day_searches AS q (day, query, searches, zero_results)
                SELECT DATE '1970-01-01' + d, qu, n, z
                FROM unnest(\(rows.map(\.key.day))::integer[], \(rows.map(\.key.query))::text[], \(rows.map(\.value.searches))::bigint[],
                            \(rows.map(\.value.zeroResults))::bigint[]) AS x(d, qu, n, z)
                ON CONFLICT (day, query) DO UPDATE SET searches = q.searches + EXCLUDED.searches, zero_results = q.zero_results + EXCLUDED.zero_results
                """, logger: logger)
        }

        if !delta.views.isEmpty {
            let rows = delta.views.sorted { ($0.key.day, $0.key.kind, $0.key.item.orderKey.0, $0.key.item.orderKey.1)
                < ($1.key.day, $1.key.kind, $1.key.item.orderKey.0, $1.key.item.orderKey.1) }
            try await connection.query("""
                INSERT INTO \(unescaped: schema).day_item_views AS v (day, kind, item_id, views)
                SELECT DATE '1970-01-01' + d, k, i, n
                FROM unnest(\(rows.map(\.key.day))::integer[], \(rows.map(\.key.kind))::"char"[], \(rows.map(\.key.item))::uuid[],
                            \(rows.map(\.value))::bigint[]) AS x(d, k, i, n)
                ON CONFLICT (day, kind, item_id) DO UPDATE SET views = v.views + EXCLUDED.views
                """, logger: logger)
        }

        if !delta.sources.isEmpty {
            let rows = delta.sources.sorted { ($0.key.day, $0.key.via) < ($1.key.day, $1.key.via) }
            try await connection.query("""
                INSERT INTO \(unescaped: schema).day_view_sources AS s (day, via, views)
                SELECT DATE '1970-01-01' + d, v, n
                FROM unnest(\(rows.map(\.key.day))::integer[], \(rows.map(\.key.via))::text[], \(rows.map(\.value))::bigint[]) AS x(d, v, n)
                ON CONFLICT (day, via) DO UPDATE SET views = s.views + EXCLUDED.views
                """, logger: logger)
        }

        if !delta.languages.isEmpty {
            let rows = delta.languages.sorted { ($0.key.day, $0.key.language) < ($1.key.day, $1.key.language) }
            try await connection.query("""
                INSERT INTO \(unescaped: schema).day_languages AS l (day, language, tour_starts, poi_views)
                SELECT DATE '1970-01-01' + d, la, ts, pv
                FROM unnest(\(rows.map(\.key.day))::integer[], \(rows.map(\.key.language))::text[], \(rows.map(\.value.tourStarts))::bigint[],
                            \(rows.map(\.value.poiViews))::bigint[]) AS x(d, la, ts, pv)
                ON CONFLICT (day, language) DO UPDATE SET tour_starts = l.tour_starts + EXCLUDED.tour_starts, poi_views = l.poi_views + EXCLUDED.poi_views
                """, logger: logger)
        }

        if !delta.registrations.isEmpty {
            let rows = delta.registrations.sorted { $0.key < $1.key }
            // Only a newer registration replaces the held one, whatever order they arrive in.
            try await connection.query("""
                INSERT INTO \(unescaped: schema).devices AS d (device_id, registered_at, event_id, platform, model, os_version, app_version)
                SELECT * FROM unnest(\(rows.map(\.key))::uuid[], \(rows.map(\.value.occurredAt))::timestamptz[],
                                     \(rows.map(\.value.eventId))::uuid[], \(rows.map(\.value.platform))::text[],
                                     \(rows.map(\.value.model))::text[], \(rows.map(\.value.osVersion))::text[],
                                     \(rows.map(\.value.appVersion))::text[])
                ON CONFLICT (device_id) DO UPDATE SET registered_at = EXCLUDED.registered_at, event_id = EXCLUDED.event_id,
                    platform = EXCLUDED.platform, model = EXCLUDED.model, os_version = EXCLUDED.os_version, app_version = EXCLUDED.app_version
                WHERE (EXCLUDED.registered_at, EXCLUDED.event_id) > (d.registered_at, d.event_id)
                """, logger: logger)
        }
    }
}

/// An activity row was inserted by another transaction while a batch merged days into it (IngestStore.apply retries).
struct ActivityRace: Error, CustomStringConvertible {
    let rows: Int
    let table: String
    var description: String { "\(rows) \(table) rows were inserted by another batch at the same time; the batch is applied again" }
}
