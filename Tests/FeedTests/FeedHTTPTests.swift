import Foundation
import HTTPTypes
import HummingbirdTesting
import Shared
import Testing
import TestSupport
@testable import Feed

/// The Feed API over HTTP against the demo content, with the real broker between the feed and a
/// catalog stand-in (CatalogStandIn) that publishes catalog's events.
@Suite("Feed API over HTTP", .serialized, .stopsIfHung)
struct FeedHTTPTests {
    /// Extras beside the demo content: a second published tour with accents and a category, a draft
    /// tour whose only stop must stay hidden.
    static let museum = Fixture.poi(name: "Musée Café", latitude: 34.2265, longitude: -77.8760, summary: "Coffee & art",
                                    categories: ["Eat/Café", "See/Museums"], buildings: ["Crème Hall"])
    static let secret = Fixture.poi(name: "Secret Garden", latitude: 34.2262, longitude: -77.8766)
    static let cafeTour = Fixture.tour(name: "Café Crème Walk", stops: [museum.id, DemoContent.poiId(1011)], summary: "Taste the campus")
    static let draftTour = Fixture.tour(name: "Unfinished", status: .draft, stops: [secret.id])
    static var content: [CatalogEvent] {
        DemoContent.events + [.changed(museum), .changed(secret), .changed(cafeTour), .changed(draftTour)]
    }

    static func withFeed(content: [CatalogEvent] = FeedHTTPTests.content, eventsPerMinute: Int = 600,
                         eventsPerMinutePerClient: Int = FeedSettings.defaultEventsPerMinutePerClient, idleTimeoutSeconds: Int? = nil,
                         kafka: KafkaConfiguration = TestServices.kafka(), testing: TestingSetup = .router,
                         configure: (inout FeedSettings) -> Void = { _ in },
                         _ body: @escaping @Sendable (CatalogStandIn, any TestClientProtocol) async throws -> Void) async throws {
        let standIn = try CatalogStandIn(configuration: kafka, content: content)
        try await standIn.prepare()
        var settings = try TestServices.serviceSettings(name: "feed", database: DatabaseSettings(port: TestServices.postgresPort), kafka: kafka)
        if let idleTimeoutSeconds { settings.httpIdleTimeoutSeconds = idleTimeoutSeconds }
        var feed = FeedSettings(eventsPerMinutePerDevice: eventsPerMinute, eventsPerMinutePerClient: eventsPerMinutePerClient)
        configure(&feed)
        let app = try Feed.buildApplication(settings: settings, feed: feed)
        try await TestServices.withServices([standIn.producer, standIn]) {
            try await app.test(testing) { client in
                let ready = try await TestServices.eventually(timeout: .seconds(45), interval: .milliseconds(100)) {
                    // With a short idle timeout, the test client's one connection would be closed by a stall of a loaded
                    // machine between two probes: each probe then asks on a connection of its own.
                    if idleTimeoutSeconds != nil, let port = client.port {
                        let probe = try RawSocket(port: port)
                        try probe.sendAll(Array("GET /ready HTTP/1.1\r\nHost: feed\r\nConnection: close\r\n\r\n".utf8))
                        return try await probe.readUntilClosed(timeout: .seconds(10)).hasPrefix("HTTP/1.1 200 ")
                    }
                    return try await client.execute(uri: "/ready", method: .get).status == .ok
                }
                try #require(ready, "feed never became ready")
                try await body(standIn, client)
            }
        }
    }

