import Foundation
import PostgresNIO
import Shared
import Testing
import TestSupport
@testable import Catalog

/// Every command, against the real Postgres: refused input gives field errors and changes nothing but the
/// answer; a stale version is a conflict carrying the current state; an applied command writes its events,
/// its result and an audit record in the one transaction; delivered twice, it is applied once.
@Suite("Every catalog command", .stopsIfHung)
struct CommandMatrixTests {
    static let logger = TestServices.logger
    static let testedApart: Set<CatalogAction> = [.history, .recentlyDeleted, .discardTourDraft, .publishPoi, .discardPoiDraft, .applyTourSchedule]

    /// Content every case starts from: categories Shop, Shop/Fashion and Eat; POI A (in Shop/Fashion) and
    /// POI B; a tour (version 2) stopping at A.
    struct Fixture: Sendable {
        let handler: CatalogCommandHandler
        let client: PostgresClient
        let shop: UUID, fashion: UUID, eat: UUID
        let poiA: UUID, poiB: UUID
        let tour: UUID
        /// A draft calendar entry (version 1) at POI B.
        let entry: UUID
        /// A draft directory entry (version 1) with its office at POI B.
        let person: UUID
        /// A draft page (version 1) at /about.
        let page: UUID
        /// A draft featured item (version 1) showing the tour.
        let featured: UUID
        /// A draft media item (version 1).
        let media: UUID
    }

    static func picture(_ byte: Character) -> MediaContent {
        MediaContent(sha256: String(repeating: byte, count: 64), format: .jpeg, byteCount: 1_234, fileName: "quad.jpg", title: "The quad",
                     altText: "The quad in spring", width: 800, height: 600,
                     variants: [.init(width: 320, height: 240, sha256: String(repeating: "e", count: 64), byteCount: 100)])
    }

    static let openDay = CalendarEntryContent(title: "Open Day", startsAt: "2026-12-05T09:00", endsAt: "2026-12-05T16:00", timeZone: "America/New_York",
                                              categories: ["shop"])

    static func withFixture(_ body: @Sendable (Fixture) async throws -> Void) async throws {
        try await HandlerFixture.with { handler, client in
            func applied(_ command: CatalogCommand) async throws -> UUID {
                let result = try await handler.handle(command)
                guard result.outcome == .applied, let id = result.entityId else {
                    throw TestFailure("fixture command \(command.action) was \(result.outcome): \(result.message ?? "")")
                }
                return id
            }
            let shop = try await applied(CatalogCommand(action: .createCategory, actor: "fixture", category: CategoryContent(name: "Shop")))
            let fashion = try await applied(CatalogCommand(action: .createCategory, actor: "fixture",
                                                           category: CategoryContent(name: "Fashion", parentId: shop)))
            let eat = try await applied(CatalogCommand(action: .createCategory, actor: "fixture", category: CategoryContent(name: "Eat")))
            let poiA = try await applied(CatalogCommand(action: .createPoi, actor: "fixture",
                                                        poi: PoiContent(name: "Bank Fashion", latitude: 53.8, longitude: -1.54, category: "Shop/Fashion")))
            let poiB = try await applied(CatalogCommand(action: .createPoi, actor: "fixture", poi: PoiContent(name: "Quad", latitude: 34.2, longitude: -77.9)))
            let tour = try await applied(CatalogCommand(action: .createTour, actor: "fixture", tour: TourContent(name: "Campus")))
            _ = try await applied(CatalogCommand(action: .setTourStops, actor: "fixture", entityId: tour, stops: [poiA]))
            var openDay = Self.openDay
            openDay.placePoiId = poiB
            let entry = try await applied(CatalogCommand(action: .createCalendarEntry, actor: "fixture", calendarEntry: openDay))
            let person = try await applied(CatalogCommand(action: .createPerson, actor: "fixture",
                                                          person: PersonContent(name: "Ada Byron", role: "Director", officePoiId: poiB)))
            let page = try await applied(CatalogCommand(action: .createPage, actor: "fixture",
                                                        page: PageContent(slug: "about", title: "About", body: "We are *here*.")))
            let featured = try await applied(CatalogCommand(action: .createFeatured, actor: "fixture", featured: FeaturedContent(
                targetKind: .tour, targetId: tour, imageUrl: "https://example.edu/quad.jpg", imageAlt: "The quad in spring")))
            let media = try await applied(CatalogCommand(action: .createMedia, actor: "fixture", media: Self.picture("a")))
            try await body(Fixture(handler: handler, client: client, shop: shop, fashion: fashion, eat: eat, poiA: poiA, poiB: poiB, tour: tour,
                                   entry: entry, person: person, page: page, featured: featured, media: media))
        }
    }

