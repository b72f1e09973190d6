import Foundation
import Logging
import PostgresNIO
import Shared

/// The reports' SQL: sums of the per-day aggregate rows over the range, and exact distinct counts of the
/// devices and tourists whose active days overlap it (AnalyticsMigrations describes the tables).
struct PostgresReportRepository: ReportRepository {
    let client: PostgresClient
    let schema: AnalyticsSchema
    let logger: Logger

    /// Runs a report query. JIT compilation is off for these connections: the planner's guess for
    /// `unnest` of a multirange (100 rows) makes it compile a query for longer than the query runs.
    private func read<each Column: PostgresDecodable & Sendable>(_ query: PostgresQuery, as types: (repeat each Column).Type,
                                                      logger: Logger) async throws -> [(repeat each Column)] {
        try await client.withConnection { connection in
            try await connection.query("SET jit = off", logger: logger)
            return try await connection.fetch(query, as: types, logger: logger)
        }
    }

    /// The devices (or tourists) that events credited to a tour (`tour` nil: to any) add to the range's days, beside
    /// those its own events count, as `(tour_id, day, member)` rows.
    private func creditedMembers(_ query: ReportQuery, tour: UUID?, kind: AggregateDelta.CreditedMember.Kind) -> String {
        let tourCondition = tour.map { "tour_id = '\($0.uuidString.lowercased())' AND " } ?? ""
        return """
            SELECT tour_id, day, member FROM \(schema.name).credited_members
            WHERE \(tourCondition)kind = '\(kind.rawValue)' AND day BETWEEN DATE '\(query.from)' AND DATE '\(query.to)' AND events > 0
            """
    }

    /// Distinct devices (or tourists) of the query's scope, per scope (`scope`, `members` rows; `scopes` a condition on
    /// `scope`): the sum of the range's day pairs (migration 14), O(days) rows whatever the number of members.
    private func activeMembers(_ query: ReportQuery, scopes: String, kind: AggregateDelta.CreditedMember.Kind) -> String {
        """
            SELECT scope, sum(members)::bigint AS members FROM \(schema.name).active_day_pairs
            WHERE \(scopes) AND kind = '\(kind.rawValue)' AND day BETWEEN DATE '\(query.from)' AND DATE '\(query.to)'
              AND previous < DATE '\(query.from)'
            GROUP BY scope HAVING sum(members) > 0
            """
    }

    /// The members that events credited to a tour (`tour` nil: to any) add to its scope beyond those its own days count
    /// in the range (`tour_id`, `member` rows, a member once per day it was credited).
    private func creditedBeyondOwnDays(_ query: ReportQuery, tour: UUID?, kind: AggregateDelta.CreditedMember.Kind,
                                       table: String, column: String) -> String {
        """
            SELECT c.tour_id, c.member FROM (\(creditedMembers(query, tour: tour, kind: kind))) c
            WHERE NOT EXISTS (SELECT 1 FROM \(schema.name).\(table) a WHERE a.scope = c.tour_id AND a.\(column) = c.member
                                AND a.days && daterange(DATE '\(query.from)', DATE '\(query.to)', '[]'))
            """
    }

    /// `creditedBeyondOwnDays` counted per tour (`scope`, `members` rows).
    private func creditedOnly(_ query: ReportQuery, tour: UUID?, kind: AggregateDelta.CreditedMember.Kind,
                              table: String, column: String) -> String {
        """
            SELECT tour_id AS scope, count(DISTINCT member)::bigint AS members
            FROM (\(creditedBeyondOwnDays(query, tour: tour, kind: kind, table: table, column: column))) c
            GROUP BY tour_id
            """
    }

    /// Distinct devices (or tourists) of the query's scope: those with days in the range, and for a tour also those
    /// the events credited to it add.
    private func members(_ query: ReportQuery, table: String, column: String, kind: AggregateDelta.CreditedMember.Kind) -> String {
        let active = activeMembers(query, scopes: "scope = '\(query.scope.uuidString.lowercased())'", kind: kind)
        guard let tour = query.tourId else { return "SELECT COALESCE(sum(members), 0) FROM (\(active)) a" }
        return "SELECT COALESCE(sum(members), 0) FROM (\(active) UNION ALL \(creditedOnly(query, tour: tour, kind: kind, table: table, column: column))) a"
    }

