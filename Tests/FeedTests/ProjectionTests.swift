import Foundation
import Shared
import Synchronization
import Testing
@testable import Feed

/// Builds catalog events the way catalog publishes them.
enum Fixture {
    static let campus = Coordinate(latitude: 34.2261, longitude: -77.8767)
    /// The site's language: the answers tests read unless they ask for another.
    static let en = ContentLanguage.site(of: .english)

    static func poi(_ id: UUID = UUID(), version: Int = 1, name: String, latitude: Double = 34.2261, longitude: Double = -77.8767,
                    summary: String = "", category: String? = nil, categories: [String]? = nil, buildings: [String] = [], legacyId: Int? = nil,
                    description: String = "", links: [MediaLink] = [], pictures: [String] = [], status: ContentStatus = .draft) -> PoiState {
        PoiState(id: id, version: version, status: status,
                 content: PoiContent(name: name, summary: summary, description: description, latitude: latitude, longitude: longitude,
                                     category: category, categories: categories, buildings: buildings, pictures: pictures, links: links, legacyId: legacyId),
                 updatedAt: Date(timeIntervalSince1970: 1_700_000_000))
    }

    static func tour(_ id: UUID = UUID(), version: Int = 1, name: String, status: ContentStatus = .published, stops: [UUID] = [],
                     summary: String = "", legacyId: Int? = nil) -> TourState {
        TourState(id: id, version: version, status: status, content: TourContent(name: name, summary: summary, legacyId: legacyId),
                  stops: stops, updatedAt: Date(timeIntervalSince1970: 1_700_000_000))
    }

    static func json(_ resource: RenderedResource) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(resource.identity.readableBytesView))
        return try #require(object as? [String: Any])
    }
}

@Suite("Feed projection")
struct ProjectionTests {
    @Test("an older or repeated version never undoes a newer one; deletes stick")
    func versionOrder() throws {
        let projection = CatalogProjection()
        let id = UUID()
        #expect(projection.apply(.changed(Fixture.tour(id, version: 2, name: "B"))))
        #expect(!projection.apply(.changed(Fixture.tour(id, version: 1, name: "A"))))
        #expect(!projection.apply(.changed(Fixture.tour(id, version: 2, name: "B again"))))
        var snapshot = projection.publish()
        #expect(try Fixture.json(try #require(snapshot.tours[id]).detail(Fixture.en))["name"] as? String == "B")
        #expect(projection.apply(CatalogEvent(kind: .tourDeleted, entityId: id, version: 3)))
        #expect(!projection.apply(.changed(Fixture.tour(id, version: 2, name: "B"))))
        snapshot = projection.publish()
        #expect(snapshot.tours.isEmpty)
        let list = try Fixture.json(snapshot.tourList(Fixture.en))["tours"] as? [Any]
        #expect(list?.isEmpty == true)
    }

    /// A held POI's version is kept on its record, a deleted one's with the other entities' (`seenVersion(of:)`).
    @Test("a POI's older or repeated version never undoes a newer one, held, deleted or made again")
    func poiVersionOrder() throws {
        let projection = CatalogProjection()
        let id = UUID()
        projection.apply(.changed(Fixture.tour(name: "Live", stops: [id])))
        #expect(projection.apply(.changed(Fixture.poi(id, version: 2, name: "B", status: .published))))
        #expect(!projection.apply(.changed(Fixture.poi(id, version: 1, name: "A", status: .published))))
        #expect(!projection.apply(.changed(Fixture.poi(id, version: 2, name: "B again", status: .published))))
        #expect(try Fixture.json(try #require(projection.publish().pois[id]).detail(Fixture.en))["name"] as? String == "B")
        #expect(projection.apply(CatalogEvent(kind: .poiDeleted, entityId: id, version: 3)))
        #expect(!projection.apply(.changed(Fixture.poi(id, version: 2, name: "B", status: .published))))
        #expect(projection.publish().pois[id] == nil)
        // Made again: its new version is on its record; the deletion's is not what decides any more.
        #expect(projection.apply(.changed(Fixture.poi(id, version: 4, name: "D", status: .published))))
        #expect(!projection.apply(.changed(Fixture.poi(id, version: 3, name: "C", status: .published))))
        #expect(try Fixture.json(try #require(projection.publish().pois[id]).detail(Fixture.en))["name"] as? String == "D")
        // The envelope's version decides, whatever the state inside says.
        var mislabelled = CatalogEvent.changed(Fixture.poi(id, version: 1, name: "E", status: .published))
        mislabelled.version = 6
        #expect(projection.apply(mislabelled))
        #expect(!projection.apply(.changed(Fixture.poi(id, version: 5, name: "F", status: .published))))
        #expect(try Fixture.json(try #require(projection.publish().pois[id]).detail(Fixture.en))["name"] as? String == "E")
    }