    /// A command that applies, and the event types it must publish.
    static func valid(_ action: CatalogAction, _ f: Fixture) -> (CatalogCommand, events: [String]) {
        let actor = "editor@example.edu"
        switch action {
        case .createTour:
            return (CatalogCommand(action: action, actor: actor, tour: TourContent(name: "Night Walk", purpose: "After dark")), ["tour.changed"])
        case .updateTour:
            return (CatalogCommand(action: action, actor: actor, entityId: f.tour, expectedVersion: 2, tour: TourContent(name: "Campus Tour")),
                    ["tour.changed"])
        case .deleteTour:
            return (CatalogCommand(action: action, actor: actor, entityId: f.tour, expectedVersion: 2), ["tour.deleted"])
        case .setTourStatus:
            return (CatalogCommand(action: action, actor: actor, entityId: f.tour, expectedVersion: 2, status: .published), ["tour.changed"])
        case .setTourStops:
            return (CatalogCommand(action: action, actor: actor, entityId: f.tour, expectedVersion: 2, stops: [f.poiB, f.poiA]), ["tour.changed"])
        case .createPoi:
            return (CatalogCommand(action: action, actor: actor, poi: PoiContent(name: "Corn Exchange", latitude: 53.79, longitude: -1.54,
                                                                                category: "shop/fashion")), ["poi.changed"])
        case .updatePoi:
            return (CatalogCommand(action: action, actor: actor, entityId: f.poiB, expectedVersion: 1,
                                   poi: PoiContent(name: "Historic Quad", latitude: 34.226101, longitude: -77.876705, category: "Eat")),
                    ["poi.changed"])
        case .deletePoi:
            // A is a stop of the tour: the tour loses it (a new tour version) before the POI goes.
            return (CatalogCommand(action: action, actor: actor, entityId: f.poiA, expectedVersion: 1), ["tour.changed", "poi.deleted"])
        case .createCategory:
            return (CatalogCommand(action: action, actor: actor, category: CategoryContent(name: "Shoes", parentId: f.fashion)), ["category.changed"])
        case .renameCategory:
            // Shop → Shopping renames Shop/Fashion too, and moves POI A to Shopping/Fashion.
            return (CatalogCommand(action: action, actor: actor, entityId: f.shop, expectedVersion: 1, category: CategoryContent(name: "Shopping")),
                    ["category.changed", "category.changed", "poi.changed"])
        case .deleteCategory:
            return (CatalogCommand(action: action, actor: actor, entityId: f.eat, expectedVersion: 1), ["category.deleted"])
        case .importBatch:
            let rows = [
                CatalogBatchRow(label: "line 2", commands: [CatalogCommand(action: .createCategory, actor: "x", category: .ensuring(path: "Eat/Cafe"))]),
                CatalogBatchRow(label: "line 3", commands: [CatalogCommand(action: .createPoi, actor: "x",
                                                                           poi: PoiContent(name: "Café", latitude: 1, longitude: 2, category: "Eat/Cafe"))]),
            ]
            return (CatalogCommand(action: action, actor: actor, rows: rows), ["category.changed", "poi.changed"])
        case .snapshot:
            // Categories, records and chunks go straight to the topic (CommandHandlerTests), the markers through the outbox.
            return (CatalogCommand(action: action, actor: "feed", chunkedSnapshot: true), Array(repeating: "catalog.snapshot-marker", count: 4))
        case .revertTour:
            // Version 1 had no stops: the revert takes A out again, as a new version.
            return (CatalogCommand(action: action, actor: actor, entityId: f.tour, expectedVersion: 2, revertToVersion: 1), ["tour.changed"])
        case .revertPoi:
            return (CatalogCommand(action: action, actor: actor, entityId: f.poiB, expectedVersion: 1, revertToVersion: 1), ["poi.changed"])
        case .scheduleTour:
            return (CatalogCommand(action: action, actor: actor, entityId: f.tour, expectedVersion: 2, status: .published,
                                   scheduleAt: Date().addingTimeInterval(3_600)), ["tour.changed"])
        case .setPoiStatus:
            return (CatalogCommand(action: action, actor: actor, entityId: f.poiB, expectedVersion: 1, status: .published), ["poi.changed"])
        case .createCalendarEntry:
            let visit = CalendarEntryContent(title: "Campus visit", startsAt: "2026-12-01T10:00", endsAt: "2026-12-01T11:30", timeZone: "America/New_York",
                                             recurrence: CalendarRecurrence(frequency: .weekly, byDay: ["TU", "TH"], until: "2027-05-01"))
            return (CatalogCommand(action: action, actor: actor, status: .published, calendarEntry: visit), ["calendar.changed"])
        case .updateCalendarEntry:
            var later = Self.openDay
            later.startsAt = "2026-12-06T09:00"
            later.endsAt = "2026-12-06T16:00"
            return (CatalogCommand(action: action, actor: actor, entityId: f.entry, expectedVersion: 1, calendarEntry: later), ["calendar.changed"])
        case .setCalendarEntryStatus:
            return (CatalogCommand(action: action, actor: actor, entityId: f.entry, expectedVersion: 1, status: .published), ["calendar.changed"])
        case .deleteCalendarEntry:
            return (CatalogCommand(action: action, actor: actor, entityId: f.entry, expectedVersion: 1), ["calendar.deleted"])
        case .createPerson:
            let person = PersonContent(name: "Grace Hopper", role: "Admissions Counselor", department: "Admissions", email: "hopper@example.edu",
                                       officePoiId: f.poiA, interests: ["Navy", "COBOL"], profileUrl: "https://example.edu/hopper")
            return (CatalogCommand(action: action, actor: actor, status: .published, person: person), ["person.changed"])
        case .updatePerson:
            return (CatalogCommand(action: action, actor: actor, entityId: f.person, expectedVersion: 1,
                                   person: PersonContent(name: "Ada Lovelace", role: "Director", officeText: "Hoggard Hall 101")), ["person.changed"])
        case .setPersonStatus:
            return (CatalogCommand(action: action, actor: actor, entityId: f.person, expectedVersion: 1, status: .published), ["person.changed"])
        case .deletePerson:
            return (CatalogCommand(action: action, actor: actor, entityId: f.person, expectedVersion: 1), ["person.deleted"])
        case .createPage:
            return (CatalogCommand(action: action, actor: actor, status: .published,
                                   page: PageContent(slug: "research", title: "Research", body: "# Labs\n\nOur [labs](https://example.edu/labs).", order: 20)),
                    ["page.changed"])
        case .updatePage:
            // The page keeps its own address: not a clash with itself.
            return (CatalogCommand(action: action, actor: actor, entityId: f.page, expectedVersion: 1,
                                   page: PageContent(slug: "about", title: "About us", body: "Since 1947.")), ["page.changed"])
        case .setPageStatus:
            return (CatalogCommand(action: action, actor: actor, entityId: f.page, expectedVersion: 1, status: .published), ["page.changed"])
        case .deletePage:
            return (CatalogCommand(action: action, actor: actor, entityId: f.page, expectedVersion: 1), ["page.deleted"])
        case .createFeatured:
            return (CatalogCommand(action: action, actor: actor, status: .published, featured: FeaturedContent(
                targetKind: .event, targetId: f.entry, title: "Open Day!", imageUrl: "https://example.edu/open-day.jpg", imageAlt: "Students on the lawn")),
                    ["featured.changed"])
        case .updateFeatured:
            return (CatalogCommand(action: action, actor: actor, entityId: f.featured, expectedVersion: 1, featured: FeaturedContent(
                targetKind: .page, targetId: f.page, imageUrl: "https://example.edu/about.jpg", imageAlt: "The bell tower", order: 5)), ["featured.changed"])
        case .setFeaturedStatus:
            return (CatalogCommand(action: action, actor: actor, entityId: f.featured, expectedVersion: 1, status: .published), ["featured.changed"])
        case .deleteFeatured:
            return (CatalogCommand(action: action, actor: actor, entityId: f.featured, expectedVersion: 1), ["featured.deleted"])
        case .createMedia:
            return (CatalogCommand(action: action, actor: actor, status: .published, media: Self.picture("b")), ["media.changed"])
        case .updateMedia:
            var changed = Self.picture("a")
            changed.title = "The quad, spring"
            return (CatalogCommand(action: action, actor: actor, entityId: f.media, expectedVersion: 1, media: changed), ["media.changed"])
        case .setMediaStatus:
            return (CatalogCommand(action: action, actor: actor, entityId: f.media, expectedVersion: 1, status: .published), ["media.changed"])
        case .deleteMedia:
            return (CatalogCommand(action: action, actor: actor, entityId: f.media, expectedVersion: 1), ["media.deleted"])
        case .history, .recentlyDeleted, .discardTourDraft, .publishPoi, .discardPoiDraft, .applyTourSchedule:
            preconditionFailure("\(action) is tested apart (CatalogHistoryTests, DraftTests)")
        }
    }