    func summary(_ query: ReportQuery) async throws -> SummaryReport {
        let s = schema.name, from = query.from.description, to = query.to.description
        let rows = try await read("""
            SELECT
                (\(unescaped: members(query, table: "device_activity", column: "device_id", kind: .device)))::bigint,
                (\(unescaped: members(query, table: "tourist_activity", column: "tourist_id", kind: .tourist)))::bigint,
                COALESCE(t.starts, 0), COALESCE(t.completions, 0), COALESCE(p.views, 0), COALESCE(p.visits, 0), COALESCE(p.plays, 0)
            FROM (SELECT sum(starts)::bigint AS starts, sum(completions)::bigint AS completions FROM \(unescaped: s).day_tour_stats
                  WHERE day BETWEEN \(from)::date AND \(to)::date AND (\(query.tourId)::uuid IS NULL OR tour_id = \(query.tourId))) t,
                 (SELECT sum(views)::bigint AS views, sum(visits)::bigint AS visits, sum(media_plays)::bigint AS plays
                  FROM \(unescaped: s).day_poi_stats WHERE scope = \(query.scope) AND day BETWEEN \(from)::date AND \(to)::date) p
            """, as: (Int, Int, Int, Int, Int, Int, Int).self, logger: logger)
        let (devices, tourists, started, completed, views, visits, plays) = rows[0]
        return SummaryReport(toursStarted: started, toursCompleted: completed, completionRate: .ratio(completed, started),
                             uniqueDevices: devices, uniqueTourists: tourists, poiViews: views, poiVisits: visits, mediaPlays: plays)
    }

    func pois(_ query: ReportQuery) async throws -> [PoiReportRow] {
        let s = schema.name, from = query.from.description, to = query.to.description
        return try await read("""
            SELECT p.poi_id, n.name, sum(p.views)::bigint, sum(p.visits)::bigint, sum(p.dwell_count)::bigint, sum(p.dwell_sum),
                   sum(p.media_plays)::bigint
            FROM \(unescaped: s).day_poi_stats p LEFT JOIN \(unescaped: s).catalog_names n ON n.entity_id = p.poi_id
            WHERE p.scope = \(query.scope) AND p.day BETWEEN \(from)::date AND \(to)::date
            GROUP BY p.poi_id, n.name
            -- A tour's row whose credited events all moved to another tour holds zeros: no event of the POI counts there.
            HAVING sum(p.views) <> 0 OR sum(p.visits) <> 0 OR sum(p.dwell_count) <> 0 OR sum(p.media_plays) <> 0
            ORDER BY 3 DESC, p.poi_id
            """, as: (UUID, String?, Int, Int, Int, Double, Int).self, logger: logger).map { id, name, views, visits, dwellCount, dwellSum, plays in
            PoiReportRow(poiId: id, name: name, views: views, visits: visits,
                         averageDwellSeconds: .mean(sum: dwellSum, count: dwellCount), mediaPlays: plays)
        }
    }

