import Foundation
import PostgresNIO
import Shared
import Testing
import TestSupport
@testable import Catalog

/// The category tree and bulk import, against the real Postgres.
@Suite("Categories and bulk import", .stopsIfHung)
struct ImportAndCategoryTests {
    let logger = TestServices.logger

    func withHandler(_ body: @Sendable (CatalogCommandHandler, PostgresClient) async throws -> Void) async throws {
        try await HandlerFixture.with(body)
    }

    func count(_ table: String, _ client: PostgresClient) async throws -> Int {
        try await client.fetch(PostgresQuery(unsafeSQL: "SELECT count(*)::bigint FROM catalog.\(table) WHERE deleted_at IS NULL"),
                               as: Int.self, logger: logger)[0]
    }

    static let demoFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../deploy/demo/uncw-itour.json")

    // MARK: categories

    @Test("a renamed category renames its subcategories and moves its POIs, each with a new version")
    func renameCascades() async throws {
        try await withHandler { handler, _ in
            let ensure = try await handler.handle(CatalogCommand(action: .createCategory, actor: "a", category: .ensuring(path: "Shop/Fashion/Shoes")))
            #expect(ensure.category?.path == "Shop/Fashion/Shoes")
            let again = try await handler.handle(CatalogCommand(action: .createCategory, actor: "a", category: .ensuring(path: "shop / fashion")))
            #expect(again.outcome == .applied)
            #expect(again.category?.path == "Shop/Fashion")
            #expect(again.category?.version == 1)
            let poi = try await handler.handle(CatalogCommand(action: .createPoi, actor: "a",
                                                              poi: PoiContent(name: "Bank", latitude: 53.8, longitude: -1.5, category: "SHOP/fashion/shoes")))
            #expect(poi.poi?.content.category == "Shop/Fashion/Shoes")
            let fashion = try #require(again.entityId)
            let renamed = try await handler.handle(CatalogCommand(action: .renameCategory, actor: "a", entityId: fashion, expectedVersion: 1,
                                                                  category: CategoryContent(name: "Clothes")))
            #expect(renamed.category?.path == "Shop/Clothes")
            let stored = try await handler.handle(CatalogCommand(action: .updatePoi, actor: "a", entityId: poi.entityId, expectedVersion: 1,
                                                                 poi: PoiContent(name: "Bank", latitude: 53.8, longitude: -1.5)))
            #expect(stored.outcome == .conflict, "the rename gave the POI a new version")
            #expect(stored.poi?.content.category == "Shop/Clothes/Shoes")
            // In use (a subcategory, then a POI): refused; once unused: deleted.
            let inUse = try await handler.handle(CatalogCommand(action: .deleteCategory, actor: "a", entityId: fashion))
            #expect(inUse.outcome == .rejected)
            let shoes = try #require(ensure.entityId)
            let poiInUse = try await handler.handle(CatalogCommand(action: .deleteCategory, actor: "a", entityId: shoes))
            #expect(poiInUse.errors.first?.message.contains("1 POI is in Shop/Clothes/Shoes; give it another category first") == true)
            _ = try await handler.handle(CatalogCommand(action: .deletePoi, actor: "a", entityId: poi.entityId))
            #expect(try await handler.handle(CatalogCommand(action: .deleteCategory, actor: "a", entityId: shoes)).outcome == .applied)
            let recreated = try await handler.handle(CatalogCommand(action: .createCategory, actor: "a",
                                                                    category: CategoryContent(name: "Shoes", parentId: fashion)))
            #expect(recreated.category?.path == "Shop/Clothes/Shoes", "a deleted category's name is free again")
        }
    }