    /// A command catalog must refuse, and the field (and part of the message) it names.
    static func invalid(_ action: CatalogAction, _ f: Fixture) -> (CatalogCommand, field: String, message: String)? {
        let actor = "editor@example.edu"
        switch action {
        case .createTour:
            return (CatalogCommand(action: action, actor: actor, tour: TourContent(name: "  ")), "name", "Tour's Name is required")
        case .updateTour:
            return (CatalogCommand(action: action, actor: actor, entityId: f.tour, tour: TourContent(name: String(repeating: "x", count: 201))),
                    "name", "Tour's Name must be at most 200 characters")
        case .deleteTour:
            return (CatalogCommand(action: action, actor: actor, entityId: UUID()), "entityId", "does not exist")
        case .setTourStatus:
            return (CatalogCommand(action: action, actor: actor, entityId: f.tour), "status", "status is required")
        case .setTourStops:
            return (CatalogCommand(action: action, actor: actor, entityId: f.tour, stops: [f.poiA, f.poiA]), "stops", "only once")
        case .createPoi:
            return (CatalogCommand(action: action, actor: actor, poi: PoiContent(name: "X", latitude: 91, longitude: 0)),
                    "latitude", "Latitude must be between -90 and 90")
        case .updatePoi:
            return (CatalogCommand(action: action, actor: actor, entityId: f.poiB, poi: PoiContent(name: "X", latitude: 0, longitude: 0, category: "Nowhere")),
                    "category", "Category must be one of the category tree's paths")
        case .deletePoi:
            return (CatalogCommand(action: action, actor: actor, entityId: UUID()), "entityId", "does not exist")
        case .createCategory:
            return (CatalogCommand(action: action, actor: actor, category: CategoryContent(name: "Fashion", parentId: f.shop)),
                    "name", "There is already a category")
        case .renameCategory:
            return (CatalogCommand(action: action, actor: actor, entityId: f.shop, category: CategoryContent(name: "Shop/Eat")),
                    "name", "must not contain \"/\"")
        case .deleteCategory:
            return (CatalogCommand(action: action, actor: actor, entityId: f.shop), "entityId", "has 1 subcategories")
        case .importBatch:
            return (CatalogCommand(action: action, actor: actor, rows: []), "rows", "at least one row")
        case .scheduleTour:
            return (CatalogCommand(action: action, actor: actor, entityId: f.tour, status: .published, scheduleAt: Date().addingTimeInterval(-60)),
                    "scheduleAt", "Choose a time in the future")
        case .setPoiStatus:
            return (CatalogCommand(action: action, actor: actor, entityId: f.poiB, status: .archived), "status", "status must be published or draft")
        case .createCalendarEntry:
            var backwards = Self.openDay
            backwards.endsAt = "2026-12-05T08:00"
            return (CatalogCommand(action: action, actor: actor, calendarEntry: backwards), "endsAt", "Ends must not be before Starts")
        case .updateCalendarEntry:
            var nowhere = Self.openDay
            nowhere.categories = ["Nowhere"]
            return (CatalogCommand(action: action, actor: actor, entityId: f.entry, calendarEntry: nowhere), "categories", "Category must be one of")
        case .setCalendarEntryStatus:
            return (CatalogCommand(action: action, actor: actor, entityId: f.entry), "status", "status must be published or draft")
        case .deleteCalendarEntry:
            return (CatalogCommand(action: action, actor: actor, entityId: UUID()), "entityId", "does not exist")
        case .createPerson:
            return (CatalogCommand(action: action, actor: actor, person: PersonContent(name: "X", email: "not an address")),
                    "email", "Email must be an address")
        case .updatePerson:
            return (CatalogCommand(action: action, actor: actor, entityId: f.person, person: PersonContent(name: "X", officePoiId: UUID())),
                    "officePoiId", "Office must be an existing point of interest")
        case .setPersonStatus:
            return (CatalogCommand(action: action, actor: actor, entityId: f.person, status: .archived), "status", "status must be published or draft")
        case .deletePerson:
            return (CatalogCommand(action: action, actor: actor, entityId: UUID()), "entityId", "does not exist")
        case .createPage:
            return (CatalogCommand(action: action, actor: actor, page: PageContent(slug: "about", title: "Another about")),
                    "slug", "Another page already has the address about")
        case .updatePage:
            return (CatalogCommand(action: action, actor: actor, entityId: f.page, page: PageContent(slug: "About Us!", title: "About")),
                    "slug", "Address must be 1 to 100 lower-case letters")
        case .setPageStatus:
            return (CatalogCommand(action: action, actor: actor, entityId: f.page, status: .archived), "status", "status must be published or draft")
        case .deletePage:
            return (CatalogCommand(action: action, actor: actor, entityId: UUID()), "entityId", "does not exist")
        case .createFeatured:
            return (CatalogCommand(action: action, actor: actor, featured: FeaturedContent(targetKind: .poi, targetId: UUID(), imageUrl: "https://x.edu/a.jpg",
                                                                                            imageAlt: "A")), "targetId", "Featured must be an existing point of interest")
        case .updateFeatured:
            return (CatalogCommand(action: action, actor: actor, entityId: f.featured, featured: FeaturedContent(
                targetKind: .tour, targetId: f.tour, imageUrl: "https://example.edu/quad.jpg", imageAlt: "  ")), "imageAlt", "Image description is required")
        case .setFeaturedStatus:
            return (CatalogCommand(action: action, actor: actor, entityId: f.featured, status: .archived), "status", "status must be published or draft")
        case .deleteFeatured:
            return (CatalogCommand(action: action, actor: actor, entityId: UUID()), "entityId", "does not exist")
        case .createMedia:
            var bad = Self.picture("c")
            bad.sha256 = "NOT-A-HASH"
            return (CatalogCommand(action: action, actor: actor, media: bad), "sha256", "sha256 must be 64 lower-case hex digits")
        case .updateMedia:
            var bad = Self.picture("a")
            bad.title = "   "
            return (CatalogCommand(action: action, actor: actor, entityId: f.media, media: bad), "title", "Title is required")
        case .setMediaStatus:
            return (CatalogCommand(action: action, actor: actor, entityId: f.media, status: .archived), "status", "status must be published or draft")
        case .deleteMedia:
            return (CatalogCommand(action: action, actor: actor, entityId: UUID()), "entityId", "does not exist")
        case .snapshot, .history, .recentlyDeleted, .discardTourDraft, .publishPoi, .discardPoiDraft, .applyTourSchedule:
            return nil
        case .revertTour:
            return (CatalogCommand(action: action, actor: actor, entityId: f.tour, revertToVersion: 9), "revertToVersion", "is not in this entity's history")
        case .revertPoi:
            return (CatalogCommand(action: action, actor: actor, entityId: f.poiB), "revertToVersion", "the version to go back to is required")
        }
    }

