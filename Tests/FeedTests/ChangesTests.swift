import Foundation
import HTTPTypes
import HummingbirdTesting
import Shared
import Testing
import TestSupport
@testable import Feed

/// `GET /v1/changes` (DESIGN.md, "Offline tours and changes"): the log, the projection's horizon, and the route against
/// the real broker with a catalog stand-in.
@Suite("Changes since a cursor", .serialized, .stopsIfHung)
struct ChangesTests {
    /// One change as the answer gives it.
    struct Change: Hashable, CustomStringConvertible {
        let kind: String
        let id: UUID
        let version: Int
        let deleted: Bool

        var description: String { "\(kind) \(id.uuidString.prefix(8)) v\(version)\(deleted ? " deleted" : "")" }
    }

    static func entry(_ time: Int64, _ kind: ChangeLog.Kind, _ id: UUID, version: Int = 1, deleted: Bool = false) -> ChangeLog.Entry {
        ChangeLog.Entry(time: time, kind: kind, id: id, version: version, deleted: deleted)
    }

    @Test("the log answers the latest entry of each entity since a time, oldest first, and compacts to those")
    func logAndCompaction() {
        var log = ChangeLog()
        log.take(ChangeLog.Batch(horizon: 1_000, entries: []))
        #expect(log.cursorTime == 1_000 && log.covers(1_000) && !log.covers(999))
        let ids = (0..<100).map { _ in UUID() }
        // Ten rounds over 100 entities, each round a version later: 1 000 entries, 100 keys.
        var time: Int64 = 1_000
        for round in 1...10 {
            log.append(ids.map { id in
                time += 1
                return Self.entry(time, .poi, id, version: round, deleted: round == 10 && id == ids[0])
            })
        }
        #expect(log.count == 1_000, "under the least length for a compaction")
        let all = log.changes(since: 0)
        #expect(all.count == 100)
        #expect(all.map(\.id) == ids && all.allSatisfy { $0.version == 10 })
        #expect(all[0].deleted && !all[1].deleted)
        // Since the middle of the last round: the second half of it, oldest first.
        let half = log.changes(since: time - 49)
        #expect(half.map(\.id) == Array(ids[50...]))
        #expect(log.changes(since: time + 1).isEmpty)

        // Past the least length, compaction keeps one entry per entity, in order, across chunks.
        var big = ChangeLog()
        big.take(ChangeLog.Batch(horizon: 0, entries: []))
        let keys = (0..<1_500).map { _ in UUID() }
        var stamp: Int64 = 0
        for round in 1...3 {
            big.append(keys.map { id in
                stamp += 1
                return Self.entry(stamp, .tour, id, version: round)
            })
        }
        // 4 500 entries passed the threshold (4 096): compacted to the 1 500 latest.
        #expect(big.count == 1_500)
        #expect((0..<big.count).map { big[$0].id } == keys)
        #expect((0..<big.count).allSatisfy { big[$0].version == 3 && big[$0].kind == .tour })
        #expect(big.changes(since: 0).count == 1_500)
        // The same id under two kinds is two entities.
        big.append([Self.entry(stamp + 1, .page, keys[0])])
        #expect(big.changes(since: stamp).map(\.kind) == [.tour, .page])
        // A new horizon starts again.
        big.take(ChangeLog.Batch(horizon: stamp + 10, entries: []))
        #expect(big.count == 0 && big.cursorTime == stamp + 10 && !big.covers(stamp))
    }