    func tours(_ query: ReportQuery) async throws -> [TourReportRow] {
        let s = schema.name, from = query.from.description, to = query.to.description
        // Every tour event carries its tour, so the tours with device activity in the range are every tour with any event;
        // those with starts, completions or POI events carrying them are listed too, so a tour whose devices were erased
        // or pruned (docs/PRIVACY.md) keeps its sums, with the devices still kept.
        return try await read("""
            WITH devices AS (
                SELECT scope AS tour_id, sum(members)::bigint AS devices FROM (
                    \(unescaped: activeMembers(query, scopes: "scope <> '\(AggregateDelta.Scope.all.uuidString.lowercased())'"
                        + (query.tourId.map { " AND scope = '\($0.uuidString.lowercased())'" } ?? ""), kind: .device))
                    UNION ALL
                    \(unescaped: creditedOnly(query, tour: query.tourId, kind: .device, table: "device_activity", column: "device_id"))
                ) members
                GROUP BY scope
            ), stats AS (
                SELECT tour_id, sum(starts)::bigint AS starts, sum(completions)::bigint AS completions,
                       sum(duration_count)::bigint AS duration_count, sum(duration_sum) AS duration_sum
                FROM \(unescaped: s).day_tour_stats
                WHERE day BETWEEN \(from)::date AND \(to)::date AND (\(query.tourId)::uuid IS NULL OR tour_id = \(query.tourId))
                GROUP BY tour_id
            ), listed AS (
                SELECT tour_id FROM devices
                UNION SELECT tour_id FROM stats
                UNION SELECT scope FROM \(unescaped: s).day_poi_stats
                WHERE scope <> \(AggregateDelta.Scope.all) AND day BETWEEN \(from)::date AND \(to)::date
                  AND (\(query.tourId)::uuid IS NULL OR scope = \(query.tourId))
                  AND (views <> 0 OR visits <> 0 OR dwell_count <> 0 OR media_plays <> 0)
            )
            SELECT l.tour_id, n.name, COALESCE(t.starts, 0), COALESCE(t.completions, 0), COALESCE(d.devices, 0),
                   COALESCE(t.duration_count, 0), COALESCE(t.duration_sum, 0)
            FROM listed l LEFT JOIN devices d USING (tour_id) LEFT JOIN stats t USING (tour_id)
                LEFT JOIN \(unescaped: s).catalog_names n ON n.entity_id = l.tour_id
            ORDER BY 3 DESC, l.tour_id
            """, as: (UUID, String?, Int, Int, Int, Int, Double).self, logger: logger).map { id, name, starts, completions, devices, durations, durationSum in
            TourReportRow(tourId: id, name: name, starts: starts, completions: completions, completionRate: .ratio(completions, starts),
                          uniqueDevices: devices, averageDurationSeconds: .mean(sum: durationSum, count: durations))
        }
    }

    /// Distinct devices of the query's scope per registration (`registrations` keys, the nil UUID for none): the sum of the
    /// range's day pairs per registration (migration 16), O(days × registrations) rows; for a tour plus the devices its
    /// credited events add beyond those its own days count (`creditedBeyondOwnDays`).
    func devices(_ query: ReportQuery) async throws -> DeviceReport {
        let s = schema.name, from = query.from.description, to = query.to.description
        let credited = query.tourId.map { tour in
            """
            UNION ALL
            SELECT \(s).registration_key(r.platform, r.model, r.os_version, r.app_version), count(*) FROM (
                SELECT DISTINCT member FROM (\(creditedBeyondOwnDays(query, tour: tour, kind: .device, table: "device_activity", column: "device_id"))) c
            ) m LEFT JOIN \(s).devices r ON r.device_id = m.member
            GROUP BY 1
            """
        } ?? ""
        var report = DeviceReport(platforms: [:], models: [:], osVersions: [:], appVersions: [:])
        for (platform, model, osVersion, appVersion, count) in try await read("""
            SELECT COALESCE(r.platform, 'unknown'), COALESCE(r.model, 'unknown'), COALESCE(r.os_version, 'unknown'),
                   COALESCE(r.app_version, 'unknown'), sum(c.devices)::bigint
            FROM (
                SELECT registration, sum(members) AS devices FROM \(unescaped: s).registration_day_pairs
                WHERE scope = \(query.scope) AND day BETWEEN \(from)::date AND \(to)::date AND previous < \(from)::date
                GROUP BY registration
                \(unescaped: credited)
            ) c LEFT JOIN \(unescaped: s).registrations r USING (registration)
            GROUP BY 1, 2, 3, 4 HAVING sum(c.devices) > 0
            """, as: (String, String, String, String, Int).self, logger: logger) {
            report.platforms[platform, default: 0] += count
            report.models[model, default: 0] += count
            report.osVersions[osVersion, default: 0] += count
            report.appVersions[appVersion, default: 0] += count
        }
        return report
    }

    /// Devices per day: the kept counters, for a tour plus the members its credited events add to a day it does not count
    /// them on itself (credited_members rows are not kept up once device_days has the member: checked here).
    private func dailyDevices(_ query: ReportQuery) -> String {
        let range = "day BETWEEN DATE '\(query.from)' AND DATE '\(query.to)'"
        let counted = "SELECT day, devices FROM \(schema.name).day_device_counts WHERE scope = '\(query.scope.uuidString.lowercased())' AND \(range)"
        guard let tour = query.tourId else { return counted }
        return """
            SELECT day, sum(devices)::bigint AS devices FROM (
                \(counted)
                UNION ALL
                SELECT c.day, count(*) FROM (\(creditedMembers(query, tour: tour, kind: .device))) c
                WHERE NOT EXISTS (SELECT 1 FROM \(schema.name).device_days d WHERE d.scope = c.tour_id AND d.day = c.day AND d.device_id = c.member)
                GROUP BY c.day
            ) members GROUP BY day
            """
    }