    /// The entity a versioned command acts on, and its version in the fixture.
    static func versioned(_ action: CatalogAction, _ f: Fixture) -> (id: UUID, version: Int)? {
        switch action {
        case .updateTour, .deleteTour, .setTourStatus, .setTourStops, .revertTour, .scheduleTour: (f.tour, 2)
        case .updatePoi, .revertPoi, .setPoiStatus: (f.poiB, 1)
        case .updateCalendarEntry, .setCalendarEntryStatus, .deleteCalendarEntry: (f.entry, 1)
        case .updatePerson, .setPersonStatus, .deletePerson: (f.person, 1)
        case .updatePage, .setPageStatus, .deletePage: (f.page, 1)
        case .updateFeatured, .setFeaturedStatus, .deleteFeatured: (f.featured, 1)
        case .updateMedia, .setMediaStatus, .deleteMedia: (f.media, 1)
        case .deletePoi: (f.poiA, 1)
        case .renameCategory: (f.shop, 1)
        case .deleteCategory: (f.eat, 1)
        case .createTour, .createPoi, .createCategory, .createCalendarEntry, .createPerson, .createPage, .createFeatured, .createMedia, .importBatch, .snapshot, .history, .recentlyDeleted, .discardTourDraft, .publishPoi, .discardPoiDraft,
             .applyTourSchedule: nil
        }
    }

    static func outbox(_ client: PostgresClient) async throws -> [(topic: String, type: String)] {
        try await client.fetch("SELECT topic, payload FROM catalog.outbox ORDER BY id", as: (String, String).self, logger: logger).map { row in
            let header = try EnvelopeDecoder.header(Array(row.1.utf8))
            return (String(row.0.split(separator: ".", maxSplits: 1)[1]), header.type)
        }
    }

    static func version(of id: UUID, _ client: PostgresClient) async throws -> Int? {
        try await client.fetch("""
            SELECT version FROM catalog.tours WHERE id = \(id) UNION ALL SELECT version FROM catalog.pois WHERE id = \(id)
            UNION ALL SELECT version FROM catalog.categories WHERE id = \(id) UNION ALL SELECT version FROM catalog.calendar_entries WHERE id = \(id)
            UNION ALL SELECT version FROM catalog.people WHERE id = \(id) UNION ALL SELECT version FROM catalog.pages WHERE id = \(id)
            UNION ALL SELECT version FROM catalog.featured_items WHERE id = \(id) UNION ALL SELECT version FROM catalog.media_items WHERE id = \(id)
            """, as: Int.self, logger: logger).first
    }

    @Test("refused, conflicting, applied and redelivered", arguments: CatalogAction.allCases.filter { !Self.testedApart.contains($0) })
    func command(_ action: CatalogAction) async throws {
        try await Self.withFixture { f in
            var seen = try await Self.outbox(f.client).count

            // Refused: field errors with the rule, nothing written but the answer.
            if let (command, field, message) = Self.invalid(action, f) {
                let result = try await f.handler.handle(command)
                #expect(result.outcome == .rejected)
                #expect(result.errors.contains { $0.field == field && $0.message.contains(message) }, "\(result.errors)")
                let written = try await Self.outbox(f.client)
                #expect(written.dropFirst(seen).map(\.topic) == ["catalog.command-results"])
                #expect(written.last?.type == "command.rejected")
                seen = written.count
            }

            // Stale: a conflict with the current state and version; nothing changes.
            if let (id, current) = Self.versioned(action, f) {
                var stale = Self.valid(action, f).0
                stale.expectedVersion = current - 1
                let result = try await f.handler.handle(stale)
                #expect(result.outcome == .conflict)
                #expect(result.version == current)
                #expect(result.message?.contains("changed by someone else") == true)
                // The conflict carries the current state of whichever kind the command was for.
                let states = [result.tour?.id, result.poi?.id, result.category?.id, result.calendarEntry?.id, result.person?.id,
                              result.page?.id, result.featured?.id, result.media?.id]
                #expect(states.contains(id), "\(action)")
                #expect(try await Self.version(of: id, f.client) == current)
                let written = try await Self.outbox(f.client)
                #expect(written.dropFirst(seen).map(\.type) == ["command.conflict"])
                seen = written.count
            }

            // Applied: its events and its result in the outbox, an audit record, a new version.
            let (command, events) = Self.valid(action, f)
            let auditBefore = try await f.client.fetch("SELECT count(*)::bigint FROM catalog.audit_log", as: Int.self, logger: Self.logger)[0]
            let result = try await f.handler.handle(command)
            #expect(result.outcome == .applied, "\(result.message ?? "") \(result.errors)")
            let written = try await Self.outbox(f.client)
            let added = written.dropFirst(seen)
            #expect(added.dropLast().map(\.topic).allSatisfy { $0 == "catalog.events" })
            #expect(added.dropLast().map(\.type) == events)
            #expect(added.last?.topic == "catalog.command-results")
            #expect(added.last?.type == "command.applied")
            seen = written.count
            let auditAfter = try await f.client.fetch("SELECT count(*)::bigint FROM catalog.audit_log", as: Int.self, logger: Self.logger)[0]
            #expect(auditAfter - auditBefore == (action == .snapshot ? 0 : events.filter { !$0.hasPrefix("catalog.") }.count))
            if let (id, current) = Self.versioned(action, f) {
                #expect(try await Self.version(of: id, f.client) == current + 1)
            }

            // Delivered again: the same answer, and nothing applied twice.
            let versions = try await f.client.fetch("""
                SELECT id, version FROM catalog.tours UNION ALL SELECT id, version FROM catalog.pois UNION ALL SELECT id, version FROM catalog.categories
                """, as: (UUID, Int).self, logger: Self.logger).map { "\($0.0):\($0.1)" }.sorted()
            let again = try await f.handler.handle(command)
            var repeated = result
            repeated.repeated = true
            #expect(again == repeated, "the stored answer, marked as a repeat")
            #expect(result.repeated == nil)
            let versionsAfter = try await f.client.fetch("""
                SELECT id, version FROM catalog.tours UNION ALL SELECT id, version FROM catalog.pois UNION ALL SELECT id, version FROM catalog.categories
                """, as: (UUID, Int).self, logger: Self.logger).map { "\($0.0):\($0.1)" }.sorted()
            #expect(versions == versionsAfter)
            #expect(try await Self.outbox(f.client).dropFirst(seen).map(\.type) == ["command.applied"])
        }
    }
}

