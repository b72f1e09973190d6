import Foundation
import PostgresNIO
import Shared
import Testing
import TestSupport
@testable import Catalog

/// Bulk import's set-based path (StagedCatalogTransaction) against the real Postgres: the same outcome,
/// rows, audit and events as the commands sent one at a time, with a chunk's database work done per table.
@Suite("Bulk import in chunks", .stopsIfHung)
struct BulkImportTests {
    let logger = TestServices.logger
    static let now = Date(timeIntervalSince1970: 1_800_000_000.123)

    func withHandler(_ body: @Sendable (CatalogCommandHandler, PostgresClient) async throws -> Void) async throws {
        try await HandlerFixture.with(body)
    }

    func count(_ sql: String, _ client: PostgresClient) async throws -> Int {
        try await client.fetch(PostgresQuery(unsafeSQL: "SELECT count(*)::bigint FROM \(sql)"), as: Int.self, logger: logger)[0]
    }

    static func poi(_ index: Int, latitude: Double = 53.8, category: String? = "Eat/Café") -> PoiContent {
        PoiContent(name: "Place \(index)", summary: "Summary \(index)", description: String(repeating: "Words about the place. ", count: 8),
                   latitude: latitude, longitude: -1.54 + Double(index) / 100_000, category: category, buildings: ["Hall \(index % 7)"],
                   pictures: ["https://media.example.org/\(index).jpg"], links: [MediaLink(name: "Site", type: .page, url: "https://example.org/\(index)")],
                   address: "\(index) Briggate", legacyId: 70_000 + index,
                   // Alt text, so a tour of these publishes when its commands are sent one by one too (imports skip the check).
                   pictureAlts: ["The front of place \(index)"])
    }

    static func poiRow(_ index: Int, latitude: Double = 53.8) -> CatalogBatchRow {
        ContentImportFile.poiRow(label: "poi \(index)", legacyId: 70_000 + index, content: poi(index, latitude: latitude), actor: "import")
    }

    static func rows(pois: Int, tours: Int) -> [CatalogBatchRow] {
        let category = CatalogBatchRow(label: "category Eat/Café", commands: [
            CatalogCommand(commandId: ContentImportFile.stableId(ContentImportFile.Kind.categoryCreate.rawValue, content: "Eat/Café"),
                           action: .createCategory, actor: "import", category: .ensuring(path: "Eat/Café")),
        ])
        let tourRows = (0..<tours).map { tour in
            ContentImportFile.tourRow(label: "tour \(tour)", legacyId: 80_000 + tour, content: TourContent(name: "Walk \(tour)"),
                                      stops: stride(from: tour, to: pois, by: tours).map { ContentImportFile.stableId(ContentImportFile.Kind.poi.rawValue, 70_000 + $0) },
                                      status: .published, actor: "import")
        }
        return [category] + (0..<pois).map { poiRow($0) } + tourRows
    }

    func importCommand(_ rows: [CatalogBatchRow], skip: Bool) -> CatalogCommand {
        CatalogCommand(action: .importBatch, actor: "owner@example.edu", rows: rows, skipInvalidRows: skip)
    }

