import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import PostgresNIO
import Shared
import Testing
import TestSupport
@testable import Analytics

/// docs/PRIVACY.md: ids stored only as pseudonyms, rows from before converted, and `DELETE /v1/devices/{deviceId}`.
@Suite("Privacy: pseudonymous ids and erasure", .serialized, .stopsIfHung)
struct PrivacyTests {
    static let pseudonyms = AnalyticsHarness.pseudonyms

    /// Every column that holds a device or tourist id, as `table.column`.
    static var idColumns: [(table: String, column: String)] {
        IdConversion.tables.flatMap { table in table.ids.sorted().map { (table.name, $0) } }
    }

    @Test("the pseudonym is HMAC-SHA-256 as openssl computes it, and the SQL form used for stored rows gives the same")
    func pseudonymsAgree() async throws {
        let ids = ["device-1", "", "ü-phone ☃", String(repeating: "x", count: 128), "a'b\"c\\d", "tourist-77"]
        // A long key (hashed first, RFC 2104) and a short one.
        for key in ["analytics-test-id-key-0123456789", String(repeating: "k", count: 100)] {
            let pseudonyms = try IdPseudonyms(key: key)
            for id in ids {
                let made = pseudonyms.pseudonym(id)
                #expect(made.utf8.count == IdPseudonyms.length)
                #expect(made.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
                #expect(made == (try Self.openssl(key: key, id)), "\(id)")
            }
            let database = try await TestServices.freshDatabase()
            try await TestServices.withPostgres(database) { client in
                for id in ids {
                    var binds = PostgresBindings()
                    binds.append(id)
                    binds.append(ByteBuffer(bytes: pseudonyms.innerPad))
                    binds.append(ByteBuffer(bytes: pseudonyms.outerPad))
                    let sql = "SELECT " + IdPseudonyms.sqlPseudonym("$1::text", inner: "$2", outer: "$3")
                    let fromSQL = try await client.fetch(PostgresQuery(unsafeSQL: sql, binds: binds), as: String.self, logger: TestServices.logger)
                    #expect(fromSQL.first == pseudonyms.pseudonym(id), "\(id)")
                }
            }
        }
        #expect(throws: ConfigurationError.self) { try IdPseudonyms(key: "too-short") }
    }

