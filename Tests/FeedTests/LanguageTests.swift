import Foundation
import HTTPTypes
import HummingbirdTesting
import Shared
import Testing
import TestSupport
@testable import Feed

/// DESIGN.md "Languages": which language answers, and the answers in it.
@Suite("Feed languages")
struct LanguageNegotiationTests {
    static let site = SiteLanguages(site: "en", offered: ["en", "es", "pt-BR"])

    static func chosen(_ acceptLanguage: String?, lang: String? = nil) throws -> String {
        try LanguageNegotiation.choose(lang: lang, acceptLanguage: acceptLanguage, among: site).tag
    }

    @Test("Accept-Language by q-value, region fallback, unknown and wildcard, ?lang= over the header")
    func negotiation() throws {
        #expect(try Self.chosen(nil) == "en")
        #expect(try Self.chosen("es") == "es")
        #expect(try Self.chosen("es-MX") == "es", "a region falls back to its language")
        #expect(try Self.chosen("ES-mx") == "es", "tags compare case-insensitively")
        #expect(try Self.chosen("pt-BR") == "pt-BR")
        #expect(try Self.chosen("pt") == "en", "lookup never widens a range: pt does not find pt-BR")
        #expect(try Self.chosen("fr") == "en", "an unknown language gets the site's")
        #expect(try Self.chosen("zh-Hant-TW, fr-CA") == "en")
        #expect(try Self.chosen("fr, es;q=0.5") == "es", "an unknown first choice gives way to a known second")
        #expect(try Self.chosen("en;q=0.4, es;q=0.9") == "es", "q decides, not the order")
        #expect(try Self.chosen("es;q=0.5, pt-BR;q=0.5") == "es", "equal q: the order sent")
        #expect(try Self.chosen("es;q=0, en") == "en", "q=0 means not this")
        #expect(try Self.chosen("*") == "en")
        #expect(try Self.chosen("*;q=0.9, es;q=0.8") == "es", "lookup skips a wildcard followed by other ranges (RFC 4647, 3.4)")
        #expect(try Self.chosen("es;q=abc, pt-BR") == "pt-BR", "a q that does not read skips its range")
        #expect(try Self.chosen("es;q=2") == "en", "q above 1 does not read")
        #expect(try Self.chosen("!!, es") == "es", "a malformed range is skipped")
        #expect(try Self.chosen("es-419") == "es")
        #expect(try Self.chosen("en", lang: "es") == "es", "?lang= overrides the header")
        #expect(try Self.chosen("es", lang: "fr") == "en", "an unknown ?lang= is the site's, not the header's")
        #expect(try Self.chosen(nil, lang: "es-MX") == "es")
        #expect(throws: (any Error).self) { try Self.chosen(nil, lang: "<script>") }
        #expect(throws: (any Error).self) { try Self.chosen(nil, lang: String(repeating: "a", count: 40)) }
    }

    @Test("the pipeline's reading of a request: no query and no header is the site's at once; a malformed lang leaves it to the router")
    func pipelineChoice() {
        #expect(LanguageNegotiation.choose(uri: "/v1/tours", acceptLanguage: nil, among: Self.site)?.tag == "en")
        #expect(LanguageNegotiation.choose(uri: "/v1/tours", acceptLanguage: "es-MX,es;q=0.9", among: Self.site)?.tag == "es")
        #expect(LanguageNegotiation.choose(uri: "/v1/tours?lang=pt-BR", acceptLanguage: "es", among: Self.site)?.tag == "pt-BR")
        #expect(LanguageNegotiation.choose(uri: "/v1/tours?lang=%3Cb%3E", acceptLanguage: nil, among: Self.site) == nil)
        #expect(LanguageNegotiation.choose(uri: "/v1/tours?lang=%ZZ", acceptLanguage: nil, among: Self.site) == nil)
    }

    @Test("a translation shows field by field; an empty one and another language's leave the site's text")
    func localized() {
        let content = PoiContent(name: "Randall Library", summary: "Books", description: "Four floors", latitude: 0, longitude: 0,
                                 accessibility: "Lifts", translations: ["es": ["name": "Biblioteca Randall", "summary": ""], "fr": ["name": "Bibliothèque"]])
        let spanish = content.localized(to: "ES")
        #expect(spanish.name == "Biblioteca Randall")
        #expect(spanish.summary == "Books", "an empty translation was dropped: the site's text serves")
        #expect(spanish.description == "Four floors")
        #expect(content.localized(to: "de") == content)
        #expect(content.languages(site: "en", offered: ["en", "es", "de"]) == ["en", "es"])
        #expect(content.untranslatedFields(in: "es") == ["summary", "description", "accessibility"])
    }

