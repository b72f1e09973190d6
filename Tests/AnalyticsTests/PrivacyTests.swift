import Foundation
import HTTPTypes
import Hummingbird
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
                #expect(UUID(uuidString: made)?.uuidString == made)
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

    /// `openssl dgst -sha256 -hmac KEY -binary`, its first 16 bytes as a uuid: a third implementation.
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
        return IdPseudonyms.uuid(Array(mac)).uuidString
    }

    @Test("rows stored before ids were hashed are converted in batches, reports unchanged, and new events of the same devices join them")
    func conversion() async throws {
        let database = try await TestServices.freshDatabase()
        let workload = Workload(seed: 61, count: 2_000)
        let queries = workload.queries(seed: 62, count: 3)
        try await TestServices.withPostgres(database) { client in
            let logger = TestServices.logger
            // The version before: raw ids. This version cannot write its text columns, so the workload is counted into a
            // scratch schema and copied into version 11's tables, each pseudonym turned back into the id it stands for.
            let seed = try #require(AnalyticsSchema("analytics_seed"))
            try await seed.migrations.run(on: client, logger: logger)
            _ = try await PostgresIngestStore(client: client, schema: seed, logger: logger)
                .apply(IngestBatch(events: Self.pseudonyms.pseudonymized(workload.events), topic: "t", nextOffsets: [0: 1]))
            try await MigrationRunner(schema: "analytics", migrations: AnalyticsMigrations.all.filter { $0.version <= 11 }).run(on: client, logger: logger)
            let raw = Array(Set(workload.events.map(\.deviceId) + workload.events.compactMap(\.touristId)))
            try await client.query("""
                CREATE TABLE public.raw_ids AS SELECT * FROM unnest(\(raw.map(Self.pseudonyms.pseudonym))::uuid[], \(raw)::text[]) AS r(p, raw)
                """, logger: logger)
            let tables = try await client.fetch("""
                SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'analytics' AND table_name <> 'schema_migrations'
                """, as: String.self, logger: logger)
            for table in tables {
                let columns = try await client.fetch("""
                    SELECT column_name::text FROM information_schema.columns WHERE table_schema = 'analytics' AND table_name = \(table) ORDER BY ordinal_position
                    """, as: String.self, logger: logger)
                let ids = IdConversion.tables.first { $0.name == table }?.ids ?? []
                // Columns migration 15 renamed (its fence) have their new names in the seed schema.
                let renamed = ["processed_events.event_id": "id", "erasures.client": "client_address"]
                let values = columns.map { column in
                    let source = renamed["\(table).\(column)"] ?? column
                    return ids.contains(column) ? "(SELECT raw FROM public.raw_ids WHERE p = \(source))" : source
                }
                try await client.query(PostgresQuery(unsafeSQL: """
                    INSERT INTO analytics.\(table) (\(columns.joined(separator: ", "))) SELECT \(values.joined(separator: ", ")) FROM analytics_seed.\(table)
                    """), logger: logger)
            }
            // Before migration 14 a tour's credited arrivals were not in its hour_visits (reports read them from untoured_events).
            try await client.query("""
                UPDATE analytics.hour_visits h SET visits = h.visits - c.n
                FROM (SELECT tour_id, (occurred_at AT TIME ZONE 'UTC')::date AS day, extract(hour FROM occurred_at AT TIME ZONE 'UTC') AS hour, count(*) AS n
                      FROM analytics.untoured_events WHERE tour_id IS NOT NULL AND type = 'poi.arrived' GROUP BY 1, 2, 3) c
                WHERE h.scope = c.tour_id AND h.day = c.day AND h.hour = c.hour
                """, logger: logger)
            let store = PostgresIngestStore(client: client, schema: .live, logger: logger)
            let repository = PostgresReportRepository(client: client, schema: .live, logger: logger)

            #expect(try await AnalyticsMigrations.runner.run(on: client, logger: logger) == AnalyticsMigrations.runner.migrations.map(\.version).filter { $0 >= 12 })
            var conversion = IdConversion(client: client, schema: .live, pseudonyms: Self.pseudonyms, logger: logger)
            conversion.batchPages = 1
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
            // Migration 15 built the funnel's days from the rows not converted then, and their pairs, as the ingest keeps them.
            #expect(try await FunnelPairsTests.mismatches(client) == 0)

            // The same devices again, through the ingest's own hashing: one device, one row, as before the upgrade.
            var random = SplitMix(seed: 63)
            let again = workload.events.prefix(700).map { event in
                var copy = event
                copy.id = random.uuid()
                return copy
            }
            _ = try await store.apply(IngestBatch(events: Self.pseudonyms.pseudonymized(again), topic: "t", nextOffsets: [0: 2]))
            try await AnalyticsHarness.expectReports(repository, equal: Truth(events: workload.events + again), for: queries)
            #expect(try await FunnelPairsTests.mismatches(client) == 0)
        }
    }

    @Test("two canonically equivalent ids (NFC and NFD, different bytes) are two devices with two pseudonyms, in one batch too")
    func canonicallyEquivalentIds() throws {
        let composed = "caf\u{E9}-phone", decomposed = "cafe\u{301}-phone"
        #expect(composed == decomposed && Array(composed.utf8) != Array(decomposed.utf8))
        let pseudonyms = Self.pseudonyms
        #expect(pseudonyms.pseudonym(composed) != pseudonyms.pseudonym(decomposed))
        var random = SplitMix(seed: 64)
        let events = [composed, decomposed, composed].map { device in
            TrackingEvent(id: random.uuid(), type: .tourStarted, deviceId: device, occurredAt: Date(timeIntervalSince1970: 1_790_000_000), tourId: UUID())
        }
        let stored = pseudonyms.pseudonymized(events).map(\.deviceId)
        #expect(stored == [pseudonyms.pseudonym(composed), pseudonyms.pseudonym(decomposed), pseudonyms.pseudonym(composed)])
    }

    /// Statements of the ingest before pseudonyms (main before issue 46), as it sends them: ids bound as text.
    static let textWrites: [(table: String, sql: String)] = [
        ("device_days", """
            INSERT INTO analytics.device_days (scope, day, device_id)
            SELECT s, DATE '1970-01-01' + d, m FROM unnest($1::uuid[], $2::integer[], $3::text[]) AS x(s, d, m)
            ON CONFLICT DO NOTHING
            """),
        ("device_activity", """
            INSERT INTO analytics.device_activity AS a (scope, device_id, days)
            SELECT s, m, range_agg(daterange(DATE '1970-01-01' + d, DATE '1970-01-01' + d, '[]'))
            FROM unnest($1::uuid[], $3::text[], $2::integer[]) AS x(s, m, d) GROUP BY s, m
            ON CONFLICT (scope, device_id) DO UPDATE SET days = a.days + EXCLUDED.days WHERE NOT a.days @> EXCLUDED.days
            """),
        ("stop_visits", """
            INSERT INTO analytics.stop_visits (tour_id, poi_id, day, device_id)
            SELECT t, t, DATE '1970-01-01' + d, dev FROM unnest($1::uuid[], $2::integer[], $3::text[]) AS x(t, d, dev)
            ON CONFLICT DO NOTHING
            """),
        ("credited_members", """
            INSERT INTO analytics.credited_members AS c (tour_id, day, kind, member, events)
            SELECT t, DATE '1970-01-01' + d, 'd', m, 1 FROM unnest($1::uuid[], $2::integer[], $3::text[]) AS x(t, d, m)
            ON CONFLICT (tour_id, day, kind, member) DO UPDATE SET events = c.events + EXCLUDED.events
            """),
    ]

    @Test("the ingest of the version before (ids bound as text) cannot write the new tables: refused as a transient failure, so it retries")
    func oldWritersRefused() async throws {
        try await AnalyticsHarness.withMigratedDatabase { client in
            let logger = TestServices.logger
            // The raw id a phone sends, and one shaped like a pseudonym: neither may be stored.
            for id in ["device-1", Self.pseudonyms.pseudonym("device-1").lowercased()] {
                for (table, sql) in Self.textWrites {
                    var binds = PostgresBindings()
                    binds.append([UUID()])
                    binds.append([20_000])
                    binds.append([id])
                    do {
                        try await client.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
                        Issue.record("\(table) took an id bound as text")
                    } catch {
                        // SQLSTATE class 42: main's TrackingIngest.apply retries such a batch with back-off (never sets it aside).
                        let state = (error as? PSQLError)?.serverInfo?[.sqlState]
                        #expect(state == "42804" || state == "42883", "\(table): \(String(reflecting: error))")
                        #expect(DatabaseFailure(error) == .transient, "\(table)")
                    }
                    let rows = try await client.fetch(PostgresQuery(unsafeSQL: "SELECT count(*)::bigint FROM analytics.\(table)"), as: Int.self, logger: logger)
                    #expect(rows == [0], "\(table)")
                }
            }
        }
    }

    @Test("a replica of the version before the funnel's day pairs (migrations 12-14) is fenced out: its dedupe insert and its erasure are refused as transient")
    func previousWritersFenced() async throws {
        try await AnalyticsHarness.withMigratedDatabase { client in
            let logger = TestServices.logger
            // As main's PostgresIngestStore and PostgresErasureStore send them (migration 15 renamed the columns they name).
            let writes: [(table: String, sql: String, binds: PostgresBindings)] = [
                ("processed_events", """
                    WITH inserted AS (
                        INSERT INTO analytics.processed_events (event_id) SELECT unnest($1::uuid[])
                        ON CONFLICT DO NOTHING RETURNING event_id
                    )
                    SELECT count(*) FROM inserted
                    """, { var b = PostgresBindings(); b.append([UUID()]); return b }()),
                ("erasures", """
                    INSERT INTO analytics.erasures (device_id, requested_by, reason, client, removed)
                    VALUES ($1::uuid, $2, $3, $4, $5::jsonb)
                    """, { var b = PostgresBindings(); b.append(UUID().uuidString); b.append("t"); b.append("t"); b.append("127.0.0.1"); b.append("{}"); return b }()),
            ]
            for (table, sql, binds) in writes {
                do {
                    try await client.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
                    Issue.record("\(table): the previous version's write was taken")
                } catch {
                    // Class 42: the old ingest retries the batch (never sets it aside) until the replica is replaced.
                    let state = (error as? PSQLError)?.serverInfo?[.sqlState]
                    #expect(state == "42703", "\(table): \(String(reflecting: error))")
                    #expect(DatabaseFailure(error) == .transient, "\(table)")
                }
                let rows = try await client.fetch(PostgresQuery(unsafeSQL: "SELECT count(*)::bigint FROM analytics.\(table)"), as: Int.self, logger: logger)
                #expect(rows == [0], "\(table)")
            }
        }
    }

    @Test("the first replica stores its key's fingerprint; a replica with another key refuses to start, naming ANALYTICS_ID_KEY")
    func keyFingerprint() async throws {
        try await AnalyticsHarness.withMigratedDatabase { client in
            let logger = TestServices.logger
            try await IdKeyFingerprint.check(Self.pseudonyms, client: client, schema: .live, logger: logger)
            try await IdKeyFingerprint.check(Self.pseudonyms, client: client, schema: .live, logger: logger)
            let stored = try await client.fetch("SELECT fingerprint FROM analytics.id_key", as: String.self, logger: logger)
            #expect(stored == [Self.pseudonyms.fingerprint] && !stored[0].contains("analytics-test-id-key"))
            let other = try IdPseudonyms(key: "another-analytics-id-key-0123456789")
            await #expect {
                try await IdKeyFingerprint.check(other, client: client, schema: .live, logger: logger)
            } throws: { error in
                (error as? ConfigurationError).map { $0.name == "ANALYTICS_ID_KEY" && $0.message.contains("same key") } ?? false
            }
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
        let auth: HTTPFields = [.authorization: "Bearer \(AnalyticsHarness.erasureToken)"]
        let asked = ByteBuffer(string: #"{"requestedBy": "privacy desk, ticket 4711", "reason": "the owner asked to be forgotten"}"#)
        try await harness.app().test(.router) { client in
            try await harness.waitUntilCounted(all.all.count)
            try await harness.withPostgres { postgres in
                let store = PostgresErasureStore(client: postgres, schema: .live, logger: TestServices.logger)
                // Nothing a phone sent is stored as an id: every id column is a uuid, and holds only pseudonyms of the workload's ids.
                let sent = Set((workload.events.map(\.deviceId) + workload.events.compactMap(\.touristId)).map(Self.pseudonyms.pseudonym))
                for (table, column) in Self.idColumns {
                    let type = try await postgres.fetch("""
                        SELECT data_type FROM information_schema.columns WHERE table_schema = 'analytics' AND table_name = \(table) AND column_name = \(column)
                        """, as: String.self, logger: TestServices.logger)
                    #expect(type == ["uuid"], "\(table).\(column)")
                    let stored = try await postgres.fetch(PostgresQuery(unsafeSQL: "SELECT DISTINCT \(column) FROM analytics.\(table) WHERE \(column) IS NOT NULL"),
                                                          as: String.self, logger: TestServices.logger)
                    #expect(Set(stored).isSubset(of: sent), "\(table).\(column)")
                }
                let before = try await store.rowsNaming(pseudonym)
                #expect(before["device_activity"]! > 0 && before["device_days"]! > 0 && before["tour_marks"]! > 0, "\(before)")

                // Refused without the token, with the read-only reports token (403, saying why), without who asks and why;
                // a malformed id is a 400, not a 5xx.
                #expect(try await client.execute(uri: "/v1/devices/\(erased)", method: .delete, body: asked).status == .unauthorized)
                let reportsOnly = try await client.execute(uri: "/v1/devices/\(erased)", method: .delete,
                                                           headers: [.authorization: "Bearer \(AnalyticsHarness.token)"], body: asked)
                #expect(reportsOnly.status == .forbidden && String(buffer: reportsOnly.body).contains("ERASURE_TOKEN"))
                for body in ["", "{}", #"{"requestedBy": "desk"}"#, #"{"requestedBy": " ", "reason": "asked"}"#, #"{"requestedBy": "desk", "reason": ""}"#] {
                    let answer = try await client.execute(uri: "/v1/devices/\(erased)", method: .delete, headers: auth, body: ByteBuffer(string: body))
                    #expect(answer.status == .badRequest, "\(body)")
                }
                #expect(try await client.execute(uri: "/v1/devices/\(String(repeating: "x", count: 129))", method: .delete, headers: auth,
                                                 body: asked).status == .badRequest)
                #expect(try await client.execute(uri: "/v1/devices/%zz", method: .delete, headers: auth, body: asked).status == .badRequest)
                #expect(try await store.rowsNaming(pseudonym) == before)

                let response = try await client.execute(uri: "/v1/devices/\(erased)", method: .delete, headers: auth, body: asked)
                try #require(response.status == .ok, "\(String(buffer: response.body))")
                struct Answer: Decodable { let pseudonym: String; let erasedAt: String; let removed: [String: Int] }
                let answer = try JSONDecoder().decode(Answer.self, from: Data(buffer: response.body))
                #expect(answer.pseudonym == pseudonym.lowercased())
                #expect(answer.removed["device_activity"] == before["device_activity"] && answer.removed["tour_marks"] == before["tour_marks"]
                        && answer.removed["device_days"] == before["device_days"] && answer.removed["untoured_events"] == before["untoured_events"])
                let after = try await store.rowsNaming(pseudonym)
                #expect(after.values.allSatisfy { $0 == 0 }, "\(after)")
                // Audited with the pseudonym, never the id sent, who asked, why, and from where.
                let audit = try await postgres.fetch("SELECT device_id, requested_by, reason, client_address, removed::text FROM analytics.erasures",
                                                     as: (String, String, String, String, String).self, logger: TestServices.logger)
                #expect(audit.count == 1 && audit[0].0 == pseudonym && !audit[0].4.contains(erased))
                #expect(audit.first.map { ($0.1, $0.2) } ?? ("", "") == ("privacy desk, ticket 4711", "the owner asked to be forgotten"))
                #expect(audit.first.map { !$0.3.isEmpty } == true)

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
                let unknown = try await client.execute(uri: "/v1/devices/never-seen%2Fphone", method: .delete, headers: auth, body: asked)
                #expect(unknown.status == .ok)
                #expect(try await postgres.fetch("SELECT count(*)::bigint FROM analytics.erasures WHERE device_id = \(Self.pseudonyms.pseudonym("never-seen/phone"))::uuid",
                                                 as: Int.self, logger: TestServices.logger).first == 1)
            }
        }
    }
}