    func daily(_ query: ReportQuery) async throws -> [DailyReportRow] {
        let s = schema.name, from = query.from.description, to = query.to.description
        return try await read("""
            WITH days AS (
                SELECT generate_series(\(from)::date, \(to)::date, interval '1 day')::date AS day
            ), t AS (
                SELECT day, sum(starts)::bigint AS starts, sum(completions)::bigint AS completions FROM \(unescaped: s).day_tour_stats
                WHERE day BETWEEN \(from)::date AND \(to)::date AND (\(query.tourId)::uuid IS NULL OR tour_id = \(query.tourId))
                GROUP BY day
            ), p AS (
                SELECT day, sum(views)::bigint AS views, sum(visits)::bigint AS visits, sum(media_plays)::bigint AS plays
                FROM \(unescaped: s).day_poi_stats WHERE scope = \(query.scope) AND day BETWEEN \(from)::date AND \(to)::date
                GROUP BY day
            ), d AS (
                \(unescaped: dailyDevices(query))
            )
            SELECT to_char(days.day, 'YYYY-MM-DD'), COALESCE(t.starts, 0), COALESCE(t.completions, 0), COALESCE(d.devices, 0),
                   COALESCE(p.views, 0), COALESCE(p.visits, 0), COALESCE(p.plays, 0)
            FROM days LEFT JOIN t USING (day) LEFT JOIN p USING (day) LEFT JOIN d USING (day)
            ORDER BY days.day
            """, as: (String, Int, Int, Int, Int, Int, Int).self, logger: logger).map { date, started, completed, devices, views, visits, plays in
            DailyReportRow(date: date, toursStarted: started, toursCompleted: completed, uniqueDevices: devices,
                           poiViews: views, poiVisits: visits, mediaPlays: plays)
        }
    }

    /// Distinct devices per step from the tour's day pairs in the range (migration 15): O(steps × days × gaps) rows, whatever the
    /// number of devices; a device's own and credited arrivals at a stop are one set of days, so it counts once.
    func funnel(_ query: ReportQuery, tour: UUID) async throws -> FunnelReport {
        let s = schema.name, from = query.from.description, to = query.to.description
        let steps = try await read("""
            WITH counted AS (
                SELECT kind::text AS kind, poi_id, sum(devices)::bigint AS devices FROM \(unescaped: s).funnel_day_pairs
                WHERE tour_id = \(tour) AND day BETWEEN \(from)::date AND \(to)::date AND previous < \(from)::date
                GROUP BY kind, poi_id
            ), stops AS (
                SELECT poi_id, position FROM \(unescaped: s).catalog_names, unnest(stops) WITH ORDINALITY AS x(poi_id, position)
                WHERE entity_id = \(tour)
            )
            SELECT kind, NULL::uuid, NULL::text, devices, 0::bigint FROM counted WHERE kind IN ('s', 'c')
            UNION ALL
            SELECT 'v', stops.poi_id, n.name, COALESCE(c.devices, 0), stops.position
            FROM stops LEFT JOIN counted c ON c.kind = 'v' AND c.poi_id = stops.poi_id
                LEFT JOIN \(unescaped: s).catalog_names n ON n.entity_id = stops.poi_id
            ORDER BY 5
            """, as: (String, UUID?, String?, Int, Int).self, logger: logger)
        return FunnelReport(tourId: tour, started: steps.first { $0.0 == "s" }?.3 ?? 0,
                            steps: steps.compactMap { kind, poi, name, devices, _ in
                                kind == "v" ? poi.map { FunnelStep(poiId: $0, name: name, devices: devices) } : nil },
                            completed: steps.first { $0.0 == "c" }?.3 ?? 0)
    }