    static func json(_ response: TestResponse) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any])
    }

    static func text(_ response: TestResponse) -> String {
        String(decoding: response.body.readableBytesView, as: UTF8.self)
    }

    /// A Prometheus page's count of GETs of a route with a status: `hb_requests_total`, or with `series`
    /// another of the request metrics (`http_server_request_duration_seconds_count`).
    static func requestCount(_ metrics: String, route: String, status: Int, series: String = "hb_requests_total") -> Int {
        metrics.split(separator: "\n").filter { line in
            line.hasPrefix(series + "{") && line.contains("http_route=\"\(route)\"")
                && line.contains("http_request_method=\"GET\"") && line.contains("http_response_status_code=\"\(status)\"")
        }.reduce(0) { $0 + (Int($1.split(separator: " ").last ?? "") ?? 0) }
    }

    /// A problem+json answer with the status and a detail.
    static func expectProblem(_ response: TestResponse, _ status: HTTPResponse.Status, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(response.status == status, sourceLocation: sourceLocation)
        #expect(response.headers[.contentType] == "application/problem+json", sourceLocation: sourceLocation)
        let problem = try json(response)
        #expect(problem["status"] as? Int == Int(status.code), sourceLocation: sourceLocation)
        #expect((problem["detail"] as? String)?.isEmpty == false, sourceLocation: sourceLocation)
    }

    @Test("tours, a tour, POIs, pages, nearby, search and the legacy feeds answer from the demo content")
    func readAPI() async throws {
        try await Self.withFeed { _, client in
            // GET /v1/tours: published tours by name, each with the listed fields.
            let list = try await client.execute(uri: "/v1/tours", method: .get)
            #expect(list.status == .ok)
            #expect(list.headers[.contentType] == "application/json")
            let tours = try #require(try Self.json(list)["tours"] as? [[String: Any]])
            #expect(tours.compactMap { $0["name"] as? String } == ["Café Crème Walk", "Students Tour (Beta)"])
            let students = try #require(tours.last)
            #expect(students["id"] as? String == DemoContent.tourId.uuidString)
            #expect(students["stopCount"] as? Int == 10)
            #expect(students["summary"] as? String == "Designed for prospective students who are visiting the UNCW campus.")
            #expect(students["updatedAt"] as? String == "2023-11-14T22:13:20.000Z")

            // GET /v1/tours/{id}: stops in walking order, bbox, walking distance.
            let detail = try Self.json(try await client.execute(uri: "/v1/tours/\(DemoContent.tourId.uuidString.lowercased())", method: .get))
            let stops = try #require(detail["stops"] as? [[String: Any]])
            #expect(stops.compactMap { $0["id"] as? String } == (1011...1020).map { DemoContent.poiId($0).uuidString })
            #expect(stops.first?["name"] as? String == "Historic Quad")
            #expect(Set(stops.first?.keys.map { $0 } ?? []) == ["id", "name", "summary", "latitude", "longitude", "category", "triggerRadiusMeters", "languages"])
            let points = DemoContent.pois.map { Coordinate(latitude: $0.content.latitude, longitude: $0.content.longitude) }
            #expect(detail["bbox"] as? [String: Double] == ["minLatitude": 34.222901, "maxLatitude": 34.227696,
                                                            "minLongitude": -77.876705, "maxLongitude": -77.867296])
            #expect(abs((detail["walkingDistanceMeters"] as? Double ?? 0) - Geo.pathLengthMeters(points)) < 0.05)
            #expect(detail["purpose"] as? String == DemoContent.file.tours?[0].purpose)
            try Self.expectProblem(try await client.execute(uri: "/v1/tours/\(Self.draftTour.id)", method: .get), .notFound)
            try Self.expectProblem(try await client.execute(uri: "/v1/tours/not-a-uuid", method: .get), .badRequest)

            // GET /v1/pois/{id}: the full POI and the published tours that stop there.
            let cis = try Self.json(try await client.execute(uri: "/v1/pois/\(DemoContent.poiId(1014))", method: .get))
            #expect(cis["name"] as? String == "CIS Building")
            #expect((cis["description"] as? String)?.isEmpty == false)
            #expect((cis["links"] as? [[String: String]])?.isEmpty == false)
            #expect(cis["tourIds"] as? [String] == [DemoContent.tourId.uuidString])
            for key in ["summary", "latitude", "longitude", "category", "buildings", "pictures", "address", "phone", "website", "openingHours"] {
                #expect(cis[key] != nil, "\(key)")
            }
            let quad = try Self.json(try await client.execute(uri: "/v1/pois/\(DemoContent.poiId(1011))", method: .get))
            #expect(quad["tourIds"] as? [String] == [Self.cafeTour.id.uuidString, DemoContent.tourId.uuidString])
            try Self.expectProblem(try await client.execute(uri: "/v1/pois/\(Self.secret.id)", method: .get), .notFound)

            // GET /v1/pois/{id}/page: escaped mobile HTML.
            let page = try await client.execute(uri: "/v1/pois/\(DemoContent.poiId(1013))/page", method: .get)
            #expect(page.status == .ok)
            #expect(page.headers[.contentType] == "text/html; charset=utf-8")
            #expect(page.headers[.contentSecurityPolicy]?.contains("default-src 'none'") == true)
            #expect(Self.text(page).contains("<h1>Randall &amp; Campus Commons</h1>"))
            #expect(Self.text(page).contains("<li>Randall Library</li>"))
            try Self.expectProblem(try await client.execute(uri: "/v1/pois/\(Self.secret.id)/page", method: .get), .notFound)

            // GET /v1/pois?near=: nearest first with great-circle distance and initial bearing.
            let here = Coordinate(latitude: 34.2261, longitude: -77.8767)
            let near = try Self.json(try await client.execute(uri: "/v1/pois?near=34.2261,-77.8767&radius=400&limit=3", method: .get))
            let nearby = try #require(near["pois"] as? [[String: Any]])
            let expected = (DemoContent.pois + [Self.museum])
                .map { ($0, Geo.distanceMeters(here, Coordinate(latitude: $0.content.latitude, longitude: $0.content.longitude))) }
                .filter { $0.1 <= 400 }.sorted { $0.1 < $1.1 }.prefix(3)
            #expect(nearby.compactMap { $0["id"] as? String } == expected.map { $0.0.id.uuidString })
            for (item, (poi, distance)) in zip(nearby, expected) {
                let target = Coordinate(latitude: poi.content.latitude, longitude: poi.content.longitude)
                #expect(abs((item["distanceMeters"] as? Double ?? -1) - distance) <= 0.05)
                #expect(abs((item["bearingDegrees"] as? Double ?? -1) - Geo.initialBearingDegrees(here, target)) <= 0.05)
            }
            #expect(nearby.allSatisfy { $0["id"] as? String != Self.secret.id.uuidString })
            let eat = try Self.json(try await client.execute(uri: "/v1/pois?near=34.2261,-77.8767&radius=5000&category=eat", method: .get))
            #expect((eat["pois"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["Musée Café"])
            // Each of a POI's categories finds it; listings name the main one, the POI itself all of them.
            let see = try Self.json(try await client.execute(uri: "/v1/pois?near=34.2261,-77.8767&radius=5000&category=SEE/museums", method: .get))
            #expect((see["pois"] as? [[String: Any]])?.compactMap { $0["category"] as? String } == ["Eat/Café"])
            let museum = try Self.json(try await client.execute(uri: "/v1/pois/\(Self.museum.id)", method: .get))
            #expect(museum["categories"] as? [String] == ["Eat/Café", "See/Museums"])
            #expect(museum["category"] as? String == "Eat/Café")
            #expect(cis["categories"] as? [String] == (cis["category"] as? String).map { [$0] } ?? [])
            for bad in ["/v1/pois?near=91,0", "/v1/pois?near=abc", "/v1/pois?near=34,-77&radius=-1", "/v1/pois?near=34,-77&radius=1e9",
                        "/v1/pois?near=34,-77&limit=0", "/v1/pois?near=34,-77&limit=many"] {
                try Self.expectProblem(try await client.execute(uri: bad, method: .get), .badRequest)
            }

            // GET /v1/search: names, summaries and buildings, case- and accent-insensitive.
            let halls = try Self.json(try await client.execute(uri: "/v1/search?q=HALL", method: .get))
            let hallNames = try #require(halls["pois"] as? [[String: Any]]).compactMap { $0["name"] as? String }
            #expect(hallNames == ["Cahill Drive", "Chancellor's Walk", "Front of Campus", "Historic Quad", "Musée Café", "Price Drive & Rec Center",
                                  "Randall & Campus Commons"])
            let cafe = try Self.json(try await client.execute(uri: "/v1/search?q=cafe%20creme", method: .get))
            #expect((cafe["tours"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["Café Crème Walk"])
            let musee = try Self.json(try await client.execute(uri: "/v1/search?q=MUSEE", method: .get))
            #expect((musee["pois"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["Musée Café"])
            let secretSearch = try Self.json(try await client.execute(uri: "/v1/search?q=secret", method: .get))
            #expect((secretSearch["pois"] as? [Any])?.isEmpty == true)
            try Self.expectProblem(try await client.execute(uri: "/v1/search", method: .get), .badRequest)
            try Self.expectProblem(try await client.execute(uri: "/v1/search?q=\(String(repeating: "a", count: 201))", method: .get), .badRequest)
            // Counted in code points: one letter with 4 000 combining accents is one character, and far over the limit.
            let accents = "R" + String(repeating: "%CC%81", count: 4_000)
            try Self.expectProblem(try await client.execute(uri: "/v1/search?q=\(accents)", method: .get), .badRequest)
            try Self.expectProblem(try await client.execute(uri: "/v1/pois?category=\(accents)", method: .get), .badRequest)
            #expect(try await client.execute(uri: "/v1/search?q=R" + String(repeating: "%CC%81", count: 199), method: .get).status == .ok)

            // The legacy XML feeds: tours.xml's id is the one pois.xml takes.
            let legacy = Self.text(try await client.execute(uri: "/v1/legacy/tours.xml", method: .get))
            #expect(legacy.contains("<item>\n    <id>11</id>\n    <title>Students Tour (Beta)</title>"))
            #expect(legacy.contains("<id>\(Self.cafeTour.id.uuidString)</id>"))
            let legacyPois = try await client.execute(uri: "/v1/legacy/tours/11/pois.xml", method: .get)
            #expect(legacyPois.headers[.contentType] == "application/xml; charset=utf-8")
            #expect(Self.text(legacyPois).components(separatedBy: "<poiID>").count == 11)
            #expect(Self.text(legacyPois).contains("<poiID>1011</poiID>\n    <title>Historic Quad</title>"))
            #expect(Self.text(legacyPois).contains("<latitude>34.226101</latitude>\n    <longitude>-77.876705</longitude>"))
            let byUUID = Self.text(try await client.execute(uri: "/v1/legacy/tours/\(Self.cafeTour.id.uuidString)/pois.xml", method: .get))
            #expect(byUUID.contains("<title>Musée Café</title>"))
            try Self.expectProblem(try await client.execute(uri: "/v1/legacy/tours/99/pois.xml", method: .get), .notFound)
        }
    }

    /// Live (a real socket), so stored responses come from `PipelineResponder` in the pipeline, and
    /// through the router otherwise.
    @Test("HEAD on a GET route answers the GET's status and headers (Content-Length, ETag) with no body, over a real connection; HEAD on /health too")
    func headRequests() async throws {
        try await Self.withFeed(testing: .live) { _, client in
            let port = try #require(client.port)
            for path in ["/v1/tours", "/v1/tours/\(DemoContent.tourId.uuidString.lowercased())", "/v1/legacy/tours.xml", "/health"] {
                let get = try await client.execute(uri: path, method: .get)
                #expect(get.status == .ok, "\(path)")
                let socket = try RawSocket(port: port)
                try socket.sendAll(Array("HEAD \(path) HTTP/1.1\r\nHost: feed\r\nConnection: close\r\n\r\n".utf8))
                let answer = try await socket.readUntilClosed(timeout: .seconds(10))
                let parts = answer.components(separatedBy: "\r\n\r\n")
                #expect(parts.first?.hasPrefix("HTTP/1.1 200 ") == true, "\(path): \(answer.prefix(200))")
                #expect(parts.count == 2 && parts[1].isEmpty, "\(path): a body after the head: \(answer.suffix(100))")
                let fields = Dictionary((parts.first ?? "").split(separator: "\r\n").dropFirst().compactMap { line -> (String, String)? in
                    guard let colon = line.firstIndex(of: ":") else { return nil }
                    return (line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
                }, uniquingKeysWith: { first, _ in first })
                #expect(fields["content-length"] == String(get.body.readableBytes), "\(path): \(fields)")
                #expect(fields["etag"] == get.headers[.eTag], "\(path)")
            }
        }
    }

    @Test("the category tree from catalog's category events, each node counting the POIs on the feed in or under it once; a deletion leaves")
    func categoryTree() async throws {
        try await Self.withFeed { standIn, client in
            let topic = standIn.configuration.topic(Topic.catalogEvents)
            var ids: [String: UUID] = [:]
            func changed(_ path: String, version: Int = 1) throws -> KafkaOutgoingMessage {
                let id = ids[path] ?? UUID()
                ids[path] = id
                let parts = path.split(separator: "/")
                let parent = parts.count > 1 ? ids[parts.dropLast().joined(separator: "/")] : nil
                let category = CategoryState(id: id, version: version, name: String(parts.last!), parentId: parent, path: path, updatedAt: Date())
                return KafkaOutgoingMessage(topic: topic, key: id.uuidString.lowercased(), value: try Envelope(
                    type: CategoryEvent.Kind.changed.rawValue, source: "catalog",
                    data: CategoryEvent(kind: .changed, entityId: id, version: version, category: category)).encoded())
            }
            // Out of order on purpose: a child before its parent.
            _ = try await standIn.producer.send([try changed("Shop"), try changed("See"), try changed("See/Museums"), try changed("Eat"),
                                             try changed("Eat/Café"), try changed("Shop/Old")])
            @Sendable func tree() async throws -> [[String: Any]] {
                try #require(try Self.json(try await client.execute(uri: "/v1/categories", method: .get))["categories"] as? [[String: Any]])
            }
            // Until the parents arrive, their children stand as roots of their own, and a child may also
            // arrive after its parent (each goes to its own partition): wait for the whole tree, children included.
            @Sendable func paths(_ nodes: [[String: Any]]) -> [String] {
                nodes.flatMap { node in [node["path"] as? String ?? "?"] + paths(node["children"] as? [[String: Any]] ?? []) }
            }
            #expect(try await TestServices.eventually(timeout: .seconds(20), interval: .milliseconds(100)) {
                try await paths(tree()) == ["Eat", "Eat/Café", "See", "See/Museums", "Shop", "Shop/Old"]
            })
            let roots = try await tree()
            #expect(roots.compactMap { $0["name"] as? String } == ["Eat", "See", "Shop"])
            // Counted the feed's own way: `category=` over every visible POI.
            let eatPois = try #require(try Self.json(try await client.execute(
                uri: "/v1/pois?near=34.2261,-77.8767&radius=100000&limit=200&category=eat", method: .get))["pois"] as? [[String: Any]])
            #expect(roots[0]["poiCount"] as? Int == eatPois.count && eatPois.count >= 1)
            let see = roots[1], museums = (see["children"] as? [[String: Any]])?.first
            #expect(see["poiCount"] as? Int == 1 && museums?["path"] as? String == "See/Museums" && museums?["poiCount"] as? Int == 1)
            #expect(roots[2]["poiCount"] as? Int == 0 && (roots[2]["children"] as? [[String: Any]])?.first?["name"] as? String == "Old")

            let old = try #require(ids["Shop/Old"])
            _ = try await standIn.producer.send([KafkaOutgoingMessage(topic: topic, key: old.uuidString.lowercased(), value: try Envelope(
                type: CategoryEvent.Kind.deleted.rawValue, source: "catalog", data: CategoryEvent(kind: .deleted, entityId: old, version: 2)).encoded())])
            #expect(try await TestServices.eventually(timeout: .seconds(20), interval: .milliseconds(100)) {
                try await (tree()[2]["children"] as? [[String: Any]])?.isEmpty == true
            })
        }
    }

    @Test("places on their own: a published POI is on the feed without a tour; browsing pages through every POI on the feed by name, with category, bbox and a cursor that survives changes")
    func browsePlaces() async throws {
        let place = Fixture.poi(name: "Zoë's Parking Deck", latitude: 34.2240, longitude: -77.8700, status: .published)
        let unlisted = Fixture.poi(name: "Boiler Room", latitude: 34.2241, longitude: -77.8701)
        try await Self.withFeed(content: Self.content + [.changed(place), .changed(unlisted)]) { standIn, client in
            @Sendable func page(_ query: String) async throws -> (names: [String], ids: [String], cursor: String?) {
                let answer = try Self.json(try await client.execute(uri: "/v1/pois?\(query)", method: .get))
                let pois = try #require(answer["pois"] as? [[String: Any]])
                #expect(pois.allSatisfy { $0["distanceMeters"] == nil && $0["latitude"] is Double })
                return (pois.compactMap { $0["name"] as? String }, pois.compactMap { $0["id"] as? String }, answer["nextCursor"] as? String)
            }
            #expect(try await TestServices.eventually(timeout: .seconds(20), interval: .milliseconds(100)) {
                try await client.execute(uri: "/v1/pois/\(place.id)", method: .get).status == .ok
            })
            try Self.expectProblem(try await client.execute(uri: "/v1/pois/\(unlisted.id)", method: .get), .notFound)

            // Every POI nearby finds, in folded-name order, a page of four at a time; the last page has no cursor.
            let everywhere = try #require(try Self.json(try await client.execute(
                uri: "/v1/pois?near=34.2261,-77.8767&radius=100000&limit=200", method: .get))["pois"] as? [[String: Any]])
            let expected = everywhere.compactMap { item -> (name: String, id: String)? in
                guard let name = item["name"] as? String, let id = item["id"] as? String else { return nil }
                return (name, id)
            }.sorted { (TextFolding.fold($0.name).lexicographicallyPrecedes(TextFolding.fold($1.name)))
                || (TextFolding.fold($0.name) == TextFolding.fold($1.name) && $0.id < $1.id) }
            #expect(expected.count > 8 && expected.contains { $0.id == place.id.uuidString } && !expected.contains { $0.id == unlisted.id.uuidString })
            var walked: [String] = [], cursor: String?, pages = 0
            repeat {
                let next = try await page("limit=4" + (cursor.map { "&cursor=\($0)" } ?? ""))
                #expect(next.ids.count == 4 || next.cursor == nil)
                walked += next.ids
                cursor = next.cursor
                pages += 1
            } while cursor != nil && pages < 100
            #expect(walked == expected.map(\.id))
            #expect(try await page("").names == Array(expected.map(\.name).prefix(50)))

            // Filters: a category with its subcategories, a box (edges included).
            #expect(try await page("category=EAT").names == ["Musée Café"])
            #expect(try await page("bbox=34.2240,-77.8700,34.2240,-77.8700").names == ["Zoë's Parking Deck"])
            #expect(try await page("bbox=34.2265,-77.8760,34.30,-77.80&category=see/museums").names == ["Musée Café"])
            #expect(try await page("bbox=34.30,-77.80,34.2265,-77.8760&category=see/museums").names == ["Musée Café"], "corners in either order")

            // A cursor names a place in the order, not an index: a POI published before it since does not shift the next page.
            let first = try await page("limit=2")
            let cursorAfterTwo = try #require(first.cursor)
            let before = try await page("limit=3&cursor=\(cursorAfterTwo)")
            try await standIn.publish(.changed(Fixture.poi(name: "AAA First Aid", latitude: 34.2250, longitude: -77.8750, status: .published)))
            #expect(try await TestServices.eventually(timeout: .seconds(20), interval: .milliseconds(100)) {
                try await page("limit=1").names == ["AAA First Aid"]
            })
            #expect(try await page("limit=3&cursor=\(cursorAfterTwo)").ids == before.ids)

            // Unpublished again, and on no tour: gone from the feed.
            var withdrawn = place
            withdrawn.version = 2
            withdrawn.status = .draft
            try await standIn.publish(.changed(withdrawn))
            #expect(try await TestServices.eventually(timeout: .seconds(20), interval: .milliseconds(100)) {
                try await client.execute(uri: "/v1/pois/\(place.id)", method: .get).status == .notFound
            })
            #expect(try await !page("limit=200").ids.contains(place.id.uuidString))

            for bad in ["/v1/pois?bbox=1,2,3", "/v1/pois?bbox=", "/v1/pois?bbox=0,0,91,1", "/v1/pois?radius=100001", "/v1/pois?bbox=a,b,c,d", "/v1/pois?cursor=%21%21",
                        "/v1/pois?cursor=AAAA", "/v1/pois?limit=201", "/v1/pois?limit=0", "/v1/pois?category="] {
                try Self.expectProblem(try await client.execute(uri: bad, method: .get), .badRequest)
            }
        }
    }

    @Test("opening hours as a weekly table, price level and access notes on the POI; browsing or near with openNow=true keeps the places open now")
    func openingHours() async throws {
        var alwaysOpen = Fixture.poi(name: "All-Night Library", latitude: 34.2250, longitude: -77.8750, status: .published)
        alwaysOpen.content.openingHours = "24/7"
        alwaysOpen.content.priceLevel = 0
        alwaysOpen.content.accessibility = "Step-free entrance on Cahill Drive; lift to every floor."
        var closedMuseum = Fixture.poi(name: "Closed Museum", latitude: 34.2251, longitude: -77.8751, status: .published)
        closedMuseum.content.openingHours = "Mo-Su off"
        var vagueCafe = Fixture.poi(name: "Vague Café", latitude: 34.2252, longitude: -77.8752, status: .published)
        vagueCafe.content.openingHours = "ask at the desk"
        let (always, shut, vague) = (alwaysOpen, closedMuseum, vagueCafe)
        try await Self.withFeed(content: Self.content + [.changed(always), .changed(shut), .changed(vague)]) { _, client in
            #expect(try await TestServices.eventually(timeout: .seconds(20), interval: .milliseconds(100)) {
                try await client.execute(uri: "/v1/pois/\(vague.id)", method: .get).status == .ok
            })
            let detail = try Self.json(try await client.execute(uri: "/v1/pois/\(always.id)", method: .get))
            let table = try #require(detail["openingHoursTable"] as? [[String: Any]])
            #expect(table.compactMap { $0["day"] as? String } == ["Mo", "Tu", "We", "Th", "Fr", "Sa", "Su"])
            #expect(table.allSatisfy { ($0["spans"] as? [String]) == ["00:00-24:00"] } && table.first?["name"] as? String == "Monday")
            #expect(detail["priceLevel"] as? Int == 0 && (detail["accessibility"] as? String)?.hasPrefix("Step-free") == true)
            let closed = try Self.json(try await client.execute(uri: "/v1/pois/\(shut.id)", method: .get))
            #expect((closed["openingHoursTable"] as? [[String: Any]])?.allSatisfy { ($0["spans"] as? [String])?.isEmpty == true } == true)
            let freeText = try Self.json(try await client.execute(uri: "/v1/pois/\(vague.id)", method: .get))
            #expect(freeText["openingHoursTable"] == nil && freeText["openingHours"] as? String == "ask at the desk")

            let page = Self.text(try await client.execute(uri: "/v1/pois/\(always.id)/page", method: .get))
            #expect(page.contains("<table class=\"hours\">") && page.contains("<th scope=\"row\">Sunday</th><td>00:00-24:00</td>"))
            #expect(page.contains("<dt>Price</dt><dd>Free</dd>") && page.contains("lift to every floor"))

            let open = try #require(try Self.json(try await client.execute(uri: "/v1/pois?openNow=true&limit=200", method: .get))["pois"] as? [[String: Any]])
            #expect(open.compactMap { $0["name"] as? String } == ["All-Night Library"])
            let all = try #require(try Self.json(try await client.execute(uri: "/v1/pois?openNow=false&limit=200", method: .get))["pois"] as? [[String: Any]])
            #expect(all.count > 3)
            try Self.expectProblem(try await client.execute(uri: "/v1/pois?openNow=yes", method: .get), .badRequest)

            // Near, too: of the three places side by side (and the demo's around them), only the open one.
            let near = "/v1/pois?near=34.2251,-77.8751&radius=500&limit=100"
            let nearOpen = try #require(try Self.json(try await client.execute(uri: near + "&openNow=true", method: .get))["pois"] as? [[String: Any]])
            #expect(nearOpen.compactMap { $0["name"] as? String } == ["All-Night Library"])
            let nearAll = try #require(try Self.json(try await client.execute(uri: near, method: .get))["pois"] as? [[String: Any]])
            #expect(Set(nearAll.compactMap { $0["name"] as? String }).isSuperset(of: ["All-Night Library", "Closed Museum", "Vague Café"]))
            try Self.expectProblem(try await client.execute(uri: near + "&openNow=banana", method: .get), .badRequest)
            // A box applies with near as when browsing; a malformed box or cursor is refused.
            let boxed = try #require(try Self.json(try await client.execute(uri: near + "&bbox=34.22505,-77.87515,34.22515,-77.87505", method: .get))["pois"]
                                     as? [[String: Any]])
            #expect(boxed.compactMap { $0["name"] as? String } == ["Closed Museum"])
            try Self.expectProblem(try await client.execute(uri: near + "&bbox=zzz", method: .get), .badRequest)
            try Self.expectProblem(try await client.execute(uri: near + "&cursor=%21", method: .get), .badRequest)
        }
    }

    @Test("the calendar: occurrences of published entries in a range of days, one entry with its next occurrences, and an iCalendar file")
    func calendar() async throws {
        let openDay = CalendarEntryState(id: UUID(), version: 1, status: .published, content: CalendarEntryContent(
            title: "Open Day", summary: "Meet the departments", startsAt: "2026-12-05T09:00", endsAt: "2026-12-05T16:00", timeZone: "America/New_York",
            placePoiId: Self.museum.id, categories: ["Visit/Open days"]), updatedAt: Date(timeIntervalSince1970: 1_790_000_000))
        let visit = CalendarEntryState(id: UUID(), version: 1, status: .published, content: CalendarEntryContent(
            title: "Campus visit", startsAt: "2026-12-01T10:00", endsAt: "2026-12-01T11:30", timeZone: "America/New_York", placeText: "Admissions, Hoggard Hall",
            url: "https://uncw.edu/visit", registrationUrl: "https://uncw.edu/visit/register", categories: ["Visit"],
            recurrence: CalendarRecurrence(frequency: .weekly, byDay: ["TU", "TH"], count: 200), exceptionDates: ["2026-12-08T10:00"]),
            updatedAt: Date(timeIntervalSince1970: 1_790_000_000))
        let fair = CalendarEntryState(id: UUID(), version: 1, status: .published, content: CalendarEntryContent(
            title: "Book fair; winter, 2026", startsAt: "2026-12-10", endsAt: "2026-12-11", timeZone: "UTC", allDay: true),
            updatedAt: Date(timeIntervalSince1970: 1_790_000_000))
        let secret = CalendarEntryState(id: UUID(), version: 1, status: .draft, content: CalendarEntryContent(
            title: "Not yet", startsAt: "2026-12-02T10:00", endsAt: "2026-12-02T11:00", timeZone: "UTC"), updatedAt: Date())
        try await Self.withFeed { standIn, client in
            let topic = standIn.configuration.topic(Topic.catalogEvents)
            func message(_ event: CalendarEntryEvent) throws -> KafkaOutgoingMessage {
                KafkaOutgoingMessage(topic: topic, key: event.entityId.uuidString.lowercased(),
                                     value: try Envelope(type: event.type, source: "catalog", data: event).encoded())
            }
            _ = try await standIn.producer.send([try message(.changed(openDay)), try message(.changed(visit)), try message(.changed(fair)),
                                             try message(.changed(secret))])
            @Sendable func occurrences(_ query: String) async throws -> [[String: Any]] {
                try #require(try Self.json(try await client.execute(uri: "/v1/calendar?\(query)", method: .get))["occurrences"] as? [[String: Any]])
            }
            // 1 to 10 December in the site's zone (UTC here): the visit's Tuesdays and Thursdays but the skipped 8th, the open
            // day, the fair's two days; not the draft.
            let range = "from=2026-12-01&to=2026-12-10"
            #expect(try await TestServices.eventually(timeout: .seconds(20), interval: .milliseconds(100)) { try await occurrences(range).count == 5 })
            let listed = try await occurrences(range)
            #expect(listed.compactMap { $0["startsAt"] as? String } == ["2026-12-01T10:00:00-05:00", "2026-12-03T10:00:00-05:00",
                                                                       "2026-12-05T09:00:00-05:00", "2026-12-10", "2026-12-10T10:00:00-05:00"])
            #expect(listed.compactMap { $0["endsAt"] as? String } == ["2026-12-01T11:30:00-05:00", "2026-12-03T11:30:00-05:00",
                                                                     "2026-12-05T16:00:00-05:00", "2026-12-11", "2026-12-10T11:30:00-05:00"])
            #expect(listed.compactMap { $0["title"] as? String } == ["Campus visit", "Campus visit", "Open Day", "Book fair; winter, 2026", "Campus visit"])
            #expect(listed.compactMap { $0["allDay"] as? Bool } == [false, false, false, true, false])
            let place = try #require(listed[2]["place"] as? [String: Any])
            #expect(place["name"] as? String == "Musée Café" && place["poiId"] as? String == Self.museum.id.uuidString)
            #expect((listed[0]["place"] as? [String: Any])?["name"] as? String == "Admissions, Hoggard Hall" && listed[3]["place"] is NSNull)
            #expect(listed[0]["registrationUrl"] as? String == "https://uncw.edu/visit/register" && listed[0]["timeZone"] as? String == "America/New_York")
            #expect(try await occurrences(range + "&category=VISIT").count == 4)
            #expect(try await occurrences(range + "&category=visit/open%20days").compactMap { $0["title"] as? String } == ["Open Day"])
            #expect(try await occurrences("from=2026-12-10&to=2026-12-01").isEmpty)
            let long = try Self.json(try await client.execute(uri: "/v1/calendar?from=2026-01-01&to=2027-06-01", method: .get))
            #expect(long["from"] as? String == "2026-01-01" && long["to"] as? String == "2027-01-01", "366 days, and the answer says which")
            for bad in ["from=2026-13-01", "from=2026-02-30", "to=12-01", "category="] {
                try Self.expectProblem(try await client.execute(uri: "/v1/calendar?\(bad)", method: .get), .badRequest)
            }

            let detail = try Self.json(try await client.execute(uri: "/v1/calendar/\(visit.id)", method: .get))
            #expect(detail["title"] as? String == "Campus visit" && detail["exceptionDates"] as? [String] == ["2026-12-08T10:00"])
            #expect((detail["recurrence"] as? [String: Any])?["byDay"] as? [String] == ["TU", "TH"])
            let next = try #require(detail["nextOccurrences"] as? [[String: Any]])
            #expect(next.count == 10 && next.allSatisfy { ($0["startsAt"] as? String)?.hasSuffix("T10:00:00-05:00") == true
                || ($0["startsAt"] as? String)?.hasSuffix("T10:00:00-04:00") == true })
            try Self.expectProblem(try await client.execute(uri: "/v1/calendar/\(secret.id)", method: .get), .notFound)
            try Self.expectProblem(try await client.execute(uri: "/v1/calendar/nope", method: .get), .badRequest)

            // iCalendar: published entries only, their zone's offsets, the rule and the skipped date; lines of at most 75 octets.
            let file = try await client.execute(uri: "/v1/calendar.ics", method: .get)
            #expect(file.headers[.contentType] == "text/calendar; charset=utf-8")
            let ics = Self.text(file)
            let lines = ics.components(separatedBy: "\r\n")
            #expect(ics.hasPrefix("BEGIN:VCALENDAR\r\nVERSION:2.0\r\n") && ics.hasSuffix("END:VCALENDAR\r\n"))
            #expect(lines.filter { $0 == "BEGIN:VEVENT" }.count == 3 && !ics.contains("Not yet"))
            #expect(lines.contains("UID:\(visit.id.uuidString.lowercased())@itour") && lines.contains("DTSTART;TZID=America/New_York:20261201T100000"))
            #expect(lines.contains("RRULE:FREQ=WEEKLY;BYDAY=TU,TH;COUNT=200") && lines.contains("EXDATE;TZID=America/New_York:20261208T100000"))
            #expect(lines.contains("DTSTART;VALUE=DATE:20261210") && lines.contains("DTEND;VALUE=DATE:20261212"))
            #expect(lines.contains("SUMMARY:Book fair\\; winter\\, 2026") && lines.contains("LOCATION:Musée Café"))
            #expect(lines.contains("TZID:America/New_York") && lines.contains("TZOFFSETFROM:-0500") && lines.contains("TZOFFSETTO:-0400"))
            #expect(lines.allSatisfy { $0.utf8.count <= 75 })

            // Search finds events by title, summary or place text, each with its next occurrence; not the draft.
            let found = try #require(try Self.json(try await client.execute(uri: "/v1/search?q=HOGGARD", method: .get))["events"] as? [[String: Any]])
            #expect(found.compactMap { $0["title"] as? String } == ["Campus visit"])
            #expect(found.first?["startsAt"] as? String == (detail["nextOccurrences"] as? [[String: Any]])?.first?["startsAt"] as? String)
            let departments = try #require(try Self.json(try await client.execute(uri: "/v1/search?q=departments", method: .get))["events"] as? [[String: Any]])
            #expect(departments.compactMap { $0["title"] as? String } == ["Open Day"] && departments.first?["startsAt"] as? String == "2026-12-05T09:00:00-05:00")
            #expect((try Self.json(try await client.execute(uri: "/v1/search?q=not%20yet", method: .get))["events"] as? [Any])?.isEmpty == true)

            // Deleted: gone from the range.
            _ = try await standIn.producer.send([try message(CalendarEntryEvent(kind: .deleted, entityId: visit.id, version: 2))])
            #expect(try await TestServices.eventually(timeout: .seconds(20), interval: .milliseconds(100)) {
                try await occurrences(range).compactMap { $0["title"] as? String } == ["Open Day", "Book fair; winter, 2026"]
            })
        }
    }

    @Test("the people directory: published entries in name order, by text and department, one entry, in search; never a draft")
    func people() async throws {
        let updated = Date(timeIntervalSince1970: 1_790_000_000)
        func person(_ name: String, _ role: String, _ department: String, status: ContentStatus = .published, office: UUID? = nil,
                    officeText: String? = nil, interests: [String] = []) -> PersonState {
            PersonState(id: UUID(), version: 1, status: status, content: PersonContent(
                name: name, role: role, department: department, email: "\(name.split(separator: " ").last!.lowercased())@uncw.edu", phone: "910-962-3000",
                officePoiId: office, officeText: officeText, interests: interests, profileUrl: "https://uncw.edu/people/1"), updatedAt: updated)
        }
        let director = person("Zoë Quiñones", "Director of Admissions", "Admissions", office: Self.museum.id, interests: ["Coastal ecology"])
        let counselor = person("ada byron", "Admissions Counselor", "Admissions", officeText: "Hoggard Hall 101")
        let dean = person("Émile Durand", "Dean", "College of Arts & Sciences", interests: ["Marine biology", "Sailing"])
        let hidden = person("Not Yet Hired", "Counselor", "Admissions", status: .draft)
        try await Self.withFeed { standIn, client in
            let topic = standIn.configuration.topic(Topic.catalogEvents)
            func message(_ event: PersonEvent) throws -> KafkaOutgoingMessage {
                KafkaOutgoingMessage(topic: topic, key: event.entityId.uuidString.lowercased(),
                                     value: try Envelope(type: event.type, source: "catalog", data: event).encoded())
            }
            _ = try await standIn.producer.send([director, counselor, dean, hidden].map { try message(.changed($0)) })
            @Sendable func names(_ query: String) async throws -> [String] {
                let people = try #require(try Self.json(try await client.execute(uri: "/v1/people\(query)", method: .get))["people"] as? [[String: Any]])
                return people.compactMap { $0["name"] as? String }
            }
            // Name order, case- and accent-insensitive; the draft nowhere.
            #expect(try await TestServices.eventually(timeout: .seconds(20), interval: .milliseconds(100)) {
                try await names("") == ["ada byron", "Émile Durand", "Zoë Quiñones"]
            })
            #expect(try await names("?q=admissions") == ["ada byron", "Zoë Quiñones"])
            #expect(try await names("?q=MARINE") == ["Émile Durand"])
            #expect(try await names("?department=admissions") == ["ada byron", "Zoë Quiñones"])
            #expect(try await names("?department=college%20of%20arts%20%26%20sciences&q=dean") == ["Émile Durand"])
            #expect(try await names("?q=not%20yet").isEmpty)
            let page = try Self.json(try await client.execute(uri: "/v1/people?limit=1&offset=1", method: .get))
            #expect((page["people"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["Émile Durand"] && page["total"] as? Int == 3)

            // One entry: its office is the POI's name when the POI is on the feed, else the text.
            let detail = try Self.json(try await client.execute(uri: "/v1/people/\(director.id.uuidString)", method: .get))
            #expect(detail["role"] as? String == "Director of Admissions" && detail["email"] as? String == "quiñones@uncw.edu")
            #expect((detail["office"] as? [String: Any])?["poiId"] as? String == Self.museum.id.uuidString)
            #expect((detail["office"] as? [String: Any])?["name"] as? String == Self.museum.content.name)
            #expect(detail["interests"] as? [String] == ["Coastal ecology"] && detail["version"] as? Int == 1)
            let other = try Self.json(try await client.execute(uri: "/v1/people/\(counselor.id.uuidString)", method: .get))
            #expect((other["office"] as? [String: Any])?["name"] as? String == "Hoggard Hall 101")
            try Self.expectProblem(try await client.execute(uri: "/v1/people/\(hidden.id.uuidString)", method: .get), .notFound)
            try Self.expectProblem(try await client.execute(uri: "/v1/people/nobody", method: .get), .badRequest)
            try Self.expectProblem(try await client.execute(uri: "/v1/people?limit=0", method: .get), .badRequest)
            try Self.expectProblem(try await client.execute(uri: "/v1/people?q=", method: .get), .badRequest)

            // Search answers people too.
            let found = try #require(try Self.json(try await client.execute(uri: "/v1/search?q=sailing", method: .get))["people"] as? [[String: Any]])
            #expect(found.compactMap { $0["name"] as? String } == ["Émile Durand"])

            // Unpublished and deleted: gone.
            var unpublished = director
            unpublished.version = 2
            unpublished.status = .draft
            _ = try await standIn.producer.send([try message(.changed(unpublished)), try message(PersonEvent(kind: .deleted, entityId: dean.id, version: 2))])
            #expect(try await TestServices.eventually(timeout: .seconds(20), interval: .milliseconds(100)) {
                try await names("") == ["ada byron"]
            })
        }
    }

    @Test("content pages: published pages in order, one page's Markdown as HTML with HTML and script links shown as text, a phone page, search")
    func pages() async throws {
        let updated = Date(timeIntervalSince1970: 1_790_000_000)
        func page(_ slug: String, _ title: String, order: Int, body: String, status: ContentStatus = .published) -> PageState {
            PageState(id: UUID(), version: 1, status: status, content: PageContent(slug: slug, title: title, summary: "\(title) of the campus",
                                                                                  body: body, order: order), updatedAt: updated)
        }
        let about = page("about", "About", order: 10, body: """
            # Who we are

            A *public* university since **1947**. See [the history](https://example.edu/history) & [mail us](mailto:info@example.edu).

            - Coast
            - Campus

            <script>alert("x")</script>

            [click](javascript:alert(1)) and ![pixel](javascript:alert(2)) and <img src=x onerror=alert(3)>
            """)
        let history = page("history", "History", order: 5, body: "Founded in 1947 as Wilmington College.")
        let secret = page("research", "Research", order: 1, body: "Not yet.", status: .draft)
        try await Self.withFeed { standIn, client in
            let topic = standIn.configuration.topic(Topic.catalogEvents)
            func message(_ event: PageEvent) throws -> KafkaOutgoingMessage {
                KafkaOutgoingMessage(topic: topic, key: event.entityId.uuidString.lowercased(),
                                     value: try Envelope(type: event.type, source: "catalog", data: event).encoded())
            }
            _ = try await standIn.producer.send([about, history, secret].map { try message(.changed($0)) })
            @Sendable func slugs() async throws -> [String] {
                let pages = try #require(try Self.json(try await client.execute(uri: "/v1/pages", method: .get))["pages"] as? [[String: Any]])
                return pages.compactMap { $0["slug"] as? String }
            }
            #expect(try await TestServices.eventually(timeout: .seconds(20), interval: .milliseconds(100)) { try await slugs() == ["history", "about"] })

            let detail = try Self.json(try await client.execute(uri: "/v1/pages/about", method: .get))
            let html = try #require(detail["html"] as? String)
            #expect(html.contains("<h1>Who we are</h1>") && html.contains("<em>public</em>") && html.contains("<strong>1947</strong>"))
            #expect(html.contains("<a href=\"https://example.edu/history\">the history</a>") && html.contains("<a href=\"mailto:info@example.edu\">"))
            #expect(html.contains("<li>Coast</li>"))
            // HTML in the text is text; links and images to anything but the web are not made.
            #expect(!html.contains("<script") && html.contains("&lt;script&gt;") && !html.contains("<img src=x") && !html.lowercased().contains("javascript:"))
            #expect(html.contains("click"), "a refused link keeps its text")
            #expect(detail["title"] as? String == "About" && detail["order"] as? Int == 10 && detail["version"] as? Int == 1)

            let phone = try await client.execute(uri: "/v1/pages/about/page", method: .get)
            #expect(phone.status == .ok && phone.headers[.contentType] == MediaTypes.html)
            #expect(phone.headers[.contentSecurityPolicy]?.contains("default-src 'none'") == true)
            let document = String(buffer: phone.body)
            #expect(document.contains("<title>About</title>") && document.contains("<h1>Who we are</h1>") && !document.contains("<script"))

            try Self.expectProblem(try await client.execute(uri: "/v1/pages/research", method: .get), .notFound)
            try Self.expectProblem(try await client.execute(uri: "/v1/pages/Not%20A%20Slug", method: .get), .badRequest)
            let found = try #require(try Self.json(try await client.execute(uri: "/v1/search?q=wilmington", method: .get))["pages"] as? [[String: Any]])
            #expect(found.compactMap { $0["slug"] as? String } == ["history"])
            #expect((try Self.json(try await client.execute(uri: "/v1/search?q=not%20yet", method: .get))["pages"] as? [Any])?.isEmpty == true)

            _ = try await standIn.producer.send([try message(PageEvent(kind: .deleted, entityId: history.id, version: 2))])
            #expect(try await TestServices.eventually(timeout: .seconds(20), interval: .milliseconds(100)) { try await slugs() == ["about"] })
        }
    }

    @Test("featured items: in order, each named as what it shows unless titled, only while that is on the feed")
    func featured() async throws {
        let updated = Date(timeIntervalSince1970: 1_790_000_000)
        let about = PageState(id: UUID(), version: 1, status: .published, content: PageContent(slug: "about", title: "About", summary: "Who we are"),
                              updatedAt: updated)
        func item(_ kind: FeaturedContent.TargetKind, _ id: UUID, title: String? = nil, order: Int, status: ContentStatus = .published) -> FeaturedState {
            FeaturedState(id: UUID(), version: 1, status: status, content: FeaturedContent(
                targetKind: kind, targetId: id, title: title, imageUrl: "https://example.edu/\(order).jpg", imageAlt: "Picture \(order)", order: order),
                updatedAt: updated)
        }
        let tour = item(.tour, Self.cafeTour.id, order: 30)
        let poi = item(.poi, Self.museum.id, title: "Coffee first", order: 10)
        let page = item(.page, about.id, order: 20)
        let hidden = item(.poi, Self.secret.id, order: 5)            // a POI not on the feed
        let draft = item(.tour, Self.cafeTour.id, order: 1, status: .draft)
        try await Self.withFeed { standIn, client in
            let topic = standIn.configuration.topic(Topic.catalogEvents)
            func message<Content: CatalogRecordContent>(_ event: CatalogRecordEvent<Content>) throws -> KafkaOutgoingMessage {
                KafkaOutgoingMessage(topic: topic, key: event.entityId.uuidString.lowercased(),
                                     value: try Envelope(type: event.type, source: "catalog", data: event).encoded())
            }
            _ = try await standIn.producer.send([try message(PageEvent.changed(about))] + [tour, poi, page, hidden, draft].map { try message(FeaturedEvent.changed($0)) })
            @Sendable func items() async throws -> [[String: Any]] {
                try #require(try Self.json(try await client.execute(uri: "/v1/featured", method: .get))["featured"] as? [[String: Any]])
            }
            #expect(try await TestServices.eventually(timeout: .seconds(20), interval: .milliseconds(100)) { try await items().count == 3 })
            let shown = try await items()
            #expect(shown.compactMap { $0["title"] as? String } == ["Coffee first", "About", Self.cafeTour.content.name])
            #expect(shown.compactMap { $0["kind"] as? String } == ["poi", "page", "tour"])
            #expect(shown[1]["slug"] as? String == "about" && shown[1]["summary"] as? String == "Who we are")
            #expect(shown[0]["imageUrl"] as? String == "https://example.edu/10.jpg" && shown[0]["imageAlt"] as? String == "Picture 10")
            #expect(shown[2]["id"] as? String == Self.cafeTour.id.uuidString)

            // The page unpublished: its item goes with it.
            var unpublished = about
            unpublished.version = 2
            unpublished.status = .draft
            _ = try await standIn.producer.send([try message(PageEvent.changed(unpublished))])
            #expect(try await TestServices.eventually(timeout: .seconds(20), interval: .milliseconds(100)) {
                try await items().compactMap { $0["kind"] as? String } == ["poi", "tour"]
            })
        }
    }

    @Test("every GET has an ETag and Cache-Control, answers If-None-Match with 304 and gzips when asked", arguments: [false, true])
    func caching(live: Bool) async throws {
        try await Self.withFeed(testing: live ? .live : .router) { _, client in
            for uri in ["/v1/tours", "/v1/tours/\(DemoContent.tourId)", "/v1/pois/\(DemoContent.poiId(1011))", "/v1/pois/\(DemoContent.poiId(1011))/page",
                        "/v1/pois?near=34.2261,-77.8767&radius=2000", "/v1/search?q=hall", "/v1/legacy/tours.xml", "/v1/legacy/tours/11/pois.xml",
                        "/openapi.json"] {
                let plain = try await client.execute(uri: uri, method: .get)
                #expect(plain.status == .ok, "\(uri)")
                let etag = try #require(plain.headers[.eTag], "\(uri)")
                #expect(plain.headers[.cacheControl]?.contains("max-age") == true, "\(uri)")
                #expect(plain.headers[.contentEncoding] == nil)
                let again = try await client.execute(uri: uri, method: .get, headers: [.ifNoneMatch: etag])
                #expect(again.status == .notModified, "\(uri)")
                #expect(again.body.readableBytes == 0)
                #expect(again.headers[.eTag] == etag)
                #expect(try await client.execute(uri: uri, method: .get, headers: [.ifNoneMatch: "\"other\""]).status == .ok)

                let zipped = try await client.execute(uri: uri, method: .get, headers: [.acceptEncoding: "gzip, deflate"])
                #expect(zipped.headers[.contentEncoding] == "gzip", "\(uri)")
                // Content answered per language varies by it too (DESIGN.md "Languages"); the legacy XML and the document do not.
                let perLanguage = !uri.contains("/legacy/") && uri != "/openapi.json"
                #expect(zipped.headers[.vary] == (perLanguage ? "Accept-Encoding, Accept-Language" : "Accept-Encoding"), "\(uri)")
                #expect(RenderingTests.gunzip(Array(zipped.body.readableBytesView)) == Array(plain.body.readableBytesView), "\(uri)")
                let zippedETag = try #require(zipped.headers[.eTag])
                #expect(zippedETag != etag)
                for tag in [zippedETag, etag, "W/\(etag)"] {
                    let conditional = try await client.execute(uri: uri, method: .get, headers: [.acceptEncoding: "gzip", .ifNoneMatch: tag])
                    #expect(conditional.status == .notModified, "\(uri) \(tag)")
                }
                #expect(plain.headers[.xRequestId] != nil)
                if live { #expect(plain.headers[.date] != nil) }
            }
            if live {
                let metrics = Self.text(try await client.execute(uri: "/metrics", method: .get))
                #expect(metrics.contains("itour_feed_stored_responses_total"))
                // Answered in the pipeline, yet counted in the request metrics under the router's route names.
                #expect(Self.requestCount(metrics, route: "/v1/pois/{id}/page", status: 304) > 0)
                for _ in 0..<3 { _ = try await client.execute(uri: "/v1/legacy/tours.xml", method: .get) }
                let after = Self.text(try await client.execute(uri: "/metrics", method: .get))
                #expect(Self.requestCount(after, route: "/v1/legacy/tours.xml", status: 200) >= Self.requestCount(metrics, route: "/v1/legacy/tours.xml", status: 200) + 3)
                let timed = "http_server_request_duration_seconds_count"
                #expect(Self.requestCount(after, route: "/v1/legacy/tours.xml", status: 200, series: timed)
                        >= Self.requestCount(metrics, route: "/v1/legacy/tours.xml", status: 200, series: timed) + 3)
                // Misses and errors still reach the router and get their problem+json.
                try Self.expectProblem(try await client.execute(uri: "/v1/pois/\(UUID())", method: .get), .notFound)
                try Self.expectProblem(try await client.execute(uri: "/v1/tours/nope", method: .get), .badRequest)
                // Any case, a query string and a trailing slash are the same resource, as for the router.
                let lower = try await client.execute(uri: "/v1/pois/\(DemoContent.poiId(1011).uuidString.lowercased())?x=1", method: .get)
                #expect(lower.status == .ok)
                #expect(try await client.execute(uri: "/v1/tours/", method: .get).status == .ok)
                try Self.expectProblem(try await client.execute(uri: "/v1/pois/\(String(repeating: "g", count: 36))", method: .get), .badRequest)
                let echoed = try await client.execute(uri: "/v1/tours", method: .get, headers: [.xRequestId: "abc-123"])
                #expect(echoed.headers[.xRequestId] == "abc-123")
            }
        }
    }

    @Test("a live change reaches the responses with a new ETag; unknown methods get 405 with Allow")
    func liveChangesAndMethods() async throws {
        try await Self.withFeed { standIn, client in
            let uri = "/v1/tours/\(DemoContent.tourId)"
            let before = try await client.execute(uri: uri, method: .get)
            var renamed = try #require(DemoContent.pois.first)
            renamed.version = 2
            renamed.content.name = "Historic Quad (renovated)"
            try await standIn.publish(.changed(renamed))
            let shown = try await TestServices.eventually(timeout: .seconds(10)) {
                Self.text(try await client.execute(uri: uri, method: .get)).contains("Historic Quad (renovated)")
            }
            #expect(shown)
            #expect(try await client.execute(uri: uri, method: .get).headers[.eTag] != before.headers[.eTag])
            let search = try Self.json(try await client.execute(uri: "/v1/search?q=renovated", method: .get))
            #expect((search["pois"] as? [Any])?.count == 1)

            let delete = try await client.execute(uri: "/v1/tours", method: .delete)
            try Self.expectProblem(delete, .methodNotAllowed)
            #expect(delete.headers[.allow] == "GET")
            let getEvents = try await client.execute(uri: "/v1/events", method: .get)
            try Self.expectProblem(getEvents, .methodNotAllowed)
            #expect(getEvents.headers[.allow] == "POST")
            try Self.expectProblem(try await client.execute(uri: "/v1/nothing-here", method: .get), .notFound)

            let openapi = try Self.json(try await client.execute(uri: "/openapi.json", method: .get))
            #expect(openapi["openapi"] as? String == "3.1.0")
        }
    }
}