extension PrivacyTests {
    @Test("every DELETE of an erasure finds the device by an index led by its pseudonym: with sequential scans off, the plan has none")
    func erasureUsesIndexes() async throws {
        try await AnalyticsHarness.withMigratedDatabase { client in
            let logger = TestServices.logger
            let query = PostgresErasureStore.removeRowsQuery(of: Self.pseudonyms.pseudonym("device-1"), schema: .live)
            let plan = try await client.withConnection { connection in
                try await connection.query("SET enable_seqscan = off", logger: logger)
                return try await connection.query(PostgresQuery(unsafeSQL: "EXPLAIN " + query.sql, binds: query.binds), logger: logger)
                    .decode(String.self).reduce(into: "") { $0 += $1 + "\n" }
            }
            #expect(!plan.contains("Seq Scan"), "\(plan)")
            for table in PostgresErasureStore.tables {
                #expect(plan.contains(" on \(table) ") || plan.contains(" on \(table)\n"), "\(table) not in the plan")
            }
        }
    }

    @Test("an erased device stays gone through replay and activation: its events on the topic are dropped, erasures made meanwhile carried over")
    func erasureSurvivesReplay() async throws {
        let (harness, workload, truth) = try await AnalyticsHarness.loaded(seed: 81, count: 2_000, deliverySeed: 82)
        let byEvents = Dictionary(grouping: workload.events, by: \.deviceId).mapValues(\.count).sorted { ($0.value, $0.key) > ($1.value, $1.key) }
        let (first, second) = (byEvents[0].key, byEvents[1].key)
        let auth: HTTPFields = [.authorization: "Bearer \(AnalyticsHarness.erasureToken)"]
        let asked = ByteBuffer(string: #"{"requestedBy": "privacy desk", "reason": "asked to be forgotten"}"#)
        let settings = try { var settings = try harness.settings(); settings.logLevel = .warning; return settings }()
        try await harness.app().test(.router) { client in
            try await harness.waitUntilCounted(truth.all.count)
            #expect(try await client.execute(uri: "/v1/devices/\(first)", method: .delete, headers: auth, body: asked).status == .ok)
            try await ReplayTool(command: .fromBeginning(.replay), settings: settings, pseudonyms: Self.pseudonyms).run()
            try await harness.withPostgres { postgres in
                let rebuilt = PostgresErasureStore(client: postgres, schema: .replay, logger: TestServices.logger)
                let firstRows = try await rebuilt.rowsNaming(Self.pseudonyms.pseudonym(first))
                let secondRows = try await rebuilt.rowsNaming(Self.pseudonyms.pseudonym(second))
                #expect(firstRows.values.allSatisfy { $0 == 0 }, "\(firstRows)")
                #expect(secondRows["device_activity"] ?? 0 > 0, "\(secondRows)")
            }
            // Erased while the rebuilt tables wait to be swapped in.
            #expect(try await client.execute(uri: "/v1/devices/\(second)", method: .delete, headers: auth, body: asked).status == .ok)
            try await ReplayTool(command: .activate(.replay), settings: settings, pseudonyms: Self.pseudonyms).run()
            try await harness.withPostgres { postgres in
                let live = PostgresErasureStore(client: postgres, schema: .live, logger: TestServices.logger)
                for device in [first, second] {
                    #expect(try await live.rowsNaming(Self.pseudonyms.pseudonym(device)).values.allSatisfy { $0 == 0 }, "\(device)")
                }
                let audit = try await postgres.fetch("SELECT device_id FROM analytics.erasures ORDER BY id", as: String.self, logger: TestServices.logger)
                #expect(audit == [first, second].map(Self.pseudonyms.pseudonym))
            }
            // Every distinct-device figure lacks both; the devices report says so.
            let kept = Truth(events: workload.events.filter { $0.deviceId != first && $0.deviceId != second })
            for query in workload.queries(seed: 83, count: 2) {
                #expect(try await AnalyticsHarness.get(client, "devices", query, as: DeviceReport.self) == kept.devices(query), "\(query)")
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

extension PrivacyTests {
    @Test("an erasure asked while the stored ids are still being converted is a 503 with Retry-After that removes and audits nothing; once converted it is done")
    func erasureWaitsForConversion() async throws {
        try await AnalyticsHarness.withMigratedDatabase { postgres in
            let converted = StartupBarrier()
            let router = Router(context: PeerRequestContext.self)
            ErasureRoutes(store: PostgresErasureStore(client: postgres, schema: .live, logger: TestServices.logger),
                          pseudonyms: Self.pseudonyms, converted: converted, token: AnalyticsHarness.erasureToken,
                          reportsToken: AnalyticsHarness.token, logger: TestServices.logger).register(on: router)
            let auth: HTTPFields = [.authorization: "Bearer \(AnalyticsHarness.erasureToken)"]
            let asked = ByteBuffer(string: #"{"requestedBy": "privacy desk", "reason": "asked to be forgotten"}"#)
            let audited: @Sendable () async throws -> [Int] = { try await postgres.fetch("SELECT count(*)::bigint FROM analytics.erasures", as: Int.self, logger: TestServices.logger) }
            try await Application(router: router).test(.router) { client in
                let waiting = try await client.execute(uri: "/v1/devices/phone-1", method: .delete, headers: auth, body: asked)
                #expect(waiting.status == .serviceUnavailable)
                #expect(waiting.headers[.retryAfter] == "60")
                #expect(String(buffer: waiting.body).contains("converting"))
                #expect(try await audited() == [0])
                converted.open()
                #expect(try await client.execute(uri: "/v1/devices/phone-1", method: .delete, headers: auth, body: asked).status == .ok)
                #expect(try await audited() == [1])
            }
        }
    }

    @Test("who asks and why are limited in bytes: 4 000 combining accents (one character, 8 000 bytes) are refused")
    func erasureFieldLimitsInBytes() throws {
        let accents = "e" + String(repeating: "\u{301}", count: 4_000)
        #expect(accents.count == 1)
        for body in [#"{"requestedBy": "\#(accents)", "reason": "asked"}"#, #"{"requestedBy": "desk", "reason": "\#(accents)"}"#] {
            #expect(throws: Problem.self) { try ErasureRoutes.asked(ByteBuffer(string: body)) }
        }
        #expect((try? ErasureRoutes.asked(ByteBuffer(string: #"{"requestedBy": "dé", "reason": "asked"}"#))) != nil)
    }
}