@Suite("Catalog history", .stopsIfHung)
struct CatalogHistoryTests {
    @Test("history answers each change newest first with who, what and the state after; a revert brings a version back as a new one")
    func historyAndRevert() async throws {
        try await HandlerFixture.with { handler, _ in
            let poi = try #require(try await handler.handle(CatalogCommand(action: .createPoi, actor: "a@x",
                                                                            poi: PoiContent(name: "Quad", latitude: 34.2, longitude: -77.9))).entityId)
            let tour = try #require(try await handler.handle(CatalogCommand(action: .createTour, actor: "a@x", tour: TourContent(name: "First"))).entityId)
            _ = try await handler.handle(CatalogCommand(action: .updateTour, actor: "b@x", entityId: tour, expectedVersion: 1,
                                                        tour: TourContent(name: "Second", summary: "Now with a summary")))
            _ = try await handler.handle(CatalogCommand(action: .setTourStops, actor: "b@x", entityId: tour, expectedVersion: 2, stops: [poi]))

            let history = try #require(try await handler.handle(CatalogCommand(action: .history, actor: "a@x", entityId: tour)).history)
            #expect(history.map(\.action) == [.setTourStops, .updateTour, .createTour])
            #expect(history.map(\.actor) == ["b@x", "b@x", "a@x"])
            #expect(history.map { $0.tour?.version } == [3, 2, 1])
            #expect(history.map { $0.tour?.content.name } == ["Second", "Second", "First"])
            #expect(history[0].tour?.stops == [poi])
            // A read: asked again, it reads again (nothing recorded as processed), and changes nothing.
            let again = try await handler.handle(CatalogCommand(action: .history, actor: "a@x", entityId: tour))
            #expect(again.repeated == nil && again.history?.count == 3)

            let reverted = try await handler.handle(CatalogCommand(action: .revertTour, actor: "a@x", entityId: tour, expectedVersion: 3, revertToVersion: 1))
            #expect(reverted.outcome == .applied)
            #expect(reverted.tour?.version == 4 && reverted.tour?.content == TourContent(name: "First") && reverted.tour?.stops == [])
            let after = try #require(try await handler.handle(CatalogCommand(action: .history, actor: "a@x", entityId: tour)).history)
            #expect(after.first?.action == .revertTour && after.count == 4)

            // A POI's history, and a revert its category no longer allows is refused by today's rules.
            let poiHistory = try #require(try await handler.handle(CatalogCommand(action: .history, actor: "a@x", entityId: poi)).history)
            #expect(poiHistory.map(\.action) == [.createPoi] && poiHistory.first?.poi?.content.name == "Quad")
            let unknown = try await handler.handle(CatalogCommand(action: .history, actor: "a@x", entityId: UUID()))
            #expect(unknown.outcome == .applied && unknown.history == [])
        }
    }
}