    @Test("an imported tour's publish reads its stops as their drafts have them: a far draft is refused by its name; a near one is published with the tour")
    func importedTourReadsStopDrafts() async throws {
        try await withHandler { handler, _ in
            let first = try await handler.handle(importCommand(Self.rows(pois: 3, tours: 1), skip: false), now: Self.now)
            try #require(first.outcome == .applied, "\(first.message ?? "")")
            let stops = (0..<3).map { ContentImportFile.stableId(ContentImportFile.Kind.poi.rawValue, 70_000 + $0) }
            func tourRow(_ legacyId: Int) -> CatalogBatchRow {
                ContentImportFile.tourRow(label: "tour \(legacyId)", legacyId: legacyId, content: TourContent(name: "Walk \(legacyId)"),
                                          stops: stops, status: .published, actor: "import")
            }
            // A stop of a published tour takes edits as drafts: this one moved to another continent and renamed.
            var far = Self.poi(1, latitude: -33.9)
            far.name = "Moved far"
            let edit = try await handler.handle(CatalogCommand(action: .updatePoi, actor: "a", entityId: stops[1], poi: far, asDraft: true))
            try #require(edit.outcome == .applied && edit.poi?.draft?.name == "Moved far" && edit.poi?.content.name == "Place 1")

            let refused = try await handler.handle(importCommand([tourRow(81_000)], skip: false))
            #expect(refused.outcome == .rejected)
            #expect(refused.rows?.first?.message?.hasPrefix("Moved far is ") == true, "\(refused.rows?.first?.message ?? "no message")")

            var near = Self.poi(1)
            near.name = "Moved near"
            _ = try await handler.handle(CatalogCommand(action: .updatePoi, actor: "a", entityId: stops[1], poi: near, asDraft: true))
            let applied = try await handler.handle(importCommand([tourRow(81_001)], skip: false))
            #expect(applied.outcome == .applied, "\(applied.rows?.first?.message ?? "")")
            let history = try #require(try await handler.handle(CatalogCommand(action: .history, actor: "a", entityId: stops[1])).history)
            #expect(history.first?.poi?.content.name == "Moved near" && history.first?.poi?.draft == nil)
        }
    }

    @Test("rows saving drafts (a translations file's): a stop of a published tour gets a draft, a POI on no tour its content")
    func draftRows() async throws {
        try await withHandler { handler, client in
            let first = try await handler.handle(importCommand(Self.rows(pois: 3, tours: 1), skip: false), now: Self.now)
            try #require(first.outcome == .applied, "\(first.message ?? "")")
            let stop = ContentImportFile.stableId(ContentImportFile.Kind.poi.rawValue, 70_000)
            let loose = try await handler.handle(CatalogCommand(action: .createPoi, actor: "a", poi: Self.poi(9, category: nil)))
            let looseId = try #require(loose.entityId)
            func draftRow(_ id: UUID, _ index: Int, version: Int) -> CatalogBatchRow {
                var content = Self.poi(index, category: index == 9 ? nil : "Eat/Café")
                content.translations = ["es": ["name": "Lugar \(index)"]]
                return CatalogBatchRow(label: "poi \(index)", commands: [
                    CatalogCommand(action: .updatePoi, actor: "a", entityId: id, expectedVersion: version, poi: content, asDraft: true)])
            }
            let stopVersion = try await client.fetch("SELECT version FROM catalog.pois WHERE id = \(stop)", as: Int.self, logger: logger)[0]
            let result = try await handler.handle(importCommand([draftRow(stop, 0, version: stopVersion), draftRow(looseId, 9, version: 1)], skip: true))
            #expect(result.outcome == .applied && result.rows?.map(\.outcome) == [.applied, .applied], "\(result.rows ?? [])")
            let states = try await client.fetch("SELECT id, content IS NOT NULL AND content LIKE '%Lugar%', draft LIKE '%Lugar%' FROM catalog.pois WHERE id = ANY(\([stop, looseId]))",
                                                as: (UUID, Bool, Bool?).self, logger: logger)
            let byId = Dictionary(uniqueKeysWithValues: states.map { ($0.0, ($0.1, $0.2 ?? false)) })
            #expect(byId[stop]?.0 == false && byId[stop]?.1 == true, "on the feed: the translation waits in the draft")
            #expect(byId[looseId]?.0 == true && byId[looseId]?.1 == false, "on no tour and not published: the content itself")
        }
    }