    /// `openssl dgst -sha256 -hmac KEY -binary`, its first 16 bytes in base64url without padding: a third implementation.
    static func openssl(key: String, _ id: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = ["dgst", "-sha256", "-hmac", key, "-binary"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data(id.utf8))
        try input.fileHandleForWriting.close()
        let mac = output.fileHandleForReading.readDataToEndOfFile().prefix(IdPseudonyms.bytesKept)
        process.waitUntilExit()
        return mac.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    @Test("rows stored before ids were hashed are converted in batches, reports unchanged, and new events of the same devices join them")
    func conversion() async throws {
        let database = try await TestServices.freshDatabase()
        let workload = Workload(seed: 61, count: 2_000)
        let queries = workload.queries(seed: 62, count: 3)
        try await TestServices.withPostgres(database) { client in
            let logger = TestServices.logger
            // The version before: raw ids. The store writes today's tables, so the workload is counted in a schema with every
            // migration and its rows copied into the tables version 11 has (the columns it has).
            try await MigrationRunner(schema: "analytics", migrations: AnalyticsMigrations.all.filter { $0.version <= 11 }).run(on: client, logger: logger)
            try await AnalyticsSchema.replay.migrations.run(on: client, logger: logger)
            _ = try await PostgresIngestStore(client: client, schema: .replay, logger: logger)
                .apply(IngestBatch(events: workload.events, topic: "t", nextOffsets: [0: 1]))
            try await AnalyticsHarness.expectReports(PostgresReportRepository(client: client, schema: .replay, logger: logger),
                                                     equal: Truth(events: workload.events), for: queries)
            try await client.query("""
                DO $$
                DECLARE t record;
                BEGIN
                    FOR t IN SELECT c.table_name, string_agg(quote_ident(c.column_name), ', ' ORDER BY c.ordinal_position) AS columns
                             FROM information_schema.columns c JOIN pg_tables p ON p.schemaname = c.table_schema AND p.tablename = c.table_name
                             WHERE c.table_schema = 'analytics' AND c.table_name <> 'schema_migrations' GROUP BY c.table_name
                    LOOP
                        EXECUTE format('INSERT INTO analytics.%I (%s) SELECT %s FROM analytics_replay.%I', t.table_name, t.columns, t.columns, t.table_name);
                    END LOOP;
                END
                $$
                """, logger: logger)
            // Before migration 14 a tour's credited arrivals were not in its hour_visits (reports read them from untoured_events).
            try await client.query("""
                UPDATE analytics.hour_visits h SET visits = h.visits - c.n
                FROM (SELECT tour_id, (occurred_at AT TIME ZONE 'UTC')::date AS day, extract(hour FROM occurred_at AT TIME ZONE 'UTC') AS hour, count(*) AS n
                      FROM analytics.untoured_events WHERE tour_id IS NOT NULL AND type = 'poi.arrived' GROUP BY 1, 2, 3) c
                WHERE h.scope = c.tour_id AND h.day = c.day AND h.hour = c.hour
                """, logger: logger)
            let store = PostgresIngestStore(client: client, schema: .live, logger: logger)
            let repository = PostgresReportRepository(client: client, schema: .live, logger: logger)

            #expect(try await AnalyticsMigrations.runner.run(on: client, logger: logger) == [12, 13, 14])
            var conversion = IdConversion(client: client, schema: .live, pseudonyms: Self.pseudonyms, logger: logger)
            conversion.batchSize = 97
            let moved = try await conversion.run()
            #expect(moved["device_activity"] ?? 0 > 0 && moved["tour_marks"] ?? 0 > 0 && moved["untoured_events"] ?? 0 > 0)
            #expect(try await client.fetch("SELECT count(*)::bigint FROM pg_tables WHERE schemaname = 'analytics' AND tablename LIKE '%unhashed'",
                                           as: Int.self, logger: logger).first == 0)
            // Only pseudonyms, each of an id the workload sent.
            let expected = Set((workload.events.map(\.deviceId) + workload.events.compactMap(\.touristId)).map(Self.pseudonyms.pseudonym))
            for (table, column) in Self.idColumns {
                let stored = try await client.fetch(PostgresQuery(unsafeSQL: "SELECT DISTINCT \(column) FROM analytics.\(table) WHERE \(column) IS NOT NULL"),
                                                    as: String.self, logger: logger)
                #expect(!stored.isEmpty && Set(stored).isSubset(of: expected), "\(table).\(column)")
            }
            try await AnalyticsHarness.expectReports(repository, equal: Truth(events: workload.events), for: queries)
            #expect(try await conversion.run().isEmpty)

            // The same devices again, through the ingest's own hashing: one device, one row, as before the upgrade.
            var random = SplitMix(seed: 63)
            let again = workload.events.prefix(700).map { event in
                var copy = event
                copy.id = random.uuid()
                return copy
            }
            _ = try await store.apply(IngestBatch(events: Self.pseudonyms.pseudonymized(again), topic: "t", nextOffsets: [0: 2]))
            try await AnalyticsHarness.expectReports(repository, equal: Truth(events: workload.events + again), for: queries)
        }
    }

    @Test("DELETE /v1/devices/{id} removes the device from every event-level table, is audited, and reports say what PRIVACY.md says")
    func erasure() async throws {
        let (harness, workload, _) = try await AnalyticsHarness.loaded(seed: 71, count: 3_000, deliverySeed: 72)
        let names = try await harness.saveCatalog(workload)
        let all = Truth(events: workload.events, names: names)
        let counts = Dictionary(grouping: workload.events, by: \.deviceId).mapValues(\.count)
        let erased = counts.max { ($0.value, $0.key) < ($1.value, $1.key) }!.key
        let kept = Truth(events: workload.events.filter { $0.deviceId != erased }, names: names)
        let pseudonym = Self.pseudonyms.pseudonym(erased)
        let auth: HTTPFields = [.authorization: "Bearer \(AnalyticsHarness.token)"]
        try await harness.app().test(.router) { client in
            try await harness.waitUntilCounted(all.all.count)
            try await harness.withPostgres { postgres in
                let store = PostgresErasureStore(client: postgres, schema: .live, logger: TestServices.logger)
                // Nothing a phone sent is stored as an id: every id column holds 22 base64url characters, the raw id nowhere.
                for (table, column) in Self.idColumns {
                    let odd = try await postgres.fetch(PostgresQuery(unsafeSQL: """
                        SELECT count(*)::bigint FROM analytics.\(table) WHERE \(column) !~ '^[A-Za-z0-9_-]{22}$' OR \(column) LIKE 'device-%'
                        """), as: Int.self, logger: TestServices.logger)
                    #expect(odd.first == 0, "\(table).\(column)")
                }
                let before = try await store.rowsNaming(pseudonym)
                #expect(before["device_activity"]! > 0 && before["device_days"]! > 0 && before["tour_marks"]! > 0, "\(before)")

                // Refused without the token, and a malformed id is a 400, not a 5xx.
                #expect(try await client.execute(uri: "/v1/devices/\(erased)", method: .delete).status == .unauthorized)
                #expect(try await client.execute(uri: "/v1/devices/\(String(repeating: "x", count: 129))", method: .delete, headers: auth).status
                        == .badRequest)
                #expect(try await client.execute(uri: "/v1/devices/%zz", method: .delete, headers: auth).status == .badRequest)
                #expect(try await store.rowsNaming(pseudonym) == before)

                let response = try await client.execute(uri: "/v1/devices/\(erased)", method: .delete, headers: auth)
                try #require(response.status == .ok, "\(String(buffer: response.body))")
                struct Answer: Decodable { let pseudonym: String; let erasedAt: String; let removed: [String: Int] }
                let answer = try JSONDecoder().decode(Answer.self, from: Data(buffer: response.body))
                #expect(answer.pseudonym == pseudonym)
                #expect(answer.removed["device_activity"] == before["device_activity"] && answer.removed["tour_marks"] == before["tour_marks"]
                        && answer.removed["device_days"] == before["device_days"] && answer.removed["untoured_events"] == before["untoured_events"])
                let after = try await store.rowsNaming(pseudonym)
                #expect(after.values.allSatisfy { $0 == 0 }, "\(after)")
                // Audited with the pseudonym, never the id sent.
                let audit = try await postgres.fetch("SELECT device_id, requested_by, removed::text FROM analytics.erasures", as: (String, String, String).self,
                                                     logger: TestServices.logger)
                #expect(audit.count == 1 && audit[0].0 == pseudonym && !audit[0].2.contains(erased) && audit[0].1.hasPrefix("reports token from"))

                // The reports: sums keep the device's events, every distinct-device figure loses it (PRIVACY.md "Erasure").
                let expected = ErasedTruth(all: all, kept: kept)
                for query in workload.queries(seed: 73, count: 4) {
                    try await expected.expectReports(client, query, stops: workload.stops)
                }

                // A redelivery of the device's events is recognised by the ids kept in processed_events: nothing comes back.
                let deviceEvents = workload.events.filter { $0.deviceId == erased }
                try await harness.produce(deviceEvents)
                let messages = workload.deliveries(seed: 72).count + deviceEvents.count
                let read = try await TestServices.eventually(timeout: .seconds(60), interval: .milliseconds(100)) {
                    try await postgres.fetch("SELECT COALESCE(sum(next_offset), 0)::bigint FROM analytics.consumer_offsets", as: Int.self,
                                             logger: TestServices.logger).first == messages
                }
                try #require(read)
                #expect(try await harness.counted() == all.all.count)
                #expect(try await store.rowsNaming(pseudonym).values.allSatisfy { $0 == 0 })

                // An unknown device: nothing to remove, still answered and audited.
                let unknown = try await client.execute(uri: "/v1/devices/never-seen%2Fphone", method: .delete, headers: auth)
                #expect(unknown.status == .ok)
                #expect(try await postgres.fetch("SELECT count(*)::bigint FROM analytics.erasures WHERE device_id = \(Self.pseudonyms.pseudonym("never-seen/phone"))",
                                                 as: Int.self, logger: TestServices.logger).first == 1)
            }
        }
    }
}