@Suite("Undo of a delete", .stopsIfHung)
struct RestoreTests {
    @Test("a deleted tour or POI is listed as recently deleted with its last state until a revert restores it, unpublished; the tour keeps the stops that still exist")
    func deleteListRestore() async throws {
        try await HandlerFixture.with { handler, _ in
            func recentlyDeleted() async throws -> [CatalogHistoryEntry] {
                try #require(try await handler.applied(CatalogCommand(action: .recentlyDeleted, actor: "a")).history)
            }
            let kept = try #require(try await handler.applied(CatalogCommand(action: .createPoi, actor: "a", poi: PoiContent(name: "Kept", latitude: 34.2261, longitude: -77.8767))).entityId)
            let gone = try #require(try await handler.applied(CatalogCommand(action: .createPoi, actor: "a", poi: PoiContent(name: "Gone", latitude: 34.2277, longitude: -77.8759))).entityId)
            let tour = try #require(try await handler.applied(CatalogCommand(action: .createTour, actor: "a", tour: TourContent(name: "Open Day"))).entityId)
            _ = try await handler.applied(CatalogCommand(action: .setTourStops, actor: "a", entityId: tour, expectedVersion: 1, stops: [kept, gone]))
            _ = try await handler.applied(CatalogCommand(action: .setTourStatus, actor: "a", entityId: tour, expectedVersion: 2, status: .published))
            #expect(try await recentlyDeleted().isEmpty)

            _ = try await handler.applied(CatalogCommand(action: .deleteTour, actor: "b", entityId: tour, expectedVersion: 3))
            _ = try await handler.applied(CatalogCommand(action: .deletePoi, actor: "c", entityId: gone))
            let listed = try await recentlyDeleted()
            #expect(listed.map(\.action) == [.deletePoi, .deleteTour] && listed.map(\.actor) == ["c", "b"])
            #expect(listed.last?.tour?.content.name == "Open Day" && listed.last?.tour?.version == 3 && listed.last?.tour?.stops == [kept, gone])
            #expect(listed.first?.poi?.content.name == "Gone")

            let restored = try await handler.applied(CatalogCommand(action: .revertTour, actor: "b", entityId: tour, revertToVersion: 3))
            #expect(restored.tour?.version == 5 && restored.tour?.status == .draft && restored.tour?.stops == [kept], "unpublished, without the deleted stop")
            // A second Restore from the same list (the tombstone's version, 4) finds it restored: a conflict, not a revert.
            let twice = try await handler.handle(CatalogCommand(action: .revertTour, actor: "d", entityId: tour, expectedVersion: 4, revertToVersion: 3))
            #expect(twice.outcome == .conflict)
            let poi = try await handler.applied(CatalogCommand(action: .revertPoi, actor: "c", entityId: gone, revertToVersion: 1))
            #expect(poi.poi?.content.name == "Gone" && poi.poi?.status == .draft && poi.poi?.version == 3)
            #expect(try await recentlyDeleted().isEmpty, "restored ones are no longer listed")
            // Restored, it is a tour again: it can be edited and deleted as any other.
            _ = try await handler.applied(CatalogCommand(action: .updateTour, actor: "b", entityId: tour, expectedVersion: 5, tour: TourContent(name: "Open Day again")))
            let history = try #require(try await handler.applied(CatalogCommand(action: .history, actor: "a", entityId: tour)).history)
            #expect(history.prefix(3).map(\.action) == [.updateTour, .revertTour, .deleteTour])
        }
    }
}

@Suite("Drafts and publishing", .stopsIfHung)
struct DraftTests {
    @Test("an edit of a published tour or of its stop is a draft: the published content stays until Publish applies both")
    func draftsUntilPublished() async throws {
        try await HandlerFixture.with { handler, _ in
            let near = try #require(try await handler.applied(CatalogCommand(action: .createPoi, actor: "a", poi: PoiContent(name: "Near", latitude: 34.2261, longitude: -77.8767))).entityId)
            let next = try #require(try await handler.applied(CatalogCommand(action: .createPoi, actor: "a", poi: PoiContent(name: "Next", latitude: 34.2277, longitude: -77.8759))).entityId)
            let tour = try #require(try await handler.applied(CatalogCommand(action: .createTour, actor: "a", tour: TourContent(name: "Open Day"))).entityId)

            // Publish checks: no stops; then a stop 12 000 km away needs confirming.
            let empty = try await handler.handle(CatalogCommand(action: .setTourStatus, actor: "a", entityId: tour, status: .published))
            #expect(empty.outcome == .rejected && empty.errors.first?.message == "A tour needs at least one stop before it is published")
            let far = try #require(try await handler.applied(CatalogCommand(action: .createPoi, actor: "a", poi: PoiContent(name: "Far", latitude: 34.2275, longitude: 77.8736))).entityId)
            _ = try await handler.applied(CatalogCommand(action: .setTourStops, actor: "a", entityId: tour, stops: [near, next, far], asDraft: true))
            let stray = try await handler.handle(CatalogCommand(action: .setTourStatus, actor: "a", entityId: tour, status: .published))
            #expect(stray.outcome == .rejected && stray.errors.first?.field == "stops")
            #expect(stray.errors.first?.message.hasPrefix("Far is 1") == true && stray.errors.first?.message.contains("confirm to publish anyway") == true)
            _ = try await handler.applied(CatalogCommand(action: .setTourStops, actor: "a", entityId: tour, stops: [near, next], asDraft: true))
            let published = try await handler.applied(CatalogCommand(action: .setTourStatus, actor: "a", entityId: tour, status: .published))
            #expect(published.tour?.stops == [near, next] && published.tour?.draft == nil, "a draft tour's stops were its content")

            // Published: edits as drafts change nothing the feed reads.
            let renamed = try await handler.applied(CatalogCommand(action: .updateTour, actor: "a", entityId: tour, tour: TourContent(name: "Open Day 2026"), asDraft: true))
            #expect(renamed.tour?.content.name == "Open Day" && renamed.tour?.draft?.content.name == "Open Day 2026")
            let moved = try await handler.applied(CatalogCommand(action: .setTourStops, actor: "a", entityId: tour, stops: [next, near], asDraft: true))
            #expect(moved.tour?.stops == [near, next] && moved.tour?.draft?.stops == [next, near] && moved.tour?.draft?.content.name == "Open Day 2026")
            let edited = try await handler.applied(CatalogCommand(action: .updatePoi, actor: "a", entityId: near,
                                                       poi: PoiContent(name: "Near (half done)", latitude: 34.2261, longitude: -77.8767), asDraft: true))
            #expect(edited.poi?.content.name == "Near" && edited.poi?.draft?.name == "Near (half done)")
            // A POI on no published tour is edited directly, draft or not.
            let farEdit = try await handler.applied(CatalogCommand(action: .updatePoi, actor: "a", entityId: far,
                                                        poi: PoiContent(name: "Far", latitude: 34.2275, longitude: -77.8736), asDraft: true))
            #expect(farEdit.poi?.content.longitude == -77.8736 && farEdit.poi?.draft == nil)

            // Publish: the tour's draft and its stops' drafts become what the feed reads, in one go.
            let again = try await handler.applied(CatalogCommand(action: .setTourStatus, actor: "a", entityId: tour, status: .published))
            #expect(again.tour?.content.name == "Open Day 2026" && again.tour?.stops == [next, near] && again.tour?.draft == nil)
            let history = try #require(try await handler.handle(CatalogCommand(action: .history, actor: "a", entityId: near)).history)
            #expect(history.first?.poi?.content.name == "Near (half done)" && history.first?.poi?.draft == nil)

            // Discard: a draft goes, the published content stays; nothing to discard is refused.
            _ = try await handler.applied(CatalogCommand(action: .updateTour, actor: "a", entityId: tour, tour: TourContent(name: "Typo"), asDraft: true))
            let discarded = try await handler.applied(CatalogCommand(action: .discardTourDraft, actor: "a", entityId: tour))
            #expect(discarded.tour?.content.name == "Open Day 2026" && discarded.tour?.draft == nil)
            let nothing = try await handler.handle(CatalogCommand(action: .discardTourDraft, actor: "a", entityId: tour))
            #expect(nothing.outcome == .rejected && nothing.errors.first?.field == "draft")
            _ = try await handler.applied(CatalogCommand(action: .updatePoi, actor: "a", entityId: next,
                                             poi: PoiContent(name: "Next, renamed", latitude: 34.2277, longitude: -77.8759), asDraft: true))
            let poiPublished = try await handler.applied(CatalogCommand(action: .publishPoi, actor: "a", entityId: next))
            #expect(poiPublished.poi?.content.name == "Next, renamed" && poiPublished.poi?.draft == nil)

            // Unpublishing folds a draft in: nothing of it is live.
            _ = try await handler.applied(CatalogCommand(action: .updateTour, actor: "a", entityId: tour, tour: TourContent(name: "Closed Day"), asDraft: true))
            let unpublished = try await handler.applied(CatalogCommand(action: .setTourStatus, actor: "a", entityId: tour, status: .draft))
            #expect(unpublished.tour?.content.name == "Closed Day" && unpublished.tour?.draft == nil)
        }
    }