    @Test("one bad row in a chunk: all or nothing rejects every row with that row's field error; skipping bad rows keeps the others")
    func badRowInChunk() async throws {
        try await withHandler { handler, client in
            var rows = Self.rows(pois: 400, tours: 0)
            rows[318] = Self.poiRow(317, latitude: 95)
            let refused = try await handler.handle(importCommand(rows, skip: false), now: Self.now)
            #expect(refused.outcome == .rejected)
            #expect(refused.message == "1 of 400 rows failed, so nothing was imported")
            let outcomes = try #require(refused.rows)
            #expect(outcomes[318].outcome == .failed)
            #expect(outcomes[318].label == "poi 317")
            #expect(outcomes[318].errors == [FieldError(field: "latitude", message: "Latitude must be between -90 and 90")])
            #expect(outcomes.filter { $0.outcome == .notApplied }.count == 400)
            #expect(try await count("catalog.pois", client) == 0)
            #expect(try await count("catalog.categories", client) == 0)
            #expect(try await count("catalog.audit_log", client) == 0)
            #expect(try await count("catalog.outbox", client) == 1, "only the answer")
            #expect(try await count("catalog.processed_commands", client) == 1, "only the import itself")

            let kept = try await handler.handle(importCommand(rows, skip: true), now: Self.now)
            #expect(kept.outcome == .applied)
            #expect(kept.message == "imported 399 of 400 rows and 1 category; 1 row failed and was skipped")
            #expect(kept.rows?[318].errors.first?.field == "latitude")
            #expect(try await count("catalog.pois", client) == 399)
            #expect(try await count("catalog.pois WHERE content::jsonb->>'legacyId' = '70317'", client) == 0)
            // 2 categories (Eat, Eat/Café) and 399 POIs: an audit row and an event each; one result per command.
            #expect(try await count("catalog.audit_log", client) == 401)
            #expect(try await count("catalog.outbox WHERE topic LIKE '%catalog.events'", client) == 401)
            #expect(try await count("catalog.processed_commands", client) == 1 + 1 + 1 + 399)
        }
    }

    @Test("importing the same rows twice, in several commands: the second changes nothing and publishes no event again")
    func sameFileTwice() async throws {
        try await withHandler { handler, client in
            let phases = ContentImportFile.importCommands(Self.rows(pois: 1_200, tours: 6), actor: "owner@example.edu", skipInvalidRows: false,
                                                          maximumRows: 500)
            #expect(phases.map(\.count) == [1, 3, 1], "categories, POIs in three chunks, tours")
            for command in phases.joined() {
                #expect(try await handler.handle(command, now: Self.now).outcome == .applied)
            }
            let events = try await count("catalog.outbox WHERE topic LIKE '%catalog.events'", client)
            // A tour row's three steps (create, stops, publish) go out as one event, of the state after the last.
            #expect(events == 2 + 1_200 + 6)
            let tourEvents = try await client.fetch("SELECT payload FROM catalog.outbox WHERE payload LIKE '%\"type\":\"tour.changed\"%'",
                                                    as: String.self, logger: logger)
            #expect(tourEvents.count == 6)
            for payload in tourEvents {
                guard case .catalog(let envelope) = try CatalogEventCodec.read(Array(payload.utf8)) else {
                    Issue.record("not a catalog event: \(payload.prefix(200))")
                    continue
                }
                let event = envelope.data
                #expect(event.tour?.version == 3 && event.tour?.status == .published && event.tour?.stops.count == 200, "\(payload.prefix(200))")
            }
            let audit = try await count("catalog.audit_log", client)
            let versions = try await client.fetch("SELECT sum(version)::bigint FROM catalog.tours", as: Int.self, logger: logger)
            #expect(versions == [18])

            // The same file read again: new import commands, the same rows and command ids.
            let again = ContentImportFile.importCommands(Self.rows(pois: 1_200, tours: 6), actor: "owner@example.edu", skipInvalidRows: false,
                                                         maximumRows: 500)
            for command in again.joined() {
                let result = try await handler.handle(command, now: Self.now.addingTimeInterval(60))
                #expect(result.outcome == .applied)
                #expect(result.rows?.allSatisfy { $0.outcome == .applied && $0.message == "already imported, unchanged" } == true)
            }
            #expect(try await count("catalog.outbox WHERE topic LIKE '%catalog.events'", client) == events)
            #expect(try await count("catalog.audit_log", client) == audit)
            #expect(try await client.fetch("SELECT sum(version)::bigint FROM catalog.tours", as: Int.self, logger: logger) == versions)
            #expect(try await count("catalog.pois WHERE version = 1", client) == 1_200)
            #expect(try await count("catalog.tour_stops", client) == 1_200)
        }
    }