    @Test("only published tours are listed, by name; a POI is visible only while a published tour stops there")
    func visibility() throws {
        let projection = CatalogProjection()
        let shared = Fixture.poi(name: "Shared stop"), draftOnly = Fixture.poi(name: "Draft-only stop")
        let draftId = UUID()
        for poi in [shared, draftOnly] { projection.apply(.changed(poi)) }
        projection.apply(.changed(Fixture.tour(draftId, name: "Draft", status: .draft, stops: [shared.id, draftOnly.id])))
        projection.apply(.changed(Fixture.tour(name: "Archived", status: .archived, stops: [shared.id])))
        let live = Fixture.tour(name: "Live", stops: [shared.id])
        projection.apply(.changed(Fixture.tour(name: "Another live", stops: [])))
        projection.apply(.changed(live))
        var snapshot = projection.publish()
        let names = try #require(Fixture.json(snapshot.tourList(Fixture.en))["tours"] as? [[String: Any]]).compactMap { $0["name"] as? String }
        #expect(names == ["Another live", "Live"])
        #expect(snapshot.pois[shared.id] != nil)
        #expect(snapshot.pois[draftOnly.id] == nil)
        #expect(try Fixture.json(try #require(snapshot.pois[shared.id]).detail(Fixture.en))["tourIds"] as? [String] == [live.id.uuidString])

        // Publishing the draft makes its other stop visible; unpublishing takes it away again.
        projection.apply(.changed(Fixture.tour(draftId, version: 2, name: "Draft", status: .published, stops: [shared.id, draftOnly.id])))
        snapshot = projection.publish()
        #expect(snapshot.pois[draftOnly.id] != nil)
        #expect(try Fixture.json(try #require(snapshot.pois[shared.id]).detail(Fixture.en))["tourIds"] as? [String] == [draftId.uuidString, live.id.uuidString])
        projection.apply(.changed(Fixture.tour(draftId, version: 3, name: "Draft", status: .draft, stops: [shared.id, draftOnly.id])))
        snapshot = projection.publish()
        #expect(snapshot.pois[draftOnly.id] == nil)
        #expect(snapshot.poiTextIndex.search("draft-only", limit: 10).isEmpty)
        #expect(snapshot.spatialIndex.count == 1)
    }