/// What the reports say after a device is erased (docs/PRIVACY.md "Erasure"): sums of events from every event (`all`),
/// distinct devices from the events of the devices kept (`kept`).
struct ErasedTruth {
    let all: Truth
    let kept: Truth

    func summary(_ query: ReportQuery) -> SummaryReport {
        var report = all.summary(query)
        report.uniqueDevices = kept.summary(query).uniqueDevices
        return report
    }

    func daily(_ query: ReportQuery) -> [DailyReportRow] {
        zip(all.daily(query), kept.daily(query)).map { all, kept in
            var row = all
            row.uniqueDevices = kept.uniqueDevices
            return row
        }
    }

    /// A tour stays listed while devices, starts, completions or POI events carrying it are left in the range.
    func tours(_ query: ReportQuery) -> [TourReportRow] {
        let keptRows = Dictionary(uniqueKeysWithValues: kept.tours(query).map { ($0.tourId, $0) })
        let events = all.inRange(query)
        return all.tours(query).compactMap { row in
            let poiEvents = events.contains { $0.tourId == row.tourId && TourAttribution.creditedTypes.contains($0.type) }
            guard keptRows[row.tourId] != nil || row.starts > 0 || row.completions > 0 || poiEvents else { return nil }
            var copy = row
            copy.uniqueDevices = keptRows[row.tourId]?.uniqueDevices ?? 0
            return copy
        }
    }