    /// What a catalog holds, for comparing two: entities, stops, audit and events, without ids made at random.
    struct Contents: Equatable {
        var pois: [String]
        var tours: [String]
        var stops: [String]
        var audit: [String]
        /// Entity key and event, in the outbox's order.
        var events: [KeyedEvent]
        var results: [String]
    }

    struct KeyedEvent: Equatable {
        let key: String
        let text: String
    }

    func contents(_ client: PostgresClient, stepIds: [UUID]) async throws -> Contents {
        func texts(_ sql: String) async throws -> [String] {
            try await client.fetch(PostgresQuery(unsafeSQL: sql), as: String.self, logger: logger)
        }
        var events: [KeyedEvent] = []
        for (key, payload) in try await client.fetch("SELECT key, payload FROM catalog.outbox WHERE topic LIKE '%catalog.events' ORDER BY id",
                                                     as: (String, String).self, logger: logger) {
            let header = try EnvelopeDecoder.header(Array(payload.utf8))
            guard header.type.hasPrefix("poi.") || header.type.hasPrefix("tour.") else { continue }
            let event = try EnvelopeDecoder.decode(CatalogEvent.self, from: Array(payload.utf8)).data
            events.append(KeyedEvent(key: key, text: header.type + " " + String(decoding: try JSONCoding.encoder.encode(event), as: UTF8.self)))
        }
        let ids = stepIds.map { "'\($0.uuidString.lowercased())'" }.joined(separator: ",")
        return Contents(
            pois: try await texts("SELECT concat_ws(' ', id, version, name, content, updated_at, deleted_at) FROM catalog.pois ORDER BY id"),
            tours: try await texts("SELECT concat_ws(' ', id, version, status, name, content, updated_at, deleted_at) FROM catalog.tours ORDER BY id"),
            stops: try await texts("SELECT concat_ws(' ', tour_id, position, poi_id) FROM catalog.tour_stops ORDER BY tour_id, position"),
            audit: try await texts("""
                SELECT concat_ws(' ', command_id, actor, action, entity_id, before, after) FROM catalog.audit_log
                WHERE action LIKE 'poi.%' OR action LIKE 'tour.%' ORDER BY id
                """),
            events: events,
            // An import row's stored result leaves out the entity's states (`withoutStates`); the rest must match.
            results: try await texts("""
                SELECT concat_ws(' ', command_id, outcome, result::jsonb - 'tour' - 'poi' - 'category' - 'pois' - 'calendarEntry' - 'person' - 'page'
                                                             - 'featured' - 'media')
                FROM catalog.processed_commands WHERE command_id IN (\(ids)) ORDER BY command_id
                """))
    }