    @Test("a place published on its own takes edits as drafts; unpublished, its draft stays only while a published tour shows it; its status survives a revert")
    func placesOnTheirOwn() async throws {
        try await HandlerFixture.with { handler, _ in
            func edit(_ id: UUID, _ name: String) async throws -> PoiState {
                try #require(try await handler.applied(CatalogCommand(action: .updatePoi, actor: "a", entityId: id,
                                                          poi: PoiContent(name: name, latitude: 34.2261, longitude: -77.8767), asDraft: true)).poi)
            }
            let created = try await handler.applied(CatalogCommand(action: .createPoi, actor: "a", poi: PoiContent(name: "Deck", latitude: 34.2261, longitude: -77.8767)))
            let deck = try #require(created.entityId)
            #expect(created.poi?.status == .draft || created.poi == nil)
            #expect(try await edit(deck, "Deck 1").content.name == "Deck 1", "a POI on no tour and not published is edited directly")

            let listed = try #require(try await handler.applied(CatalogCommand(action: .setPoiStatus, actor: "a", entityId: deck, status: .published)).poi)
            #expect(listed.status == .published && listed.content.name == "Deck 1")
            let again = try await handler.handle(CatalogCommand(action: .setPoiStatus, actor: "a", entityId: deck, status: .published))
            #expect(again.outcome == .rejected && again.errors.first?.message == "the point of interest is already published")
            let drafted = try await edit(deck, "Deck 2 (half done)")
            #expect(drafted.content.name == "Deck 1" && drafted.draft?.name == "Deck 2 (half done)")

            // Unpublished while no published tour shows it: the draft is folded in (nothing of it is live).
            let unlisted = try #require(try await handler.applied(CatalogCommand(action: .setPoiStatus, actor: "a", entityId: deck, status: .draft)).poi)
            #expect(unlisted.status == .draft && unlisted.content.name == "Deck 2 (half done)" && unlisted.draft == nil)

            // On a published tour, unpublishing the place keeps its draft waiting: the tour still shows the POI.
            let tour = try #require(try await handler.applied(CatalogCommand(action: .createTour, actor: "a", tour: TourContent(name: "Parking"))).entityId)
            _ = try await handler.applied(CatalogCommand(action: .setTourStops, actor: "a", entityId: tour, stops: [deck]))
            _ = try await handler.applied(CatalogCommand(action: .setTourStatus, actor: "a", entityId: tour, status: .published))
            _ = try await handler.applied(CatalogCommand(action: .setPoiStatus, actor: "a", entityId: deck, status: .published))
            #expect(try await edit(deck, "Deck 3").draft?.name == "Deck 3")
            let kept = try #require(try await handler.applied(CatalogCommand(action: .setPoiStatus, actor: "a", entityId: deck, status: .draft)).poi)
            #expect(kept.status == .draft && kept.content.name == "Deck 2 (half done)" && kept.draft?.name == "Deck 3")

            // Publishing makes the draft the content; a revert keeps the status.
            let republished = try #require(try await handler.applied(CatalogCommand(action: .setPoiStatus, actor: "a", entityId: deck, status: .published)).poi)
            #expect(republished.status == .published && republished.content.name == "Deck 3" && republished.draft == nil)
            let reverted = try #require(try await handler.applied(CatalogCommand(action: .revertPoi, actor: "a", entityId: deck, revertToVersion: 1, asDraft: true)).poi)
            #expect(reverted.status == .published && reverted.draft?.name == "Deck")
            let history = try #require(try await handler.handle(CatalogCommand(action: .history, actor: "a", entityId: deck)).history)
            #expect(history.contains { $0.action == .setPoiStatus && $0.poi?.status == .published })
        }
    }

    @Test("a scheduled publish and unpublish apply when due, by a scheduler started after they were set (a restart), once")
    func scheduledPublishing() async throws {
        try await HandlerFixture.with { handler, client in
            let repository = PostgresCatalogRepository(client: client, logger: TestServices.logger)
            let stop = try #require(try await handler.applied(CatalogCommand(action: .createPoi, actor: "a", poi: PoiContent(name: "Hall", latitude: 34.2261, longitude: -77.8767))).entityId)
            let tour = try #require(try await handler.applied(CatalogCommand(action: .createTour, actor: "a", tour: TourContent(name: "Open Day"))).entityId)
            // Whole seconds: what the JSON of a result keeps exactly.
            let soon = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
            let publishAt = soon.addingTimeInterval(3_600)

            // Checked when set: a tour without stops cannot be scheduled to publish.
            let empty = try await handler.handle(CatalogCommand(action: .scheduleTour, actor: "a", entityId: tour, status: .published, scheduleAt: publishAt))
            #expect(empty.outcome == .rejected && empty.errors.first?.field == "stops")
            _ = try await handler.applied(CatalogCommand(action: .setTourStops, actor: "a", entityId: tour, stops: [stop]))
            let scheduled = try await handler.applied(CatalogCommand(action: .scheduleTour, actor: "officer@example.edu", entityId: tour, status: .published,
                                                          scheduleAt: publishAt))
            #expect(scheduled.tour?.schedule?.at == publishAt && scheduled.tour?.schedule?.by == "officer@example.edu")
            #expect(scheduled.tour?.status == .draft)

            // Not yet due: nothing happens. Due (a scheduler made now, as after a restart): published, once.
            let before = TourScheduler(repository: repository, handler: handler, relay: nil, logger: TestServices.logger)
            #expect(try await before.applyDue(now: publishAt.addingTimeInterval(-1)) == 0)
            let restarted = TourScheduler(repository: repository, handler: handler, relay: nil, logger: TestServices.logger)
            #expect(try await restarted.applyDue(now: publishAt.addingTimeInterval(5)) == 1)
            #expect(try await restarted.applyDue(now: publishAt.addingTimeInterval(6)) == 0, "applied once")
            let published = try #require(try await repository.withTransaction { try await $0.tour(tour) }).state
            #expect(published.status == .published && published.schedule == nil)
            let audit = try await client.fetch("SELECT actor, action FROM catalog.audit_log WHERE entity_id = \(tour) ORDER BY id DESC LIMIT 1",
                                               as: (String, String).self, logger: TestServices.logger).first
            #expect(audit?.0 == "schedule (set by officer@example.edu)" && audit?.1 == "tour.apply-schedule")

            // A scheduled unpublish whose time comes; then a publish refused when due keeps the reason and is no longer due.
            let unpublishAt = soon.addingTimeInterval(7_200)
            _ = try await handler.applied(CatalogCommand(action: .scheduleTour, actor: "a", entityId: tour, status: .draft, scheduleAt: unpublishAt))
            #expect(try await restarted.applyDue(now: unpublishAt.addingTimeInterval(1)) == 1)
            #expect(try #require(try await repository.withTransaction { try await $0.tour(tour) }).state.status == .draft)
            let republishAt = soon.addingTimeInterval(9_000)
            _ = try await handler.applied(CatalogCommand(action: .scheduleTour, actor: "a", entityId: tour, status: .published, scheduleAt: republishAt))
            _ = try await handler.applied(CatalogCommand(action: .setTourStops, actor: "a", entityId: tour, stops: []))
            #expect(try await restarted.applyDue(now: republishAt.addingTimeInterval(1)) == 1)
            let failed = try #require(try await repository.withTransaction { try await $0.tour(tour) }).state
            #expect(failed.status == .draft && failed.schedule?.failure == "A tour needs at least one stop before it is published")
            #expect(try await restarted.applyDue(now: republishAt.addingTimeInterval(60)) == 0, "a failed schedule is no longer due")

            // Cancel.
            let cancelled = try await handler.applied(CatalogCommand(action: .scheduleTour, actor: "a", entityId: tour))
            #expect(cancelled.tour?.schedule == nil)
            let none = try await handler.handle(CatalogCommand(action: .scheduleTour, actor: "a", entityId: tour))
            #expect(none.outcome == .rejected && none.errors.first?.field == "scheduleAt")

            // A far stop confirmed when scheduling stays confirmed; a stop moved far afterwards is not.
            func poi(_ name: String, _ latitude: Double) async throws -> UUID {
                try #require(try await handler.applied(CatalogCommand(action: .createPoi, actor: "a", poi: PoiContent(name: name, latitude: latitude, longitude: -77.8767))).entityId)
            }
            let near = [stop, try await poi("Lawn", 34.2262), try await poi("Library", 34.2263)]
            let far = try await poi("Beach", 34.3261)
            _ = try await handler.applied(CatalogCommand(action: .setTourStops, actor: "a", entityId: tour, stops: near + [far]))
            let farAt = soon.addingTimeInterval(10_000)
            let unconfirmed = try await handler.handle(CatalogCommand(action: .scheduleTour, actor: "a", entityId: tour, status: .published, scheduleAt: farAt))
            #expect(unconfirmed.outcome == .rejected && unconfirmed.errors.first?.message.contains("Beach is") == true)
            let confirmed = try await handler.applied(CatalogCommand(action: .scheduleTour, actor: "a", entityId: tour, status: .published,
                                                          confirmFarStops: true, scheduleAt: farAt))
            #expect(confirmed.tour?.schedule?.confirmedFarStops == [far])
            let moved = try #require(try await repository.withTransaction { try await $0.poi(near[1]) }).state
            _ = try await handler.applied(CatalogCommand(action: .updatePoi, actor: "a", entityId: near[1], expectedVersion: moved.version,
                                             poi: PoiContent(name: "Lawn", latitude: 34.1261, longitude: -77.8767)))
            #expect(try await restarted.applyDue(now: farAt.addingTimeInterval(1)) == 1)
            let refusedFar = try #require(try await repository.withTransaction { try await $0.tour(tour) }).state
            #expect(refusedFar.status == .draft)
            #expect(refusedFar.schedule?.failure?.contains("Lawn is") == true && refusedFar.schedule?.failure?.contains("Beach") == false)

            // Archiving drops a schedule (an archived tour shows no schedule to cancel).
            _ = try await handler.applied(CatalogCommand(action: .scheduleTour, actor: "a", entityId: tour))
            _ = try await handler.applied(CatalogCommand(action: .setTourStops, actor: "a", entityId: tour, stops: [stop]))
            _ = try await handler.applied(CatalogCommand(action: .scheduleTour, actor: "a", entityId: tour, status: .published, scheduleAt: soon.addingTimeInterval(20_000)))
            let archived = try await handler.applied(CatalogCommand(action: .setTourStatus, actor: "a", entityId: tour, status: .archived))
            #expect(archived.tour?.status == .archived && archived.tour?.schedule == nil)
        }
    }
}

extension CatalogCommandHandler {
    /// Handles `command` and returns its result, or fails the test with catalog's reasons when it is not applied.
    func applied(_ command: CatalogCommand) async throws -> CatalogCommandResult {
        let result = try await handle(command)
        guard result.outcome == .applied else { throw TestFailure("\(command.action): \(result.errors) \(result.message ?? "")") }
        return result
    }
}