    func expectReports(_ client: some TestClientProtocol, _ query: ReportQuery, stops: [UUID: [UUID]],
                       sourceLocation: SourceLocation = #_sourceLocation) async throws {
        typealias H = AnalyticsHarness
        if let tour = query.tourId {
            #expect(try await H.get(client, "funnel", query, as: FunnelReport.self) == kept.funnel(query, stops: stops[tour] ?? []),
                    "funnel \(query)", sourceLocation: sourceLocation)
        }
        #expect(try await H.get(client, "hours", query, as: HourReport.self) == all.hours(query), "hours \(query)", sourceLocation: sourceLocation)
        #expect(try await H.get(client, "searches", query, as: SearchReport.self) == all.searches(query), "searches \(query)",
                sourceLocation: sourceLocation)
        let summary = try await H.get(client, "summary", query, as: SummaryReport.self)
        #expect(summary.matches(self.summary(query)), "summary \(query): \(summary) vs \(self.summary(query))", sourceLocation: sourceLocation)
        #expect(try await H.get(client, "pois", query, as: H.PoiList.self).pois.matches(all.pois(query)), "pois \(query)",
                sourceLocation: sourceLocation)
        let tours = try await H.get(client, "tours", query, as: H.TourList.self).tours
        #expect(tours.matches(self.tours(query)), "tours \(query): \(tours) vs \(self.tours(query))", sourceLocation: sourceLocation)
        #expect(try await H.get(client, "devices", query, as: DeviceReport.self) == kept.devices(query), "devices \(query)",
                sourceLocation: sourceLocation)
        #expect(try await H.get(client, "daily", query, as: H.DayList.self).days == daily(query), "daily \(query)", sourceLocation: sourceLocation)
        #expect(try await H.get(client, "languages", query, as: LanguageReport.self) == all.languages(query), "languages \(query)",
                sourceLocation: sourceLocation)
    }
}