    func hours(_ query: ReportQuery) async throws -> HourReport {
        let s = schema.name, from = query.from.description, to = query.to.description
        var grid = Array(repeating: Array(repeating: 0, count: 24), count: 7)
        for (weekday, hour, visits) in try await read("""
            SELECT weekday, hour, sum(visits)::bigint FROM (
                SELECT extract(isodow FROM day)::integer AS weekday, hour::integer AS hour, visits
                FROM \(unescaped: s).hour_visits WHERE scope = \(query.scope) AND day BETWEEN \(from)::date AND \(to)::date
            ) v GROUP BY weekday, hour
            """, as: (Int, Int, Int).self, logger: logger) where (1...7).contains(weekday) && (0..<24).contains(hour) {
            grid[weekday - 1][hour] += visits
        }
        return HourReport(weekdays: zip(HourReport.weekdayNames, grid).map { WeekdayHours(weekday: $0, visits: $1) })
    }

    func searches(_ query: ReportQuery) async throws -> SearchReport {
        let s = schema.name, from = query.from.description, to = query.to.description
        let top = try await read("""
            SELECT query, sum(searches)::bigint, sum(zero_results)::bigint FROM \(unescaped: s).day_searches
            WHERE day BETWEEN \(from)::date AND \(to)::date GROUP BY query ORDER BY 2 DESC, query COLLATE "C" LIMIT 20
            """, as: (String, Int, Int).self, logger: logger)
        let nothing = try await read("""
            SELECT query, sum(zero_results)::bigint FROM \(unescaped: s).day_searches
            WHERE day BETWEEN \(from)::date AND \(to)::date GROUP BY query HAVING sum(zero_results) > 0 ORDER BY 2 DESC, query COLLATE "C" LIMIT 20
            """, as: (String, Int).self, logger: logger)
        return SearchReport(top: top.map { SearchRow(query: $0.0, searches: $0.1, zeroResults: $0.2) },
                            nothingFound: nothing.map { NothingFoundRow(query: $0.0, searches: $0.1) })
    }

    func views(_ query: ReportQuery) async throws -> ViewsReport {
        let s = schema.name, from = query.from.description, to = query.to.description
        var lists: [String: [ViewRow]] = [:]
        for (kind, id, name, views) in try await read("""
            SELECT v.kind::text, v.item_id, n.name, v.views FROM (
                SELECT kind, item_id, sum(views)::bigint AS views,
                       row_number() OVER (PARTITION BY kind ORDER BY sum(views) DESC, item_id) AS place
                FROM \(unescaped: s).day_item_views WHERE day BETWEEN \(from)::date AND \(to)::date GROUP BY kind, item_id
            ) v LEFT JOIN \(unescaped: s).catalog_names n ON n.entity_id = v.item_id
            WHERE v.place <= 20 ORDER BY v.kind, v.views DESC, v.item_id
            """, as: (String, UUID, String?, Int).self, logger: logger) {
            lists[kind, default: []].append(ViewRow(id: id, name: name, views: views))
        }
        let sources = try await read("""
            SELECT via, sum(views)::bigint
            FROM \(unescaped: s).day_view_sources WHERE day BETWEEN \(from)::date AND \(to)::date
            GROUP BY 1 ORDER BY 2 DESC, 1
            """, as: (String, Int).self, logger: logger).map { SourceRow(via: $0.0, views: $0.1) }
        return ViewsReport(events: lists["e"] ?? [], pages: lists["p"] ?? [], people: lists["s"] ?? [], sources: sources)
    }

    func languages(_ query: ReportQuery) async throws -> LanguageReport {
        let s = schema.name, from = query.from.description, to = query.to.description
        return LanguageReport(languages: try await read("""
            SELECT language, sum(tour_starts)::bigint, sum(poi_views)::bigint
            FROM \(unescaped: s).day_languages WHERE day BETWEEN \(from)::date AND \(to)::date
            GROUP BY language HAVING sum(tour_starts) > 0 OR sum(poi_views) > 0 ORDER BY 2 DESC, 3 DESC, language COLLATE "C"
            LIMIT \(LanguageReport.maxRows)
            """, as: (String, Int, Int).self, logger: logger).map { LanguageRow(language: $0.0, tourStarts: $0.1, poiViews: $0.2) })
    }
}