    @Test("a POI's pictures' alt texts translate line by line: an empty line leaves that picture's site text")
    func pictureAlts() {
        let content = PoiContent(name: "Hall", latitude: 0, longitude: 0, pictures: ["https://a.example/1.jpg", "https://a.example/2.jpg", "https://a.example/3.jpg"],
                                 pictureAlts: ["Brick front", "", "The gate"], translations: ["es": ["pictureAlts": "Fachada de ladrillo\n  \nEl portón"]])
        #expect(content.localized(to: "es").pictureAlts == ["Fachada de ladrillo", "", "El portón"])
        #expect(PoiContent(name: "Hall", latitude: 0, longitude: 0, pictures: ["https://a.example/1.jpg", "https://a.example/2.jpg"],
                           pictureAlts: ["Brick front", "The gate"], translations: ["es": ["pictureAlts": "\nEl portón"]]).localized(to: "es").pictureAlts
                == ["Brick front", "El portón"], "an empty line: the site's alt text")
        #expect(content.text(of: "pictureAlts") == "Brick front\n\nThe gate")
        #expect(content.untranslatedFields(in: "fr") == ["name", "pictureAlts"])
    }
}

/// The answers over HTTP, through the pipeline (`.live`) and the router, with two languages loaded.
@Suite("Feed languages over HTTP", .serialized, .stopsIfHung)
struct LanguageHTTPTests {
    static let library: PoiState = {
        var poi = Fixture.poi(name: "Randall Library", latitude: 34.2275, longitude: -77.8750, summary: "Books and study rooms",
                              description: "Four floors of books.", status: .published)
        poi.content.translations = ["es": ["name": "Biblioteca Randall", "summary": "Libros y salas de estudio"]]
        return poi
    }()
    static let untranslated = Fixture.poi(name: "Boathouse", latitude: 34.2276, longitude: -77.8751, summary: "Kayaks", status: .published)
    static let tour: TourState = {
        var tour = Fixture.tour(name: "Library Walk", stops: [library.id, untranslated.id], summary: "Where the books are")
        tour.content.translations = ["es": ["name": "Paseo de la biblioteca"]]
        return tour
    }()
    static let content: [CatalogEvent] = [.changed(library), .changed(untranslated), .changed(tour)]

    static func withFeed(_ testing: TestingSetup, _ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        try await withFeed(testing) { _, client in try await body(client) }
    }

    static func withFeed(_ testing: TestingSetup, _ body: @escaping @Sendable (CatalogStandIn, any TestClientProtocol) async throws -> Void) async throws {
        try await FeedHTTPTests.withFeed(content: content, testing: testing,
                                         configure: { $0.site.languages = SiteLanguages(site: "en", offered: ["en", "es"]) }) { standIn, client in
            // Everything arrived: the tour lists its second stop.
            let arrived = try await TestServices.eventually(timeout: .seconds(30), interval: .milliseconds(100)) {
                let answer = try await client.execute(uri: "/v1/tours/\(tour.id.uuidString)", method: .get)
                guard answer.status == .ok else { return false }
                return (try FeedHTTPTests.json(answer)["stops"] as? [Any])?.count == 2
            }
            try #require(arrived, "the content never reached the feed")
            try await body(standIn, client)
        }
    }

    static func get(_ client: any TestClientProtocol, _ uri: String, _ language: String? = nil, ifNoneMatch: String? = nil) async throws -> TestResponse {
        var headers = HTTPFields()
        if let language { headers[.acceptLanguage] = language }
        if let ifNoneMatch { headers[.ifNoneMatch] = ifNoneMatch }
        return try await client.execute(uri: uri, method: .get, headers: headers)
    }