    @Test("an import's chunk writes what its commands write when sent one at a time: entities, stops, audit, events and results")
    func sameAsSingleCommands() async throws {
        var planned = Self.rows(pois: 300, tours: 4)
        // Updates and a failed row ride along: the row's create must leave no trace.
        planned.append(CatalogBatchRow(label: "update", commands: [
            CatalogCommand(commandId: UUID(), action: .updatePoi, actor: "import", entityId: planned[5].commands[0].entityId, expectedVersion: 1,
                           poi: Self.poi(4, category: "eat/café")),
        ]))
        planned.append(ContentImportFile.tourRow(label: "broken", legacyId: 89_999, content: TourContent(name: "Broken"), stops: [UUID()],
                                              status: .published, actor: "import"))
        let rows = planned
        let steps = rows.flatMap(\.commands).map { step in
            var step = step
            step.actor = "owner@example.edu"
            return step
        }
        // A category made along a path gets random ids: compared are the POI and tour commands' results.
        let compared = steps.filter { $0.action != .createCategory }.map(\.commandId)
        let viaImport = try await withHandlerResult { handler, client in
            let result = try await handler.handle(importCommand(rows, skip: true), now: Self.now)
            #expect(result.message == "imported 305 of 306 rows and 1 category; 1 row failed and was skipped")
            let storedWithState = try await client.fetch("SELECT count(*)::int FROM catalog.processed_commands WHERE result::jsonb ?| array['poi', 'tour']",
                                                         as: Int.self, logger: logger)
            #expect(storedWithState == [0], "an import row's stored step result leaves out the POI's or tour's state")
            return try await contents(client, stepIds: compared)
        }
        let oneByOne = try await withHandlerResult { handler, client in
            // The broken row, as import undoes it: its create applied alone would stay.
            for step in steps where !rows.last!.commands.map(\.commandId).contains(step.commandId) {
                #expect(try await handler.handle(step, now: Self.now).outcome == .applied)
            }
            return try await contents(client, stepIds: compared)
        }
        #expect(viaImport.pois == oneByOne.pois)
        #expect(viaImport.tours == oneByOne.tours)
        #expect(viaImport.stops == oneByOne.stops)
        #expect(viaImport.audit == oneByOne.audit)
        #expect(viaImport.results == oneByOne.results)
        // The same events, less those an entity's later event in the same write replaces: each tour row's create and stops
        // (its publish carries all three), not the first of POI 5's two (its update is some 300 rows, another write, later).
        #expect(oneByOne.events.count == 301 + 4 * 3)
        #expect(viaImport.events.count == 301 + 4)
        var unmatched = oneByOne.events[...]
        for event in viaImport.events {
            guard let match = unmatched.firstIndex(of: event) else {
                Issue.record("an import event not among the single commands' (or out of their order): \(event.text.prefix(300))")
                break
            }
            unmatched = unmatched[(match + 1)...]
        }
        func last(_ events: [KeyedEvent]) -> [String: String] {
            events.reduce(into: [:]) { last, event in last[event.key] = event.text }
        }
        #expect(last(viaImport.events) == last(oneByOne.events), "each entity's last event is the same")
    }

    @Test("events written together keep each (topic, key)'s last only, where it was; entries without a key all stay, in order")
    func latestStatesPerKey() {
        func entry(_ topic: String, _ key: String?, _ payload: String, partition: Int32? = nil) -> OutboxEntry {
            OutboxEntry(topic: topic, key: key, partition: partition, payload: payload, requestId: nil)
        }
        let entries = [
            entry("events", "a", "a1"), entry("events", nil, "marker 0", partition: 0), entry("events", "b", "b1"), entry("other", "a", "other a1"),
            entry("events", "a", "a2"), entry("events", nil, "marker 1", partition: 1), entry("other", "a", "other a2"), entry("events", "c", "c1"),
            entry("events", "a", "a3"),
        ]
        #expect(Work.latestStates(entries).map(\.payload) == ["marker 0", "b1", "marker 1", "other a2", "c1", "a3"])
        #expect(Work.latestStates([]).isEmpty)
        #expect(Work.latestStates([entry("events", "a", "a1")]).map(\.payload) == ["a1"])
    }

    func withHandlerResult<T: Sendable>(_ body: @Sendable (CatalogCommandHandler, PostgresClient) async throws -> T) async throws -> T {
        try await HandlerFixture.with(body)
    }

    @Test("a big file becomes several import commands, each under the broker's message size and catalog's row limit, rows in order")
    func splitIntoCommands() throws {
        let rows = Self.rows(pois: 9_000, tours: 30)
        let phases = ContentImportFile.importCommands(rows, actor: "import", skipInvalidRows: true)
        #expect(phases.count == 3)
        #expect(phases[0].count == 1 && phases[2].allSatisfy { $0.rows?.allSatisfy { $0.commands[0].action == .createTour } == true })
        #expect(phases[1].count >= 5)
        for command in phases.joined() {
            let bytes = try Envelope(type: command.action.rawValue, source: "test", data: command).encoded().count
            #expect(bytes <= ContentImportFile.maximumCommandBytes + 1_024)
            #expect((command.rows?.count ?? 0) <= ContentImportFile.maximumRows)
            #expect(command.skipInvalidRows == true)
        }
        #expect(phases.joined().flatMap { $0.rows ?? [] } == rows)
    }
}