    @Test("a POI in several categories: each must be in the tree (tree spelling, listed twice counts once); a rename moves each, a delete sees each")
    func severalCategories() async throws {
        try await withHandler { handler, client in
            for path in ["Eat/Cafés", "See/Museums"] {
                _ = try await handler.handle(CatalogCommand(action: .createCategory, actor: "a", category: .ensuring(path: path)))
            }
            let unknown = try await handler.handle(CatalogCommand(action: .createPoi, actor: "a",
                poi: PoiContent(name: "Musée Café", latitude: 53.8, longitude: -1.5, categories: ["Eat/Cafés", "See/Zoos"])))
            #expect(unknown.outcome == .rejected)
            #expect(unknown.errors.map(\.field) == ["categories"])
            let created = try await handler.handle(CatalogCommand(action: .createPoi, actor: "a",
                poi: PoiContent(name: "Musée Café", latitude: 53.8, longitude: -1.5, categories: ["eat/cafés", " ", "SEE/museums", "Eat/Cafés"])))
            #expect(created.poi?.content.categories == ["Eat/Cafés", "See/Museums"])
            #expect(created.poi?.content.category == "Eat/Cafés")

            let museums = try #require(try await client.fetch("SELECT id FROM catalog.categories WHERE path = 'See/Museums'", as: UUID.self,
                                                                logger: logger).first)
            let inUse = try await handler.handle(CatalogCommand(action: .deleteCategory, actor: "a", entityId: museums))
            #expect(inUse.outcome == .rejected, "in use as the POI's second category")
            let see = try #require(try await client.fetch("SELECT id FROM catalog.categories WHERE path = 'See'", as: UUID.self, logger: logger).first)
            _ = try await handler.handle(CatalogCommand(action: .renameCategory, actor: "a", entityId: see, expectedVersion: 1,
                                                        category: CategoryContent(name: "Visit")))
            let moved = try await client.fetch("SELECT content::text FROM catalog.pois", as: String.self, logger: logger)
            let content = try CatalogEventCodec.readPoiContent(Array(moved[0].utf8))
            #expect(content.categories == ["Eat/Cafés", "Visit/Museums"])
        }
    }

    @Test("a category's name in other languages: kept and sent with it, replaced by a rename; a change of them alone moves no POI; bad ones refused")
    func categoryTranslations() async throws {
        try await withHandler { handler, client in
            let created = try await handler.handle(CatalogCommand(action: .createCategory, actor: "a",
                category: CategoryContent(name: "Eat", translations: ["ES": ["name": "Comer"], "fr": ["name": ""]])))
            #expect(created.category?.translations == ["es": ["name": "Comer"]], "tags in their conventional case, empty texts dropped")
            let eat = try #require(created.entityId)
            let poi = try await handler.handle(CatalogCommand(action: .createPoi, actor: "a",
                                                              poi: PoiContent(name: "Café", latitude: 53.8, longitude: -1.5, category: "Eat")))
            let renamed = try await handler.handle(CatalogCommand(action: .renameCategory, actor: "a", entityId: eat, expectedVersion: 1,
                category: CategoryContent(name: "Eat", translations: ["es": ["name": "Comida"], "de": ["name": "Essen"]])))
            #expect(renamed.outcome == .applied && renamed.category?.translations == ["es": ["name": "Comida"], "de": ["name": "Essen"]])
            let stored = try await client.fetch("SELECT translations FROM catalog.categories WHERE id = \(eat)", as: String?.self, logger: logger)
            #expect(try stored.first.flatMap { $0 }.map { try JSONDecoder().decode(Translations.self, from: Data($0.utf8)) }
                        == ["es": ["name": "Comida"], "de": ["name": "Essen"]])
            let poiVersion = try await client.fetch("SELECT version FROM catalog.pois WHERE id = \(try #require(poi.entityId))", as: Int.self, logger: logger)
            #expect(poiVersion == [1], "the path did not move, so the POI did not change")

            for (translations, field) in [(["es": ["name": "Comer/Beber"]], "translations.es.name"), (["es": ["nombre": "Comer"]], "translations.es"),
                                          (["<x>": ["name": "Comer"]], "translations")] {
                let refused = try await handler.handle(CatalogCommand(action: .renameCategory, actor: "a", entityId: eat, expectedVersion: 2,
                                                                      category: CategoryContent(name: "Eat", translations: translations)))
                #expect(refused.outcome == .rejected && refused.errors.map(\.field).contains(field), "\(translations): \(refused.errors)")
            }
            let cleared = try await handler.handle(CatalogCommand(action: .renameCategory, actor: "a", entityId: eat, expectedVersion: 2,
                                                                  category: CategoryContent(name: "Food")))
            #expect(cleared.category?.translations == nil && cleared.category?.path == "Food", "a rename without translations sends none")
            // By path (an import's way): the leaf it makes takes them; a malformed one is refused.
            let byPath = try await handler.handle(CatalogCommand(action: .createCategory, actor: "a",
                category: CategoryContent(name: "", path: "Food/Cafés", translations: ["es": ["name": "Cafeterías"]])))
            #expect(byPath.category?.path == "Food/Cafés" && byPath.category?.translations == ["es": ["name": "Cafeterías"]])
            let badPath = try await handler.handle(CatalogCommand(action: .createCategory, actor: "a",
                category: CategoryContent(name: "", path: "Food/Bars", translations: ["es": ["name": "Bares/Pubs"]])))
            #expect(badPath.outcome == .rejected && badPath.errors.map(\.field) == ["translations.es.name"], "\(badPath.errors)")
        }
    }

    // MARK: import

    func rows(_ csv: String) throws -> ContentImportFile.Plan {
        try ContentImportFile.plan(Data(csv.utf8), format: .csv, actor: "import")
    }

    static let csv = """
        kind,legacyId,name,latitude,longitude,category,buildings,links,stops,status
        poi,501,"Bank Fashion, Leeds",53.7965,-1.5426,Shop/Fashion,Bank;Annex,"Site|page|https://example.com"
        poi,502,Corn Exchange,53.7961,-1.5404,Shop,,
        tour,50,Leeds shops,,,,,,501;502,published
        """

    @Test("CSV rows become commands: categories along the paths first, quoted commas kept, lists split")
    func csvPlan() throws {
        let plan = try rows(Self.csv)
        #expect(plan.unreadable.isEmpty)
        #expect(plan.rows.map(\.label) == ["category Shop", "category Shop/Fashion", "line 2", "line 3", "line 4"])
        let bank = try #require(plan.rows[2].commands.first?.poi)
        #expect(bank.name == "Bank Fashion, Leeds")
        #expect(bank.buildings == ["Bank", "Annex"])
        #expect(bank.links == [MediaLink(name: "Site", type: .page, url: "https://example.com")])
        #expect(plan.rows[4].commands.map(\.action) == [.createTour, .setTourStops, .setTourStatus])
        // The same file gives the same ids, so a second import is recognised.
        #expect(try rows(Self.csv).rows.flatMap(\.commands).map(\.commandId) == plan.rows.flatMap(\.commands).map(\.commandId))

        let bad = try rows("""
            name,latitude,longitude,links
            Nowhere,north,0,
            Elsewhere,1,2,"a|film|http://x.org"
            "Fine",1,2,
            """)
        #expect(bad.unreadable.map(\.label) == ["line 2", "line 3"])
        #expect(bad.unreadable[0].errors.first?.message == "Latitude must be a number between -90 and 90")
        #expect(bad.rows.map(\.label) == ["line 4"])
        #expect(throws: ContentImportFile.FileError.self) { try rows("name,colour\nx,red") }
        #expect(throws: ContentImportFile.FileError.self) { try rows("name\n\"never closed") }
    }

    static let recordsCSV = """
        kind,legacyId,name,latitude,longitude,category,slug,body,startsAt,endsAt,timeZone,allDay,place,url,recurrence,exceptionDates,target,imageUrl,imageAlt,order,status
        poi,601,Hoggard Hall,34.2263,-77.8721,Buildings,,,,,,,,,,,,,,,published
        page,,About Us,,,,about-us,Hello,,,,,,,,,,,,2,
        event,,Campus Visit,,,Visits/Tours,,,2027-01-05T10:00,2027-01-05T11:30,America/New_York,,601,https://example.edu/visit,FREQ=WEEKLY;BYDAY=TU;UNTIL=20270330,2027-01-19T10:00;2027-02-02T10:00,,,,,
        event,,Open Day,,,,,,2027-04-10,2027-04-10,America/New_York,yes,Main lawn,,,,,,,,
        featured,,Come and see,,,,,,,,,,,,,,event:campus visit,https://images.example.edu/visit.jpg,Students on the lawn,1,
        featured,,,,,,,,,,,,,,,,page:ABOUT-US,https://images.example.edu/about.jpg,The quad,2,
        featured,,,,,,,,,,,,,,,,poi:601,https://images.example.edu/hall.jpg,Hoggard Hall,3,
        featured,,,,,,,,,,,,,,,,event:No such event,https://images.example.edu/x.jpg,x,,
        event,,Bad rule,,,,,,2027-01-05T10:00,2027-01-05T11:00,America/New_York,maybe,,,FREQ=HOURLY,,,,,,
        """

    @Test("CSV events (an RRULE, EXDATEs, a place by legacyId or text) and featured items (targets by legacyId, title or slug), applied")
    func csvEventsAndFeatured() async throws {
        let plan = try rows(Self.recordsCSV)
        #expect(plan.unreadable.map(\.label) == ["line 10", "line 9"], "events are read before the featured items that name them")
        #expect(plan.unreadable[1].errors.map(\.field) == ["target"])
        #expect(plan.unreadable[0].errors.map(\.message) == ["allDay is true or false, got \"maybe\"",
                                                             "FREQ is DAILY, WEEKLY or MONTHLY, got \"HOURLY\""])
        #expect(plan.calendar == 2 && plan.featured == 3 && plan.pages == 1)
        let events = plan.rows.compactMap { $0.commands.first?.calendarEntry }
        let visit = try #require(events.first)
        #expect(visit.recurrence == CalendarRecurrence(frequency: .weekly, byDay: ["TU"], until: "2027-03-30"))
        #expect(visit.exceptionDates == ["2027-01-19T10:00", "2027-02-02T10:00"])
        #expect(visit.placePoiId == ContentImportFile.stableId(ContentImportFile.Kind.poi.rawValue, 601))
        // Featured rows come last, as a phase of their own, so their targets exist when they are checked.
        let phases = ContentImportFile.importCommands(plan.rows, actor: "import", skipInvalidRows: false)
        #expect(phases.last?.flatMap { $0.rows ?? [] }.map(\.label) == ["line 6", "line 7", "line 8"])
        try await withHandler { handler, client in
            let result = try await handler.handle(plan.command(actor: "owner@example.edu", skipInvalidRows: false))
            #expect(result.outcome == .applied, "\(result.rows?.filter { $0.outcome != .applied } ?? [])")
            #expect(try await count("calendar_entries", client) == 2)
            #expect(try await count("featured_items", client) == 3)
            let again = try await handler.handle(try rows(Self.recordsCSV).command(actor: "owner@example.edu", skipInvalidRows: false))
            #expect(again.outcome == .applied)
            #expect(try await count("featured_items", client) == 3, "the same file imports nothing twice")
        }
    }

    @Test("a featured row naming an event by a title two events in the file have is refused, not given either")
    func featuredByRepeatedTitle() throws {
        let plan = try rows("""
            kind,name,startsAt,endsAt,timeZone,target,imageUrl,imageAlt
            event,Walk,2027-01-05T10:00,2027-01-05T11:00,America/New_York,,,
            event,walk,2027-02-05T10:00,2027-02-05T11:00,America/New_York,,,
            featured,,,,,event:Walk,https://images.example.edu/w.jpg,A walk
            """)
        #expect(plan.calendar == 2 && plan.featured == 0)
        #expect(plan.unreadable.map(\.label) == ["line 4"])
        #expect(plan.unreadable.first?.errors == [FieldError(field: "target", message: "several events in this file are titled \"Walk\"; name this one by its id")])
    }

    @Test("an RRULE read from a CSV cell: the subset DESIGN.md names, UNTIL as a date or a stamp, and a message naming what is wrong")
    func rruleCells() throws {
        #expect(try CalendarRecurrence(rrule: "RRULE:FREQ=MONTHLY;INTERVAL=2;COUNT=6") == CalendarRecurrence(frequency: .monthly, interval: 2, count: 6))
        #expect(try CalendarRecurrence(rrule: " freq=weekly; byday=mo,we ; until=20270630T235959Z ")
                == CalendarRecurrence(frequency: .weekly, byDay: ["MO", "WE"], until: "2027-06-30"))
        #expect(try CalendarRecurrence(rrule: "FREQ=DAILY;UNTIL=2027-06-30").until == "2027-06-30")
        let refused: [(String, String)] = [
            ("INTERVAL=2", "a repeat rule needs FREQ=DAILY, WEEKLY or MONTHLY"),
            ("FREQ=WEEKLY;COUNT=x", "COUNT must be a whole number, got \"x\""),
            ("FREQ=YEARLY", "FREQ is DAILY, WEEKLY or MONTHLY, got \"YEARLY\""),
            ("FREQ=WEEKLY;BYMONTH=1", "BYMONTH is not supported; use FREQ, INTERVAL, BYDAY, COUNT and UNTIL"),
            ("FREQ=DAILY;UNTIL=June", "UNTIL is a date such as 20270630, got \"June\""),
            ("FREQ", "\"FREQ\" is not NAME=VALUE"),
        ]
        for (text, message) in refused {
            #expect(throws: FieldError(field: "recurrence", message: message)) { try CalendarRecurrence(rrule: text) }
        }
    }

    @Test("a POI's several categories in a file: \";\"-separated in CSV, `categories` in JSON; a category row for each path")
    func severalCategoriesInFiles() throws {
        let csv = try rows("name,latitude,longitude,category\nMusée Café,53.8,-1.5,Eat / Cafés; See/Museums\n")
        #expect(csv.rows.map(\.label) == ["category Eat/Cafés", "category See/Museums", "line 2"])
        #expect(csv.rows[2].commands.first?.poi?.categories == ["Eat/Cafés", "See/Museums"])
        #expect(csv.fileRows == 1)
        let json = try ContentImportFile.plan(Data(#"{"pois": [{"name": "Musée Café", "latitude": 53.8, "longitude": -1.5, "categories": ["Eat/Cafés", "See/Museums"]}]}"#.utf8),
                                              format: .json, actor: "import")
        #expect(json.rows.last?.commands.first?.poi?.categories == ["Eat/Cafés", "See/Museums"])
        #expect(json.rows.count == 3)
    }

    @Test("the JSON plan of the demo file: categories, then POIs, tours and calendar events, with the same ids every time; bad elements are bad rows")
    func jsonPlan() throws {
        let data = try Data(contentsOf: Self.demoFile)
        let plan = try ContentImportFile.plan(data, format: .json, actor: "import")
        #expect(plan.tours == 1 && plan.pois == 10 && plan.calendar == 3 && plan.categories == 6)
        let actions = plan.rows.flatMap(\.commands).map(\.action)
        #expect(actions.firstIndex(of: .createPoi)! > actions.lastIndex(of: .createCategory)!)
        #expect(actions.firstIndex(of: .createCalendarEntry)! > actions.lastIndex(of: .setTourStatus)!)
        let again = try ContentImportFile.plan(data, format: .json, actor: "import")
        #expect(plan.rows.flatMap(\.commands).map(\.commandId) == again.rows.flatMap(\.commands).map(\.commandId))
        #expect(try ContentImport.commands(forJSON: data).map(\.commandId) == plan.rows.flatMap(\.commands).map(\.commandId))
        let bad = try ContentImportFile.plan(Data(#"{"pois": [{"name": "x", "latitude": "n", "longitude": 1}, {"name": "y", "latitude": 1, "longitude": 2}]}"#.utf8),
                                             format: .json, actor: "import")
        #expect(bad.unreadable.map(\.label) == ["pois[0]"])
        #expect(bad.unreadable[0].message?.contains("latitude") == true)
        #expect(bad.rows.count == 1)
        // A tour's look and route come with it (DESIGN.md, "A tour's look and route"); a route that is no LineString
        // makes the tour unreadable, named.
        let looks = try ContentImportFile.plan(Data(#"""
            {"tours": [{"name": "Walk", "coverImage": "https://uncw.edu/a.jpg", "coverImageAlt": "The quad", "estimatedMinutes": 30,
                        "color": "#006666", "route": {"type": "LineString", "coordinates": [[-77.8767, 34.2261], [-77.8736, 34.2275]]}},
                       {"name": "Bad", "route": {"type": "Point", "coordinates": [-77.8767, 34.2261]}}]}
            """#.utf8), format: .json, actor: "import")
        let walk = try #require(looks.rows.flatMap(\.commands).first { $0.action == .createTour }?.tour)
        #expect(walk.coverImage == "https://uncw.edu/a.jpg" && walk.coverImageAlt == "The quad" && walk.estimatedMinutes == 30 && walk.color == "#006666")
        #expect(walk.route == LineString([Coordinate(latitude: 34.2261, longitude: -77.8767), Coordinate(latitude: 34.2275, longitude: -77.8736)]))
        #expect(looks.unreadable.map(\.label) == ["tours[1]"])
    }

    @Test("all or nothing: one bad row imports nothing, and the report names every row's fate")
    func allOrNothing() async throws {
        try await withHandler { handler, client in
            var plan = try rows(Self.csv)
            // A POI row that only catalog can refuse (latitude out of range), between good ones.
            plan.rows.insert(CatalogBatchRow(label: "line 9", commands: [
                CatalogCommand(action: .createPoi, actor: "x", poi: PoiContent(name: "Off the map", latitude: 95, longitude: 0)),
            ]), at: 3)
            let result = try await handler.handle(plan.command(actor: "owner@example.edu", skipInvalidRows: false))
            #expect(result.outcome == .rejected)
            #expect(result.message == "1 of 4 rows failed, so nothing was imported")
            let outcomes = try #require(result.rows).map(\.outcome)
            #expect(outcomes == [.notApplied, .notApplied, .notApplied, .failed, .notApplied, .notApplied])
            #expect(result.rows?[3].errors.first?.message == "Latitude must be between -90 and 90")
            #expect(try await count("pois", client) == 0)
            #expect(try await count("categories", client) == 0)
            #expect(try await count("tours", client) == 0)
            let outbox = try await client.fetch("SELECT count(*)::bigint FROM catalog.outbox", as: Int.self, logger: logger)
            #expect(outbox == [1], "only the answer")
            // Its commands were not applied, so the corrected file imports under the same ids.
            let fixed = try await handler.handle(try rows(Self.csv).command(actor: "owner@example.edu", skipInvalidRows: false))
            #expect(fixed.outcome == .applied)
            #expect(try await count("pois", client) == 2)
        }
    }

    @Test("a tour's stop whose row failed is named as the file names it; skipping bad rows makes the tour with its other stops, and the fixed file completes it")
    func partialTour() async throws {
        @Sendable func csv(latitude: String) -> String {
            """
            kind,legacyId,name,latitude,longitude,stops,status
            poi,601,Kenan Hall,34.2253,-77.8725,,
            poi,602,Brooks Field,\(latitude),-77.8791,,
            tour,60,Open Day,,,601;602,published
            """
        }
        try await withHandler { handler, client in
            let refused = try await handler.handle(try rows(csv(latitude: "95")).command(actor: "owner@example.edu", skipInvalidRows: false))
            #expect(refused.outcome == .rejected)
            #expect(refused.message == "2 of 3 rows failed, so nothing was imported")
            #expect(refused.rows?.last?.message == "a stop is not there: “Brooks Field” on line 3 (its row was not imported)")
            #expect(refused.rows?.last?.errors.first?.field == "stops")

            let skipped = try await handler.handle(try rows(csv(latitude: "95")).command(actor: "owner@example.edu", skipInvalidRows: true))
            #expect(skipped.message == "imported 2 of 3 rows; 1 row failed and was skipped")
            #expect(skipped.rows?.map(\.outcome) == [.applied, .failed, .applied])
            #expect(skipped.rows?.last?.message == "made without the stop “Brooks Field” on line 3 (its row was not imported)")
            let stops = { try await client.fetch("SELECT count(*)::bigint FROM catalog.tour_stops", as: Int.self, logger: logger)[0] }
            #expect(try await stops() == 1)
            #expect(try await client.fetch("SELECT status FROM catalog.tours", as: String.self, logger: logger) == ["published"])

            // The same broken file again: nothing new, and nothing refused.
            let again = try await handler.handle(try rows(csv(latitude: "95")).command(actor: "owner@example.edu", skipInvalidRows: true))
            #expect(again.outcome == .applied)
            #expect(again.rows?.last?.message
                    == "already imported, unchanged; made without the stop “Brooks Field” on line 3 (its row was not imported)")
            #expect(try await stops() == 1)

            // `catalog import` sends a file as several commands (POIs, then tours): the stop is named as the file names it too.
            let phased = try rows(csv(latitude: "96"))
            var answers: [CatalogBatchRowResult] = []
            for phase in phased.commands(actor: "import", skipInvalidRows: false) {
                for command in phase { answers += try await handler.handle(command).rows ?? [] }
            }
            #expect(answers.count == 3)
            #expect(phased.namingStops(in: answers).last?.message == "a stop is not there: “Brooks Field” on line 3 (its row was not imported)")

            // The file fixed and imported again: the missing POI and the tour's whole stop list.
            let fixed = try await handler.handle(try rows(csv(latitude: "34.2301")).command(actor: "owner@example.edu", skipInvalidRows: true))
            #expect(fixed.outcome == .applied)
            #expect(fixed.rows?.map(\.outcome) == [.applied, .applied, .applied])
            #expect(try await stops() == 2)
        }
    }

    @Test("skipping bad rows imports the rest; a row stands or falls whole; importing again changes nothing")
    func skipBadRows() async throws {
        try await withHandler { handler, client in
            var plan = try rows(Self.csv)
            // A tour whose stops include an unknown POI: its create must not survive its failed set-stops.
            plan.rows.append(ContentImportFile.tourRow(label: "line 7", legacyId: 51, content: TourContent(name: "Broken"),
                                                        stops: [UUID()], status: .published, actor: "x"))
            let result = try await handler.handle(plan.command(actor: "owner@example.edu", skipInvalidRows: true))
            #expect(result.outcome == .applied)
            #expect(result.message == "imported 3 of 4 rows and 2 categories; 1 row failed and was skipped")
            #expect(result.rows?.last?.outcome == .failed)
            #expect(result.rows?.last?.message?.hasPrefix("a stop is not there: POI ") == true)
            #expect(result.rows?.last?.message?.hasSuffix(" (no such POI)") == true)
            #expect(try await count("tours", client) == 1)
            #expect(try await count("pois", client) == 2)
            #expect(try await count("categories", client) == 2)
            let tour = try await client.fetch("SELECT status FROM catalog.tours", as: String.self, logger: logger)
            #expect(tour == ["published"])
            let audit = try await client.fetch("SELECT DISTINCT actor FROM catalog.audit_log", as: String.self, logger: logger)
            #expect(audit == ["owner@example.edu"])

            let again = try await handler.handle(try rows(Self.csv).command(actor: "owner@example.edu", skipInvalidRows: true))
            #expect(again.outcome == .applied)
            #expect(again.rows?.allSatisfy { $0.outcome == .applied } == true)
            #expect(again.rows?[2].message == "already imported, unchanged")
            #expect(try await count("pois", client) == 2)
        }
    }

    @Test("an import cannot smuggle a snapshot or another import")
    func nestedRefused() async throws {
        try await withHandler { handler, _ in
            let result = try await handler.handle(CatalogCommand(action: .importBatch, actor: "a", rows: [
                CatalogBatchRow(label: "row 1", commands: [CatalogCommand(action: .snapshot, actor: "a")]),
            ], skipInvalidRows: true))
            #expect(result.rows?.first?.outcome == .failed)
            #expect(result.rows?.first?.message == "catalog.snapshot cannot be part of an import")
        }
    }
}