    @Test("a POI, a tour, the tour list and the POI page in the phone's language, with Content-Language, Vary and an ETag per language",
          arguments: [TestingSetup.live, .router])
    func storedAnswers(_ testing: TestingSetup) async throws {
        try await Self.withFeed(testing) { client in
            let poiPath = "/v1/pois/\(Self.library.id.uuidString)"
            let english = try await Self.get(client, poiPath)
            let spanish = try await Self.get(client, poiPath, "es-MX, en;q=0.5")
            #expect(english.headers[.contentLanguage] == "en")
            #expect(spanish.headers[.contentLanguage] == "es")
            for answer in [english, spanish] { #expect(answer.headers[.vary] == "Accept-Encoding, Accept-Language") }
            let poi = try FeedHTTPTests.json(spanish)
            #expect(poi["name"] as? String == "Biblioteca Randall")
            #expect(poi["summary"] as? String == "Libros y salas de estudio")
            #expect(poi["description"] as? String == "Four floors of books.", "an untranslated field falls back to the site's text alone")
            #expect(poi["language"] as? String == "es")
            #expect(poi["languages"] as? [String] == ["en", "es"])
            #expect(poi["translations"] == nil, "one language at a time")
            #expect(try FeedHTTPTests.json(english)["name"] as? String == "Randall Library")
            let englishTag = try #require(english.headers[.eTag]), spanishTag = try #require(spanish.headers[.eTag])
            #expect(englishTag != spanishTag)
            #expect(try await Self.get(client, poiPath, "es", ifNoneMatch: spanishTag).status == .notModified)
            #expect(try await Self.get(client, poiPath, "en", ifNoneMatch: spanishTag).status == .ok, "the Spanish tag does not validate English")
            // ?lang= over the header; unknown languages get the site's; a malformed lang is a 400.
            #expect(try FeedHTTPTests.json(try await Self.get(client, poiPath + "?lang=en", "es"))["name"] as? String == "Randall Library")
            let french = try await Self.get(client, poiPath, "fr")
            #expect(french.headers[.contentLanguage] == "en")
            try FeedHTTPTests.expectProblem(try await Self.get(client, poiPath + "?lang=%3Cscript%3E"), .badRequest)

            // A POI with no translation answers in Spanish with the site's texts, and says which languages it has.
            let boathouse = try await Self.get(client, "/v1/pois/\(Self.untranslated.id.uuidString)", "es")
            #expect(boathouse.headers[.contentLanguage] == "es")
            #expect(try FeedHTTPTests.json(boathouse)["name"] as? String == "Boathouse")
            #expect(try FeedHTTPTests.json(boathouse)["languages"] as? [String] == ["en"])

            let tour = try FeedHTTPTests.json(try await Self.get(client, "/v1/tours/\(Self.tour.id.uuidString)", "es"))
            #expect(tour["name"] as? String == "Paseo de la biblioteca")
            #expect(tour["summary"] as? String == "Where the books are")
            let stops = try #require(tour["stops"] as? [[String: Any]])
            #expect(stops.map { $0["name"] as? String } == ["Biblioteca Randall", "Boathouse"])
            #expect(stops.map { $0["languages"] as? [String] } == [["en", "es"], ["en"]])

            let list = try await Self.get(client, "/v1/tours", "es")
            #expect(list.headers[.contentLanguage] == "es")
            let listed = try #require(try FeedHTTPTests.json(list)["tours"] as? [[String: Any]])
            #expect(listed.first?["name"] as? String == "Paseo de la biblioteca")
            #expect(try FeedHTTPTests.json(try await Self.get(client, "/v1/tours"))["language"] as? String == "en")

            let page = FeedHTTPTests.text(try await Self.get(client, poiPath + "/page", "es"))
            #expect(page.contains("<html lang=\"es\">"))
            #expect(page.contains("Biblioteca Randall"))
            #expect(page.contains("Paseo de la biblioteca"), "the tours stopping there by their Spanish names")
            #expect(FeedHTTPTests.text(try await Self.get(client, poiPath + "/page")).contains("<html lang=\"en\">"))

            // Answers in one language only say nothing of languages, and do not read lang.
            #expect(try await Self.get(client, "/v1/legacy/tours.xml", "es").headers[.contentLanguage] == nil)
            #expect(try await Self.get(client, "/v1/legacy/tours.xml?lang=%3Cscript%3E").status == .ok)
            #expect(try await Self.get(client, "/openapi.json?lang=%ZZ").status == .ok)
        }
    }

    @Test("nearby, browse, search, the bundle and the calendar follow the language; a word of the Spanish name finds the stop")
    func computedAnswers() async throws {
        try await Self.withFeed(.router) { standIn, client in
            let fair = CalendarEntryState(id: UUID(), version: 1, status: .published, content: CalendarEntryContent(
                title: "Book fair", summary: "Second-hand books", description: "In the library.", startsAt: "2026-12-10", endsAt: "2026-12-11",
                timeZone: "UTC", allDay: true, placePoiId: Self.library.id,
                translations: ["es": ["title": "Feria del libro", "description": "En la biblioteca."]]),
                updatedAt: Date(timeIntervalSince1970: 1_790_000_000))
            let topic = standIn.configuration.topic(Topic.catalogEvents)
            let event = CalendarEntryEvent.changed(fair)
            _ = try await standIn.producer.send([KafkaOutgoingMessage(topic: topic, key: fair.id.uuidString.lowercased(),
                                                                      value: try Envelope(type: event.type, source: "catalog", data: event).encoded())])
            let entryPath = "/v1/calendar/\(fair.id.uuidString)"
            #expect(try await TestServices.eventually(timeout: .seconds(20), interval: .milliseconds(100)) {
                try await Self.get(client, entryPath).status == .ok
            })
            let entry = try await Self.get(client, entryPath, "es")
            #expect(entry.headers[.contentLanguage] == "es")
            let spanishEntry = try FeedHTTPTests.json(entry)
            #expect(spanishEntry["title"] as? String == "Feria del libro")
            #expect(spanishEntry["summary"] as? String == "Second-hand books", "untranslated: the site's text")
            #expect(spanishEntry["description"] as? String == "En la biblioteca.")
            #expect(spanishEntry["languages"] as? [String] == ["en", "es"] && spanishEntry["translations"] == nil)
            #expect((spanishEntry["place"] as? [String: Any])?["name"] as? String == "Biblioteca Randall", "its place by its Spanish name")
            // The iCalendar file too, by ?lang= (calendar apps subscribing send no Accept-Language).
            let spanishFile = try await Self.get(client, "/v1/calendar.ics?lang=es")
            #expect(spanishFile.headers[.contentLanguage] == "es")
            #expect(FeedHTTPTests.text(spanishFile).contains("SUMMARY:Feria del libro") && FeedHTTPTests.text(spanishFile).contains("LOCATION:Biblioteca Randall"))
            let englishFile = try await Self.get(client, "/v1/calendar.ics")
            #expect(FeedHTTPTests.text(englishFile).contains("SUMMARY:Book fair") && englishFile.headers[.eTag] != spanishFile.headers[.eTag])
            let month = try FeedHTTPTests.json(try await Self.get(client, "/v1/calendar?from=2026-12-01&to=2026-12-31&lang=es"))
            #expect((month["occurrences"] as? [[String: Any]])?.map { $0["title"] as? String } == ["Feria del libro"])
            let feria = try FeedHTTPTests.json(try await Self.get(client, "/v1/search?q=feria", "es"))
            #expect((feria["events"] as? [[String: Any]])?.map { $0["title"] as? String } == ["Feria del libro"])

            // A person's role and department.
            let librarian = PersonState(id: UUID(), version: 1, status: .published, content: PersonContent(
                name: "Ada Ortiz", role: "Librarian", department: "Library", translations: ["es": ["role": "Bibliotecaria"]]),
                updatedAt: Date(timeIntervalSince1970: 1_790_000_000))
            let personEvent = PersonEvent.changed(librarian)
            _ = try await standIn.producer.send([KafkaOutgoingMessage(topic: topic, key: librarian.id.uuidString.lowercased(),
                                                                      value: try Envelope(type: personEvent.type, source: "catalog", data: personEvent).encoded())])
            #expect(try await TestServices.eventually(timeout: .seconds(20), interval: .milliseconds(100)) {
                try await Self.get(client, "/v1/people/\(librarian.id.uuidString)").status == .ok
            })
            let person = try FeedHTTPTests.json(try await Self.get(client, "/v1/people/\(librarian.id.uuidString)", "es"))
            #expect(person["role"] as? String == "Bibliotecaria" && person["department"] as? String == "Library")
            #expect(person["languages"] as? [String] == ["en", "es"] && person["translations"] == nil)
            let found = try FeedHTTPTests.json(try await Self.get(client, "/v1/people?q=bibliotecaria&lang=es"))
            #expect((found["people"] as? [[String: Any]])?.map { $0["name"] as? String } == ["Ada Ortiz"])

            // A featured item without a title of its own is named as what it shows is, in the language asked for.
            let featured = FeaturedState(id: UUID(), version: 1, status: .published, content: FeaturedContent(
                targetKind: .poi, targetId: Self.library.id, imageUrl: "https://images.example.edu/library.jpg", imageAlt: "The library's reading room",
                translations: ["es": ["imageAlt": "La sala de lectura"]]), updatedAt: Date(timeIntervalSince1970: 1_790_000_000))
            let featuredEvent = FeaturedEvent.changed(featured)
            _ = try await standIn.producer.send([KafkaOutgoingMessage(topic: topic, key: featured.id.uuidString.lowercased(),
                                                                      value: try Envelope(type: featuredEvent.type, source: "catalog", data: featuredEvent).encoded())])
            #expect(try await TestServices.eventually(timeout: .seconds(20), interval: .milliseconds(100)) {
                try await Self.get(client, "/v1/featured/\(featured.id.uuidString)").status == .ok
            })
            let item = try FeedHTTPTests.json(try await Self.get(client, "/v1/featured/\(featured.id.uuidString)", "es"))
            #expect(item["title"] as? String == "Biblioteca Randall" && item["imageAlt"] as? String == "La sala de lectura")
            #expect(item["summary"] as? String == "Libros y salas de estudio")
            #expect(try FeedHTTPTests.json(try await Self.get(client, "/v1/featured/\(featured.id.uuidString)"))["title"] as? String == "Randall Library")

            // A library picture's texts on the POI that shows it.
            let hash = String(repeating: "c3", count: 32)
            let picture = MediaState(id: UUID(), version: 1, status: .published, content: MediaContent(
                sha256: hash, format: .jpeg, byteCount: 1_000, fileName: "reading-room.jpg", title: "Reading room", altText: "Desks under tall windows",
                width: 800, height: 600, translations: ["es": ["altText": "Mesas bajo ventanales"]]), updatedAt: Date(timeIntervalSince1970: 1_790_000_000))
            let mediaEvent = MediaEvent.changed(picture)
            _ = try await standIn.producer.send([KafkaOutgoingMessage(topic: topic, key: picture.id.uuidString.lowercased(),
                                                                      value: try Envelope(type: mediaEvent.type, source: "catalog", data: mediaEvent).encoded())])
            var withPicture = Self.library
            withPicture.version = 2
            withPicture.content.pictures = ["https://feed.example.edu/v1/media/\(hash)"]
            try await standIn.publish(.changed(withPicture))
            let poiPath = "/v1/pois/\(Self.library.id.uuidString)"
            #expect(try await TestServices.eventually(timeout: .seconds(20), interval: .milliseconds(100)) {
                (try FeedHTTPTests.json(try await Self.get(client, poiPath))["media"] as? [Any])?.count == 1
            })
            let shown = try FeedHTTPTests.json(try await Self.get(client, poiPath, "es"))
            #expect((shown["media"] as? [[String: Any]])?.first?["altText"] as? String == "Mesas bajo ventanales")
            #expect((shown["media"] as? [[String: Any]])?.first?["title"] as? String == "Reading room", "an untranslated title is the site's")
            #expect(shown["pictureAlts"] as? [String] == ["Mesas bajo ventanales"])

            let near = try await Self.get(client, "/v1/pois?near=34.2275,-77.8750&radius=500", "es")
            #expect(near.headers[.contentLanguage] == "es")
            #expect(near.headers[.vary] == "Accept-Encoding, Accept-Language")
            let nearby = try FeedHTTPTests.json(near)
            #expect(nearby["language"] as? String == "es")
            let names = try #require(nearby["pois"] as? [[String: Any]]).compactMap { $0["name"] as? String }
            #expect(Set(names) == ["Biblioteca Randall", "Boathouse"])

            let browse = try FeedHTTPTests.json(try await Self.get(client, "/v1/pois?lang=es"))
            #expect(try #require(browse["pois"] as? [[String: Any]]).contains { $0["name"] as? String == "Biblioteca Randall" })

            // "biblioteca" is only in the Spanish name; found in any language, shown in the one asked for.
            for (language, name) in [("es", "Biblioteca Randall"), ("en", "Randall Library")] {
                let found = try FeedHTTPTests.json(try await Self.get(client, "/v1/search?q=biblioteca", language))
                #expect(try #require(found["pois"] as? [[String: Any]]).map { $0["name"] as? String } == [name])
                #expect((found["tours"] as? [[String: Any]])?.map { $0["name"] as? String } == [language == "es" ? "Paseo de la biblioteca" : "Library Walk"])
            }

            let bundle = try await Self.get(client, "/v1/tours/\(Self.tour.id.uuidString)/bundle", "es")
            #expect(bundle.headers[.contentLanguage] == "es")
            let body = try FeedHTTPTests.json(bundle)
            #expect((body["tour"] as? [String: Any])?["name"] as? String == "Paseo de la biblioteca")
            #expect((body["pois"] as? [[String: Any]])?.first?["name"] as? String == "Biblioteca Randall")
            let english = try await Self.get(client, "/v1/tours/\(Self.tour.id.uuidString)/bundle")
            #expect(english.headers[.eTag] != bundle.headers[.eTag])
        }
    }

    @Test("category names in the phone's language, sorted in it; paths stay the site's, so filters and POIs keep naming them")
    func categoryNames() async throws {
        try await Self.withFeed(.router) { standIn, client in
            let topic = standIn.configuration.topic(Topic.catalogEvents)
            let see = UUID(), eat = UUID(), cafes = UUID()
            let categories = [
                CategoryState(id: see, version: 1, name: "See", parentId: nil, path: "See", updatedAt: Date(), translations: ["es": ["name": "Ver"]]),
                CategoryState(id: eat, version: 1, name: "Eat", parentId: nil, path: "Eat", updatedAt: Date(), translations: ["es": ["name": "Comer"]]),
                CategoryState(id: cafes, version: 1, name: "Cafés", parentId: eat, path: "Eat/Cafés", updatedAt: Date()),
            ]
            _ = try await standIn.producer.send(try categories.map { category in
                KafkaOutgoingMessage(topic: topic, key: category.id.uuidString.lowercased(), value: try Envelope(
                    type: CategoryEvent.Kind.changed.rawValue, source: "catalog", data: CategoryEvent.changed(category)).encoded())
            })
            @Sendable func roots(_ language: String?) async throws -> (TestResponse, [[String: Any]]) {
                let answer = try await Self.get(client, "/v1/categories", language)
                return (answer, try FeedHTTPTests.json(answer)["categories"] as? [[String: Any]] ?? [])
            }
            #expect(try await TestServices.eventually(timeout: .seconds(20), interval: .milliseconds(100)) {
                let nodes = try await roots(nil).1
                return nodes.count == 2 && (nodes.first?["children"] as? [[String: Any]])?.count == 1
            })
            let (english, inEnglish) = try await roots(nil)
            #expect(inEnglish.map { $0["name"] as? String } == ["Eat", "See"])
            let (spanish, inSpanish) = try await roots("es-ES")
            #expect(spanish.headers[.contentLanguage] == "es" && english.headers[.contentLanguage] == "en")
            #expect(spanish.headers[.vary] == "Accept-Encoding, Accept-Language")
            #expect(spanish.headers[.eTag] != english.headers[.eTag])
            #expect(inSpanish.map { $0["name"] as? String } == ["Comer", "Ver"], "sorted by the Spanish names")
            #expect(try FeedHTTPTests.json(spanish)["language"] as? String == "es" && FeedHTTPTests.json(english)["language"] as? String == "en")
            #expect(inSpanish.map { $0["path"] as? String } == ["Eat", "See"], "paths stay the site's")
            let child = (inSpanish.first?["children"] as? [[String: Any]])?.first
            #expect(child?["name"] as? String == "Cafés" && child?["path"] as? String == "Eat/Cafés", "untranslated: the site's name")
            #expect(try await roots(nil).1.map { $0["name"] as? String } == ["Eat", "See"], "the English answer is its own")
        }
    }
}