    @Test("a tour's cover, duration, colour and route reach its list entry and detail; its walking distance is along the route")
    func tourLookAndRoute() throws {
        let projection = CatalogProjection()
        let a = Fixture.poi(name: "A", latitude: 34.226101, longitude: -77.876705)
        let b = Fixture.poi(name: "B", latitude: 34.227696, longitude: -77.875873)
        // The path walked bends round a building: longer than the straight line between the stops.
        let route = LineString([Coordinate(latitude: 34.226101, longitude: -77.876705), Coordinate(latitude: 34.226900, longitude: -77.877500),
                                Coordinate(latitude: 34.227696, longitude: -77.875873)])
        var tour = Fixture.tour(name: "Walk", stops: [a.id, b.id])
        tour.content.coverImage = "https://uncw.edu/hall.jpg"
        tour.content.coverImageAlt = "The hall"
        tour.content.estimatedMinutes = 40
        tour.content.color = "#0b5cad"
        tour.content.route = route
        let plain = Fixture.tour(name: "Plain", stops: [a.id, b.id])
        for event: CatalogEvent in [.changed(a), .changed(b), .changed(tour), .changed(plain)] { projection.apply(event) }
        let snapshot = projection.publish()
        let detail = try Fixture.json(try #require(snapshot.tours[tour.id]).detail(Fixture.en))
        #expect(detail["coverImage"] as? String == "https://uncw.edu/hall.jpg" && detail["coverImageAlt"] as? String == "The hall")
        #expect(detail["estimatedMinutes"] as? Int == 40 && detail["color"] as? String == "#0b5cad")
        let line = try #require(detail["route"] as? [String: Any])
        #expect(line["type"] as? String == "LineString")
        #expect(line["coordinates"] as? [[Double]] == route.coordinates.map { [$0.longitude, $0.latitude] })
        let walked = try #require(detail["walkingDistanceMeters"] as? Double)
        let straight = Geo.pathLengthMeters([a, b].map { Coordinate(latitude: $0.content.latitude, longitude: $0.content.longitude) })
        #expect(abs(walked - route.lengthMeters) <= 0.05 && walked > straight + 50, "\(walked) along the route, \(straight) straight")
        // Without them: nulls, and the straight lines between the stops.
        let other = try Fixture.json(try #require(snapshot.tours[plain.id]).detail(Fixture.en))
        for key in ["coverImage", "coverImageAlt", "estimatedMinutes", "color", "route"] { #expect(other[key] is NSNull, "\(key)") }
        #expect(abs((other["walkingDistanceMeters"] as? Double ?? 0) - straight) <= 0.05)
        // The list carries the look, not the route.
        let list = try #require(try Fixture.json(snapshot.tourList(Fixture.en))["tours"] as? [[String: Any]])
        let entry = try #require(list.first { $0["id"] as? String == tour.id.uuidString })
        #expect(entry["color"] as? String == "#0b5cad" && entry["estimatedMinutes"] as? Int == 40 && entry["coverImageAlt"] as? String == "The hall")
        #expect(entry["route"] == nil)
    }

    @Test("a tour shows its stops in walking order with bounding box and walking distance; POI changes reach it")
    func tourDetail() throws {
        let projection = CatalogProjection()
        let a = Fixture.poi(name: "A", latitude: 34.226101, longitude: -77.876705, category: "See/Hall")
        let b = Fixture.poi(name: "B", latitude: 34.227696, longitude: -77.875873)
        let c = Fixture.poi(name: "C", latitude: 34.227463, longitude: -77.873591)
        let tour = Fixture.tour(name: "Walk", stops: [c.id, a.id, b.id], legacyId: 11)
        // The tour arrives before its stops, as it may from another partition.
        projection.apply(.changed(tour))
        for poi in [a, b, c] { projection.apply(.changed(poi)) }
        var detail = try Fixture.json(try #require(projection.publish().tours[tour.id]).detail(Fixture.en))
        let stops = try #require(detail["stops"] as? [[String: Any]])
        #expect(stops.compactMap { $0["name"] as? String } == ["C", "A", "B"])
        #expect(stops[1]["category"] as? String == "See/Hall")
        #expect(stops[0]["category"] is NSNull)
        #expect(detail["stopCount"] as? Int == 3)
        #expect(detail["legacyId"] as? Int == 11)
        let bbox = try #require(detail["bbox"] as? [String: Double])
        #expect(bbox == ["minLatitude": 34.226101, "maxLatitude": 34.227696, "minLongitude": -77.876705, "maxLongitude": -77.873591])
        let expected = Geo.pathLengthMeters([c, a, b].map { Coordinate(latitude: $0.content.latitude, longitude: $0.content.longitude) })
        #expect(abs((detail["walkingDistanceMeters"] as? Double ?? 0) - expected) <= 0.05)

        // Renaming a stop re-renders the tour; deleting it drops it from the stops.
        projection.apply(.changed(Fixture.poi(a.id, version: 2, name: "A renamed", latitude: a.content.latitude, longitude: a.content.longitude)))
        detail = try Fixture.json(try #require(projection.publish().tours[tour.id]).detail(Fixture.en))
        #expect((detail["stops"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["C", "A renamed", "B"])
        projection.apply(CatalogEvent(kind: .poiDeleted, entityId: b.id, version: 2))
        let snapshot = projection.publish()
        detail = try Fixture.json(try #require(snapshot.tours[tour.id]).detail(Fixture.en))
        #expect(detail["stopCount"] as? Int == 2)
        #expect(snapshot.pois[b.id] == nil)
        let listed = try #require(Fixture.json(snapshot.tourList(Fixture.en))["tours"] as? [[String: Any]])
        #expect(listed.first?["stopCount"] as? Int == 2)
    }

    /// A snapshot sends tours before POIs: the tours wait for the publication, the POIs are rendered ahead as they come.
    @Test("tours before their stops, rendered ahead: the publication shows each tour's stops and each stop's tours; a rename and a deletion reach the stops")
    func toursBeforeStopsRenderedAhead() throws {
        let projection = CatalogProjection()
        let a = Fixture.poi(name: "A"), b = Fixture.poi(name: "B")
        let walk = Fixture.tour(name: "Walk", stops: [a.id, b.id]), ride = Fixture.tour(name: "Ride", stops: [b.id])
        projection.apply([.changed(walk), .changed(ride)])
        projection.apply([.changed(a)])
        projection.renderAhead()
        projection.apply([.changed(b)])
        projection.renderAhead()
        #expect(projection.hasPendingChanges, "the tours are left to the publication")
        var snapshot = projection.publish()
        #expect(!projection.hasPendingChanges)
        let walkDetail = try Fixture.json(try #require(snapshot.tours[walk.id]).detail(Fixture.en))
        let stops = try #require(walkDetail["stops"] as? [[String: Any]])
        #expect(stops.compactMap { $0["name"] as? String } == ["A", "B"])
        #expect(try Fixture.json(try #require(snapshot.pois[b.id]).detail(Fixture.en))["tourIds"] as? [String] == [ride.id.uuidString, walk.id.uuidString])
        func page(_ id: UUID) throws -> String { String(decoding: try #require(snapshot.pois[id]).page(Fixture.en).identity.readableBytesView, as: UTF8.self) }
        #expect(try page(b.id).contains("Walk") && page(b.id).contains("Ride"))

        // The tour renamed: its stops show the new name. Deleted: B shows only Ride, and A (on no other tour) is gone.
        projection.apply([.changed(Fixture.tour(walk.id, version: 2, name: "Stroll", stops: [a.id, b.id]))])
        snapshot = projection.publish()
        #expect(try page(a.id).contains("Stroll") && !page(a.id).contains("Walk"))
        projection.apply([CatalogEvent(kind: .tourDeleted, entityId: walk.id, version: 3)])
        snapshot = projection.publish()
        #expect(snapshot.pois[a.id] == nil)
        #expect(try Fixture.json(try #require(snapshot.pois[b.id]).detail(Fixture.en))["tourIds"] as? [String] == [ride.id.uuidString])
        #expect(try !page(b.id).contains("Stroll"))
    }

    @Test("a tour without stops has a null bounding box and zero distance")
    func emptyTour() throws {
        let projection = CatalogProjection()
        let tour = Fixture.tour(name: "Empty")
        projection.apply(.changed(tour))
        let detail = try Fixture.json(try #require(projection.publish().tours[tour.id]).detail(Fixture.en))
        #expect(detail["bbox"] is NSNull)
        #expect(detail["walkingDistanceMeters"] as? Double == 0)
        #expect((detail["stops"] as? [Any])?.isEmpty == true)
    }

    @Test("legacy ids: tours.xml uses the legacy number, else the UUID, and pois.xml is found by that id")
    func legacyIds() throws {
        let projection = CatalogProjection()
        let poi = Fixture.poi(name: "Quad", legacyId: 1011)
        let numbered = Fixture.tour(name: "Numbered", stops: [poi.id], legacyId: 11)
        let plain = Fixture.tour(name: "Plain", stops: [poi.id])
        for event in [CatalogEvent.changed(poi), .changed(numbered), .changed(plain)] { projection.apply(event) }
        let snapshot = projection.publish()
        #expect(snapshot.legacyTourIds["11"] == numbered.id)
        #expect(snapshot.legacyTourIds[plain.id.uuidString] == plain.id)
        let xml = String(decoding: snapshot.legacyTourList.identity.readableBytesView, as: UTF8.self)
        #expect(xml.contains("<id>11</id>"))
        #expect(xml.contains("<id>\(plain.id.uuidString)</id>"))
        let pois = String(decoding: try #require(snapshot.tours[numbered.id]).legacyPois.identity.readableBytesView, as: UTF8.self)
        #expect(pois.contains("<poiID>1011</poiID>"))
        #expect(pois.contains("<latitude>34.2261</latitude>"))
    }

    @Test("a snapshot's worth of events renders in one publication and every POI is indexed")
    func bulkLoad() throws {
        let projection = CatalogProjection()
        var stops: [UUID] = []
        for index in 0..<2_000 {
            let poi = Fixture.poi(name: "Place \(index)", latitude: 53.8 + Double(index % 50) * 0.001, longitude: -1.55 + Double(index / 50) * 0.001)
            stops.append(poi.id)
            projection.apply(.changed(poi))
        }
        projection.apply(.changed(Fixture.tour(name: "Everything", stops: stops)))
        let snapshot = projection.publish()
        #expect(snapshot.pois.count == 2_000)
        #expect(snapshot.spatialIndex.count == 2_000)
        #expect(snapshot.poiTextIndex.count == 2_000)
        #expect(snapshot.poiTextIndex.search("place 1999", limit: 5).count == 1)
        #expect(!projection.hasPendingChanges)
    }

    @Test("POIs with the same buildings, categories and hours hold one copy of each, and read as given")
    func sharedTexts() throws {
        var shared = SharedTexts()
        func record(_ name: String, buildings: [String], hours: String) -> PoiRecord {
            var state = Fixture.poi(name: name, categories: ["See/Architecture", "Campus/Libraries"], buildings: buildings)
            state.content.openingHours = hours
            return PoiRecord(state, sharing: &shared)
        }
        let hours = "Mo-Fr 08:00-22:00; Sa 10:00-18:00"
        let a = record("A", buildings: ["Randall Library", "Fisher Student Center"], hours: hours)
        let b = record("B", buildings: ["Randall Library", "Fisher Student Center"], hours: String(hours.reversed().reversed()))
        // Made at run time: equal literals may share their bytes in the binary.
        let c = record("C", buildings: [String("Fisher Student Center".reversed().reversed())], hours: "24/7")
        #expect(a.content.buildings == ["Randall Library", "Fisher Student Center"] && c.content.buildings == ["Fisher Student Center"])
        #expect(b.content.openingHours == hours && c.content.openingHours == "24/7")
        func storage(_ list: [String]) -> UnsafeRawPointer? { list.withUnsafeBufferPointer { $0.baseAddress.map(UnsafeRawPointer.init) } }
        func storage(_ text: String) -> UnsafeRawPointer? { var text = text; return text.withUTF8 { $0.baseAddress.map(UnsafeRawPointer.init) } }
        #expect(storage(a.content.buildings) == storage(b.content.buildings))
        #expect(storage(a.content.categories) == storage(c.content.categories))
        #expect(storage(a.content.openingHours!) == storage(b.content.openingHours!))
        // A list with one of the same names shares that name's text (one over 15 bytes: shorter ones are held inline).
        #expect(storage(c.content.buildings[0]) == storage(a.content.buildings[1]))
        // Canonically equivalent is not the same: each POI keeps the bytes it was sent.
        let composed = "Caf\u{E9} des Arts Building", decomposed = "Cafe\u{301} des Arts Building"
        let d = record("D", buildings: [composed], hours: hours), e = record("E", buildings: [decomposed], hours: hours)
        #expect(Array(d.content.buildings[0].utf8) == Array(composed.utf8) && Array(e.content.buildings[0].utf8) == Array(decomposed.utf8))
    }

    /// Rendering ahead runs while a snapshot streams in; a listing of records is built whole, so it is built once, at
    /// publication, not again for every batch of records that arrived.
    @Test("rendering ahead leaves the records to the publication, which lists every one, and a later one that alone changed")
    func renderAheadLeavesRecords() throws {
        let projection = CatalogProjection()
        func entry(_ title: String) -> CalendarEntryState {
            CalendarEntryState(id: UUID(), version: 1, status: .published, content: CalendarEntryContent(
                title: title, startsAt: "2026-12-05T09:00", endsAt: "2026-12-05T10:00", timeZone: "UTC"), updatedAt: Date(timeIntervalSince1970: 1_790_000_000))
        }
        let poi = Fixture.poi(name: "Library", status: .published)
        projection.apply(CalendarEntryEvent.changed(entry("A")))
        projection.apply(.changed(poi))
        projection.renderAhead()
        #expect(projection.hasPendingChanges, "the calendar waits for the publication")
        projection.apply(CalendarEntryEvent.changed(entry("B")))
        projection.renderAhead()
        var snapshot = projection.publish()
        #expect(snapshot.calendar.entries.map(\.content.title) == ["A", "B"])
        #expect(snapshot.pois[poi.id] != nil)
        #expect(!projection.hasPendingChanges)
        projection.apply(CalendarEntryEvent.changed(entry("C")))
        snapshot = projection.publish()
        #expect(snapshot.calendar.entries.map(\.content.title) == ["A", "B", "C"])
    }

    @Test("apply does not wait for a render; a change applied during one is published by the next, never lost or undone")
    func applyDuringRender() throws {
        let tourId = UUID()
        let appliedWhileRendering = Mutex<Bool?>(nil)
        let rendering = Mutex(0)
        let projectionBox = Mutex<CatalogProjection?>(nil)
        let projection = CatalogProjection(beforeRendering: {
            guard rendering.withLock({ $0 += 1; return $0 }) == 1, let projection = projectionBox.withLock({ $0 }) else { return }
            // On another thread, bounded: if apply waited for this render, the test fails instead of hanging.
            let done = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                projection.apply(.changed(Fixture.tour(tourId, version: 2, name: "Second")))
                done.signal()
            }
            appliedWhileRendering.withLock { $0 = done.wait(timeout: .now() + 5) == .success }
        })
        projectionBox.withLock { $0 = projection }
        projection.apply(.changed(Fixture.tour(tourId, version: 1, name: "First")))
        var snapshot = projection.publish()
        #expect(appliedWhileRendering.withLock { $0 } == true)
        #expect(try Fixture.json(try #require(snapshot.tours[tourId]).detail(Fixture.en))["name"] as? String == "First")
        #expect(projection.hasPendingChanges)
        let first = snapshot.generation
        snapshot = projection.publish()
        #expect(snapshot.generation > first)
        #expect(try Fixture.json(try #require(snapshot.tours[tourId]).detail(Fixture.en))["name"] as? String == "Second")
        #expect(try Fixture.json(snapshot.tourList(Fixture.en))["tours"].flatMap { $0 as? [[String: Any]] }?.first?["name"] as? String == "Second")
        #expect(projection.snapshot.generation == snapshot.generation)
    }

    @Test("publications from many threads at once, each during a stream of changes: the last published snapshot has every change")
    func concurrentPublications() throws {
        let projection = CatalogProjection()
        let ids = (0..<8).map { _ in UUID() }
        let wentBack = Atomic<Bool>(false)
        DispatchQueue.concurrentPerform(iterations: 18) { worker in
            switch worker {
            case 0..<8:
                for version in 1...50 {
                    projection.apply(.changed(Fixture.tour(ids[worker], version: version, name: "Tour \(worker) v\(version)")))
                }
            case 8..<16:
                for _ in 1...50 { projection.publish() }
            default:
                // What readers see never goes back to an older publication.
                var seen = 0
                for _ in 1...5_000 {
                    let generation = projection.snapshot.generation
                    if generation < seen { wentBack.store(true, ordering: .relaxed) }
                    seen = generation
                }
            }
        }
        let snapshot = projection.publish()
        for (worker, id) in ids.enumerated() {
            #expect(try Fixture.json(try #require(snapshot.tours[id]).detail(Fixture.en))["name"] as? String == "Tour \(worker) v50")
        }
        let readerSawOlder = wentBack.load(ordering: .relaxed)
        #expect(!readerSawOlder)
        #expect(projection.snapshot.generation == snapshot.generation)
    }
}