    @Test("an entry packs its time, kind and deleted flag; cursors round-trip and only 11 base64url characters read")
    func entriesAndCursors() {
        let id = UUID()
        for kind in ChangeLog.Kind.allCases {
            for deleted in [false, true] {
                let entry = Self.entry(1_764_165_296_123, kind, id, version: 7, deleted: deleted)
                #expect(entry.time == 1_764_165_296_123 && entry.kind == kind && entry.deleted == deleted && entry.version == 7)
            }
        }
        #expect(MemoryLayout<ChangeLog.Entry>.stride == 32)
        for time: Int64 in [0, 1, 1_764_165_296_123, Int64.max] {
            let text = ChangesCursor.text(time)
            #expect(text.count == 11 && ChangesCursor.time(text) == time, "\(time)")
        }
        for bad in ["", "abc", "AAAAAAAAAAAA", "AAAAAAAAAA=", "AAAAA+AAAAA", "AAAAA/AAAAA", "AAAAAAAAAA.", "ÄAAAAAAAAAA"] {
            #expect(ChangesCursor.time(bad) == nil, "\(bad)")
        }
        // Any 11 characters of the alphabet name a time (the OpenAPI pattern says no more).
        #expect(ChangesCursor.time("___________") == Int64.max)
    }

    @Test("the projection logs each change resolved against what it publishes, and a new catalog snapshot moves the horizon")
    func projectionHorizon() throws {
        let projection = CatalogProjection()
        let stop = Fixture.poi(name: "Stop"), tour = Fixture.tour(name: "Walk", stops: [stop.id])
        projection.apply(.changed(stop))
        projection.apply(.changed(tour))
        var snapshot = projection.publish()
        let horizon = try #require(snapshot.changes.horizon)
        #expect(snapshot.changes.count == 0, "what the first publication shows is not a change")

        // Withdrawn, with a new stop whose POI has not arrived (never on the feed: not listed).
        projection.apply(.changed(Fixture.tour(tour.id, version: 2, name: "Walk", status: .draft, stops: [stop.id, UUID()])))
        snapshot = projection.publish()
        let changes = snapshot.changes.changes(since: horizon)
        #expect(Set(changes.map { Change(kind: $0.kind.name, id: $0.id, version: $0.version, deleted: $0.deleted) })
            == [Change(kind: "tour", id: tour.id, version: 2, deleted: true), Change(kind: "poi", id: stop.id, version: 1, deleted: true)])
        #expect(snapshot.changes.cursorTime >= horizon)

        Thread.sleep(forTimeInterval: 0.005)
        projection.snapshotLoaded()
        snapshot = projection.publish()
        let newHorizon = try #require(snapshot.changes.horizon)
        #expect(newHorizon > horizon && !snapshot.changes.covers(horizon) && snapshot.changes.count == 0)
    }

    // MARK: over HTTP

    static func changes(_ response: TestResponse) throws -> (changes: [Change], cursor: String, reset: Bool) {
        let json = try FeedHTTPTests.json(response)
        let list = try #require(json["changes"] as? [[String: Any]])
        let changes = try list.map { item in
            let id = try #require(item["id"] as? String)
            return Change(kind: try #require(item["kind"] as? String), id: try #require(UUID(uuidString: id)),
                          version: try #require(item["version"] as? Int), deleted: try #require(item["deleted"] as? Bool))
        }
        return (changes, try #require(json["cursor"] as? String), try #require(json["reset"] as? Bool))
    }

    @Test("without since: everything on the feed; since a cursor: exactly what changed, with versions and deleted flags; bad and old cursors")
    func overHTTP() async throws {
        let onTour = Fixture.poi(name: "On the walk"), alsoOnTour = Fixture.poi(name: "Also on the walk")
        let published = Fixture.poi(name: "On its own", status: .published)
        let draftStop = Fixture.poi(name: "Stop of a draft")
        let leaving = Fixture.poi(name: "Stop of a tour to be withdrawn")
        let walk = Fixture.tour(name: "Walk", stops: [onTour.id, alsoOnTour.id])
        let draft = Fixture.tour(name: "Draft", status: .draft, stops: [draftStop.id])
        let withdrawn = Fixture.tour(version: 4, name: "Withdrawn", stops: [leaving.id])
        let content: [CatalogEvent] = [onTour, alsoOnTour, published, draftStop, leaving].map { .changed($0) }
            + [walk, draft, withdrawn].map { .changed($0) }
        let media = MediaState(id: UUID(), version: 3, status: .published, content: MediaContent(
            sha256: String(repeating: "ab", count: 32), format: .jpeg, byteCount: 10, fileName: "a.jpg", title: "A", altText: "A",
            width: 10, height: 10, variants: []), updatedAt: Date())

        try await FeedHTTPTests.withFeed(content: content) { standIn, client in
            let first = try await client.execute(uri: "/v1/changes", method: .get)
            #expect(first.status == .ok && first.headers[.cacheControl] == "no-store" && first.headers[.contentType] == "application/json")
            let start = try Self.changes(first)
            #expect(start.reset)
            #expect(Set(start.changes) == [
                Change(kind: "tour", id: walk.id, version: 1, deleted: false), Change(kind: "tour", id: withdrawn.id, version: 4, deleted: false),
                Change(kind: "poi", id: onTour.id, version: 1, deleted: false), Change(kind: "poi", id: alsoOnTour.id, version: 1, deleted: false),
                Change(kind: "poi", id: published.id, version: 1, deleted: false), Change(kind: "poi", id: leaving.id, version: 1, deleted: false),
            ])
            #expect(start.changes.count == 6)
            let cursor = start.cursor

            // Edits: a POI changed, a draft tour published (its stop appears), a POI deleted, a tour withdrawn (its stop
            // disappears), a media item published.
            try await standIn.publish(.changed(Fixture.poi(published.id, version: 2, name: "On its own, renamed", status: .published)))
            try await standIn.publish(.changed(Fixture.tour(draft.id, version: 2, name: "Draft", status: .published, stops: [draftStop.id])))
            try await standIn.publish(CatalogEvent(kind: .poiDeleted, entityId: onTour.id, version: 2))
            try await standIn.publish(.changed(Fixture.tour(withdrawn.id, version: 5, name: "Withdrawn", status: .draft, stops: [leaving.id])))
            let event = MediaEvent.changed(media)
            try await standIn.producer.send(KafkaOutgoingMessage(topic: standIn.configuration.topic(Topic.catalogEvents),
                                                                 key: event.entityId.uuidString.lowercased(),
                                                                 value: try Envelope(type: event.type, source: "catalog", data: event).encoded()))
            let expected: Set<Change> = [
                Change(kind: "poi", id: published.id, version: 2, deleted: false),
                Change(kind: "tour", id: draft.id, version: 2, deleted: false), Change(kind: "poi", id: draftStop.id, version: 1, deleted: false),
                Change(kind: "poi", id: onTour.id, version: 2, deleted: true),
                Change(kind: "tour", id: withdrawn.id, version: 5, deleted: true), Change(kind: "poi", id: leaving.id, version: 1, deleted: true),
                Change(kind: "media", id: media.id, version: 3, deleted: false),
            ]
            let since = "/v1/changes?since=\(cursor)"
            let arrived = try await TestServices.eventually(timeout: .seconds(20), interval: .milliseconds(100)) {
                Set(try Self.changes(try await client.execute(uri: since, method: .get)).changes) == expected
            }
            let answer = try Self.changes(try await client.execute(uri: since, method: .get))
            #expect(arrived, "\(answer.changes)")
            #expect(!answer.reset && answer.changes.count == expected.count, "each once: \(answer.changes)")
            #expect(answer.cursor != cursor && ChangesCursor.time(answer.cursor)! > ChangesCursor.time(cursor)!)
            // The POI still on the unchanged tour is not a change.
            #expect(!answer.changes.contains { $0.id == alsoOnTour.id })

            // Without since, the feed as it is now.
            let now = try Self.changes(try await client.execute(uri: "/v1/changes", method: .get))
            #expect(now.reset && Set(now.changes) == [
                Change(kind: "tour", id: walk.id, version: 1, deleted: false), Change(kind: "tour", id: draft.id, version: 2, deleted: false),
                Change(kind: "poi", id: alsoOnTour.id, version: 1, deleted: false), Change(kind: "poi", id: published.id, version: 2, deleted: false),
                Change(kind: "poi", id: draftStop.id, version: 1, deleted: false), Change(kind: "media", id: media.id, version: 3, deleted: false),
            ])

            // A cursor from before this instance started: start again.
            let old = ChangesCursor.text(Int64(Date().timeIntervalSince1970 * 1_000) - 3_600_000)
            let reset = try Self.changes(try await client.execute(uri: "/v1/changes?since=\(old)", method: .get))
            #expect(reset.reset && Set(reset.changes) == Set(now.changes))

            for bad in ["abc", "", "AAAAAAAAAA%3D", String(repeating: "A", count: 12)] {
                try FeedHTTPTests.expectProblem(try await client.execute(uri: "/v1/changes?since=\(bad)", method: .get), .badRequest)
            }
        }
    }

    @Test("every entry on the feed has an href that answers it, of every kind; an entry gone from the feed has none")
    func hrefsAnswer() async throws {
        let updated = Date(timeIntervalSince1970: 1_790_000_000)
        let about = PageState(id: UUID(), version: 1, status: .published, content: PageContent(slug: "about-us", title: "About", summary: "Who"),
                              updatedAt: updated)
        let openDay = CalendarEntryState(id: UUID(), version: 1, status: .published, content: CalendarEntryContent(
            title: "Open Day", startsAt: "2026-12-05T09:00", endsAt: "2026-12-05T16:00", timeZone: "America/New_York"), updatedAt: updated)
        let director = PersonState(id: UUID(), version: 1, status: .published, content: PersonContent(
            name: "Zoë Quiñones", role: "Director", department: "Admissions"), updatedAt: updated)
        let featured = FeaturedState(id: UUID(), version: 1, status: .published, content: FeaturedContent(
            targetKind: .page, targetId: about.id, imageUrl: "https://example.edu/1.jpg", imageAlt: "One", order: 1), updatedAt: updated)
        let media = MediaState(id: UUID(), version: 1, status: .published, content: MediaContent(
            sha256: String(repeating: "cd", count: 32), format: .jpeg, byteCount: 10, fileName: "c.jpg", title: "C", altText: "C",
            width: 10, height: 10, variants: []), updatedAt: updated)

        try await FeedHTTPTests.withFeed { standIn, client in
            let topic = standIn.configuration.topic(Topic.catalogEvents)
            func message<Content: CatalogRecordContent>(_ event: CatalogRecordEvent<Content>) throws -> KafkaOutgoingMessage {
                KafkaOutgoingMessage(topic: topic, key: event.entityId.uuidString.lowercased(),
                                     value: try Envelope(type: event.type, source: "catalog", data: event).encoded())
            }
            #expect(try await TestServices.eventually(timeout: .seconds(20), interval: .milliseconds(100)) {
                try await client.execute(uri: "/v1/changes", method: .get).status == .ok
            })
            let cursor = try Self.changes(try await client.execute(uri: "/v1/changes", method: .get)).cursor
            _ = try await standIn.producer.send([try message(PageEvent.changed(about)), try message(CalendarEntryEvent.changed(openDay)),
                                                 try message(PersonEvent.changed(director)), try message(FeaturedEvent.changed(featured)),
                                                 try message(MediaEvent.changed(media))])
            @Sendable func entries(_ uri: String) async throws -> [[String: Any]] {
                try #require(try FeedHTTPTests.json(try await client.execute(uri: uri, method: .get))["changes"] as? [[String: Any]])
            }
            #expect(try await TestServices.eventually(timeout: .seconds(20), interval: .milliseconds(100)) {
                try await entries("/v1/changes").contains { $0["kind"] as? String == "media" }
            })
            var kinds: Set<String> = []
            for entry in try await entries("/v1/changes") {
                let kind = try #require(entry["kind"] as? String), id = try #require(entry["id"] as? String)
                let href = try #require(entry["href"] as? String, "\(kind) \(id) has no href")
                kinds.insert(kind)
                if kind == "media" {
                    #expect(href == "/v1/media/\(media.content.sha256)")
                    continue
                }
                let answer = try await client.execute(uri: href, method: .get)
                #expect(answer.status == .ok, "\(href)")
                let json = try FeedHTTPTests.json(answer)
                // Each answer names the entity by the id the change gave (a featured item's own id is featuredId).
                #expect((json[kind == "featured" ? "featuredId" : "id"] as? String)?.uppercased() == id.uppercased(), "\(href)")
            }
            #expect(kinds == ["tour", "poi", "page", "event", "person", "featured", "media"])
            // The featured item is also in the list under its own id, and a page is found by its id.
            let list = try #require(try FeedHTTPTests.json(try await client.execute(uri: "/v1/featured", method: .get))["featured"] as? [[String: Any]])
            #expect(list.map { $0["featuredId"] as? String } == [featured.id.uuidString])
            let pages = try #require(try FeedHTTPTests.json(try await client.execute(uri: "/v1/pages", method: .get))["pages"] as? [[String: Any]])
            #expect(pages.map { $0["id"] as? String } == [about.id.uuidString])
            try FeedHTTPTests.expectProblem(try await client.execute(uri: "/v1/featured/not-a-uuid", method: .get), .badRequest)
            try FeedHTTPTests.expectProblem(try await client.execute(uri: "/v1/featured/\(UUID().uuidString)", method: .get), .notFound)

            // The page unpublished: it, and the featured item showing it, are listed gone, with no href.
            var unpublished = about
            unpublished.version = 2
            unpublished.status = .draft
            _ = try await standIn.producer.send([try message(PageEvent.changed(unpublished))])
            #expect(try await TestServices.eventually(timeout: .seconds(20), interval: .milliseconds(100)) {
                try await entries("/v1/changes?since=\(cursor)").contains { $0["kind"] as? String == "page" && $0["deleted"] as? Bool == true }
            })
            let later = try await entries("/v1/changes?since=\(cursor)")
            let page = try #require(later.first { $0["kind"] as? String == "page" })
            #expect(page["href"] == nil)
            try FeedHTTPTests.expectProblem(try await client.execute(uri: "/v1/featured/\(featured.id.uuidString)", method: .get), .notFound)
            let item = try #require(later.first { $0["kind"] as? String == "featured" })
            #expect(item["href"] == nil, "a featured item whose page is gone answers 404, so it has no href")
        }
    }

    @Test("after catalog.events lost its log the feed takes a new snapshot in, and a cursor from before that starts again")
    func newSnapshotMovesTheHorizon() async throws {
        let stop = Fixture.poi(name: "Stop"), tour = Fixture.tour(name: "Walk", stops: [stop.id])
        try await FeedHTTPTests.withFeed(content: [.changed(stop), .changed(tour)]) { standIn, client in
            let before = try Self.changes(try await client.execute(uri: "/v1/changes", method: .get))
            #expect(!(try Self.changes(try await client.execute(uri: "/v1/changes?since=\(before.cursor)", method: .get))).reset)
            // The feed's topic guard makes it again; its consumer finds its positions outside the new log and asks for a snapshot.
            try await standIn.producer.deleteTopics([standIn.configuration.topic(Topic.catalogEvents)])
            let restarted = try await TestServices.eventually(timeout: .seconds(60), interval: .milliseconds(200)) {
                try Self.changes(try await client.execute(uri: "/v1/changes?since=\(before.cursor)", method: .get)).reset
            }
            #expect(restarted, "a cursor from before the new snapshot still answered as changes")
            let after = try Self.changes(try await client.execute(uri: "/v1/changes", method: .get))
            #expect(after.reset && Set(after.changes) == Set(before.changes) && after.changes.count == 2)
            #expect(ChangesCursor.time(after.cursor)! > ChangesCursor.time(before.cursor)!)
            #expect(!(try Self.changes(try await client.execute(uri: "/v1/changes?since=\(after.cursor)", method: .get))).reset)
        }
    }
}

@Suite("Feed record kinds")
struct FeedRecordKindsTests {
    @Test("the feed holds every kind of catalog record")
    func everyKindHeld() {
        #expect(FeedRecordKinds.missing.isEmpty)
    }
}
