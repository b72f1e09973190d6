import CZlib
import Foundation
import NIOCore
#if canImport(FoundationXML)
import FoundationXML
#endif
import Shared
import Testing
@testable import Feed

@Suite("Rendering")
struct RenderingTests {
    @Test("an injected calendar link (stored before catalog refused it) writes no extra property; TEXT values are escaped and no raw control character is written")
    func calendarFileInjection() {
        let injected = "https://ok.example/\r\nATTACH:https://evil.example/x.exe\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\nEND:VALARM"
        var content = CalendarEntryContent(title: "Open\r\nATTACH:https://evil.example/t\u{7}", summary: "a;b,c\\d\u{2028}X-A:1\u{85}\u{9B}",
                                           description: "", startsAt: "2026-12-05T09:00",
                                           endsAt: "2026-12-05T10:00", timeZone: "America/New_York")
        content.url = injected
        content.registrationUrl = "https://ok.example/register\nX-EVIL:1"
        let entry = CalendarEntryState(id: UUID(), version: 1, status: .published, content: content, updatedAt: Date())
        let ics = String(decoding: CalendarFile.render([entry], placeName: { _ in nil }), as: UTF8.self)
        let lines = ics.components(separatedBy: "\r\n").dropLast()
        #expect(!lines.contains { $0.hasPrefix("ATTACH") || $0.hasPrefix("BEGIN:VALARM") || $0.hasPrefix("X-EVIL") || $0.hasPrefix("URL") })
        #expect(!lines.contains { $0.hasPrefix("X-ITOUR-REGISTRATION-URL") })
        #expect(lines.contains("SUMMARY:Open\\nATTACH:https://evil.example/t"))
        #expect(lines.contains("DESCRIPTION:a\\;b\\,c\\\\d\\nX-A:1\\n"))
        #expect(!ics.unicodeScalars.contains { $0.value < 0x20 && $0 != "\r" && $0 != "\n" || (0x7F...0x9F).contains($0.value) || $0.value == 0x2028 })
        #expect(!ics.replacingOccurrences(of: "\r\n", with: "").contains("\n") && !ics.replacingOccurrences(of: "\r\n", with: "").contains("\r"))
        // Catalog refuses such links now: whitespace or a control character anywhere.
        #expect(CalendarSchedule.problems(content).map(\.field) == ["url", "registrationUrl"])
        content.url = "https://ok.example/a b"
        content.registrationUrl = "https://ok.example/\u{2028}"
        #expect(CalendarSchedule.problems(content).map(\.field) == ["url", "registrationUrl"])
    }


    // MARK: content members

    /// What `members(of:)` wrote, read back by Foundation.
    static func members(of content: some Encodable, except: Set<String> = []) throws -> [String: Any] {
        var json = JSONWriter()
        json.beginObject()
        json.key("before"); json.number(1)
        json.members(of: content, except: except)
        json.key("after"); json.bool(true)
        json.endObject()
        return try #require(try JSONSerialization.jsonObject(with: Data(json.bytes)) as? [String: Any])
    }

    struct Leaves: Encodable {
        struct SelfHanding: Encodable {
            func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                try container.encode(self)
            }
        }
        var wide: Int64 = -9_000_000_000, small: UInt8 = 200, huge: UInt64 = .max, single: Float = 0.5
        var link = URL(string: "https://example.edu/a?b=c")!
        var odd = SelfHanding()
    }

    @Test("content members of every leaf type, and a conformance that keeps handing itself down ends as null, not a stack overflow")
    func contentMemberLeaves() throws {
        let written = try Self.members(of: Leaves())
        #expect(written["wide"] as? Int == -9_000_000_000 && written["small"] as? Int == 200 && written["single"] as? Double == 0.5)
        #expect((written["huge"] as? NSNumber)?.uint64Value == .max)
        #expect(written["link"] as? String == "https://example.edu/a?b=c")
        #expect(written["odd"] is NSNull)
    }

    @Test("the OpenAPI document's via values are the tracking event's")
    func openAPIVia() throws {
        let document = try #require(try JSONSerialization.jsonObject(with: Data(OpenAPIDocument.json.utf8)) as? [String: Any])
        let schemas = (document["components"] as? [String: Any])?["schemas"] as? [String: Any]
        let via = ((schemas?["TrackingEvent"] as? [String: Any])?["properties"] as? [String: Any])?["via"] as? [String: Any]
        #expect(via?["enum"] as? [String] == TrackingEvent.Via.allCases.map(\.rawValue))
    }

    static func canonical(_ value: Any) throws -> Data { try JSONSerialization.data(withJSONObject: [value], options: .sortedKeys) }

    @Test("a record's content in a feed answer: the members its codec writes, absent optionals null at the top only, hostile text escaped")
    func contentMembers() throws {
        let hostile = "\"}<script>\u{0}\u{1F}\\é🚶\u{2028}"
        let poi = PoiContent(name: hostile, summary: "s", description: "d", latitude: 34.5, longitude: -77.25, categories: ["A", "B/C"],
                             buildings: ["x"], links: [MediaLink(name: hostile, type: .video, url: "https://e.org/v")], legacyId: 7, priceLevel: 0)
        let event = CalendarEntryContent(title: "Walk", summary: "", description: "", startsAt: "2027-01-05T10:00", endsAt: "2027-01-05T11:00",
                                         timeZone: "America/New_York", allDay: false, placeText: "Lawn", categories: [],
                                         recurrence: CalendarRecurrence(frequency: .weekly, byDay: ["TU"]), exceptionDates: [])
        func check(_ content: some Encodable, except: Set<String>) throws {
            let written = try Self.members(of: content, except: except)
            let coded = try #require(try JSONSerialization.jsonObject(with: JSONCoding.encoder.encode(content)) as? [String: Any])
            #expect(written["before"] as? Int == 1 && written["after"] as? Bool == true, "the caller's members around them")
            for (key, value) in coded where !except.contains(key) {
                #expect(try Self.canonical(written[key] as Any) == Self.canonical(value), "\(key)")
            }
            for key in except { #expect(written[key] == nil) }
            let absent = Set(written.keys).subtracting(coded.keys).subtracting(["before", "after"])
            #expect(!absent.isEmpty && absent.allSatisfy { written[$0] is NSNull }, "\(absent)")
        }
        try check(poi, except: ["categories"])
        try check(event, except: ["placePoiId"])
        let nested = try #require(try Self.members(of: event)["recurrence"] as? [String: Any])
        #expect(Set(nested.keys) == ["frequency", "byDay"], "absent members of nested values are left out, as the codec does")
        #expect(try Self.members(of: poi)["name"] as? String == hostile)
    }

    static func gunzip(_ bytes: [UInt8]) -> [UInt8]? {
        var stream = z_stream()
        guard inflateInit2_(&stream, 15 + 16, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
        defer { inflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: 1 << 20)
        var input = bytes
        let status = input.withUnsafeMutableBytes { source in
            output.withUnsafeMutableBytes { target in
                stream.next_in = source.bindMemory(to: Bytef.self).baseAddress
                stream.avail_in = uInt(source.count)
                stream.next_out = target.bindMemory(to: Bytef.self).baseAddress
                stream.avail_out = uInt(target.count)
                return inflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else { return nil }
        return Array(output.prefix(Int(stream.total_out)))
    }

    let hostile = "<script>alert('x')</script> & \"quotes\" \u{1}\u{0}"

    @Test("the gzip copy inflates to the identity bytes; ETags differ per variant and change with content")
    func gzipAndETags() throws {
        let body = Array(String(repeating: "Historic Quad, James Hall, Hoggard Hall. ", count: 20).utf8)
        let resource = RenderedResource(bytes: body, contentType: MediaTypes.json, cacheControl: CachePolicy.content, compressor: GzipCompressor())
        let gzip = try #require(resource.gzip)
        #expect(gzip.readableBytes < body.count)
        #expect(Self.gunzip(Array(gzip.readableBytesView)) == body)
        #expect(resource.etag != resource.gzipETag)
        #expect(resource.etag.hasPrefix("\"") && resource.etag.hasSuffix("\""))
        let other = RenderedResource(bytes: body + [0x20], contentType: MediaTypes.json, cacheControl: CachePolicy.content, compressor: GzipCompressor())
        #expect(other.etag != resource.etag)
        // Tiny bodies are not worth compressing.
        let small = RenderedResource(bytes: Array("{}".utf8), contentType: MediaTypes.json, cacheControl: CachePolicy.content, compressor: GzipCompressor())
        #expect(small.gzip == nil)
    }

    @Test("Accept-Encoding and If-None-Match parsing")
    func negotiation() {
        #expect(ContentNegotiation.acceptsGzip("gzip, deflate, br"))
        #expect(ContentNegotiation.acceptsGzip("deflate, x-gzip;q=0.5"))
        #expect(ContentNegotiation.acceptsGzip("*"))
        #expect(!ContentNegotiation.acceptsGzip("gzip;q=0"))
        #expect(!ContentNegotiation.acceptsGzip("*, gzip;q=0"))
        #expect(!ContentNegotiation.acceptsGzip("identity"))
        #expect(!ContentNegotiation.acceptsGzip(nil))
        #expect(ContentNegotiation.ifNoneMatch("\"a\", W/\"b\"", matchesAnyOf: ["\"b\""]))
        #expect(ContentNegotiation.ifNoneMatch("*", matchesAnyOf: ["\"b\""]))
        #expect(!ContentNegotiation.ifNoneMatch("\"a\"", matchesAnyOf: ["\"b\""]))
    }

    @Test("UUIDs are written as uuidString spells them")
    func uuids() {
        for id in (0..<100).map({ _ in UUID() }) + [UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))] {
            var json = JSONWriter()
            json.uuid(id)
            #expect(String(decoding: json.bytes, as: UTF8.self) == "\"\(id.uuidString)\"")
        }
    }

    @Test("JSON escapes control characters and quotes and stays valid")
    func json() throws {
        let poi = Fixture.poi(name: hostile, summary: "line\nbreak\ttab \\ slash /", category: "Shop/Fashion",
                              links: [MediaLink(name: "Tour video", type: .video, url: "https://example.edu/v.mp4")])
        let bytes = ContentJSON.poiDetail(poi, tourIds: [UUID()], openingHours: nil, language: Fixture.en, languages: ["en"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect(object["name"] as? String == hostile)
        #expect(object["summary"] as? String == "line\nbreak\ttab \\ slash /")
        #expect((object["links"] as? [[String: String]])?.first == ["name": "Tour video", "type": "video", "url": "https://example.edu/v.mp4"])
        for key in ["address", "phone", "website", "openingHours", "legacyId"] { #expect(object[key] is NSNull, "\(key)") }
        var members = JSONWriter()
        members.beginObject()
        ContentJSON.poiListingMembers(id: poi.id, poi.content, languages: ["en"], to: &members)
        members.endObject()
        let listing = try #require(try JSONSerialization.jsonObject(with: Data(members.bytes)) as? [String: Any])
        #expect(Set(listing.keys) == ["category", "id", "languages", "latitude", "longitude", "name", "summary"])
    }

    @Test("a POI's media in an answer are the files that language uses: its own narration, not the other translations'")
    func mediaOfALanguage() throws {
        let (english, spanish, french) = (String(repeating: "a1", count: 32), String(repeating: "b2", count: 32), String(repeating: "c3", count: 32))
        let items = [english, spanish, french].map { MediaContent(sha256: $0, format: .mp3, byteCount: 10, fileName: "n.mp3", title: "N", transcript: "Words") }
        var poi = Fixture.poi(name: "Hall")
        poi.content.narration = english
        poi.content.translations = ["es": ["narration": spanish, "name": "Sala"], "fr": ["narration": french]]
        let media = PoiMedia(baseURL: "/v1/media/", items: items)
        func answer(_ index: Int, _ tag: String) throws -> [String: Any] {
            let language = ContentLanguage(index: index, tag: tag)
            let bytes = ContentJSON.poiDetail(poi.localized(language), tourIds: [], openingHours: nil,
                                              media: language.isSite ? media : media.localized(to: tag), language: language, languages: ["en", "es", "fr"])
            return try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        }
        for (index, tag, hash) in [(0, "en", english), (1, "es", spanish), (2, "fr", french)] {
            let shown = try answer(index, tag)
            #expect((shown["media"] as? [[String: Any]])?.compactMap { $0["sha256"] as? String } == [hash], "\(tag)")
            #expect((shown["narration"] as? [String: Any])?["sha256"] as? String == hash, "\(tag)")
        }
    }

    @Test("the POI page links library pictures relatively, keeping their ?w=, and other sites' pictures as given")
    func relativeLibraryPictures() {
        let hash = String(repeating: "ab", count: 32)
        let item = MediaContent(sha256: hash, format: .jpeg, byteCount: 10, fileName: "a.jpg", title: "A", altText: "The quad", width: 800, height: 600)
        let poi = Fixture.poi(name: "Quad", pictures: ["https://tours.example.edu/v1/media/\(hash)?w=400", "https://example.edu/p.jpg"])
        let media = PoiMedia(baseURL: "https://tours.example.edu/v1/media/", items: [item]).linked(from: PoiPage.relativeMediaBase)
        let html = String(decoding: PoiPage.render(poi, tourNames: [], media: media), as: UTF8.self)
        #expect(html.contains(#"<img src="../../media/\#(hash)?w=400" alt="The quad""#))
        #expect(html.contains(#"<img src="https://example.edu/p.jpg""#))
    }

    @Test("the POI page escapes everything, links only http(s) and reads well on a phone")
    func page() {
        let poi = Fixture.poi(name: hostile, summary: "S", buildings: ["Kenan Hall"], description: "First paragraph.\n\nSecond <b>one</b>.",
                              links: [MediaLink(name: "Audio", type: .audio, url: "https://example.edu/a.mp3"),
                                      MediaLink(name: "Bad", type: .page, url: "javascript:alert(1)")],
                              pictures: ["https://example.edu/p.jpg", "javascript:alert(2)"])
        let html = String(decoding: PoiPage.render(poi, tourNames: ["Students Tour (Beta)"]), as: UTF8.self)
        #expect(!html.contains("<script>"))
        #expect(html.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;quotes&quot;"))
        #expect(!html.contains("javascript:"))
        #expect(html.contains("<img src=\"https://example.edu/p.jpg\""))
        #expect(html.contains("<a href=\"https://example.edu/a.mp3\">Audio</a> (audio)"))
        #expect(html.contains("<p>Second &lt;b&gt;one&lt;/b&gt;.</p>"))
        #expect(html.contains("name=\"viewport\""))
        #expect(html.contains("<li>Kenan Hall</li>"))
        #expect(html.utf8.count < 4_096)
    }

    @Test("the POI page's own words follow its language by lookup (es-MX is Spanish), English where the suite has none")
    func pageWords() {
        var poi = Fixture.poi(name: "Hall", summary: "S", buildings: ["Kenan Hall"],
                              links: [MediaLink(name: "Video", type: .video, url: "https://example.edu/v.mp4")])
        poi.content.openingHours = "Mo-Fr 09:00-17:00"
        poi.content.priceLevel = 0
        let spanish = String(decoding: PoiPage.render(poi, tourNames: ["Paseo"], language: "es-MX"), as: UTF8.self)
        for words in ["<html lang=\"es-MX\">", "<h2>Edificios</h2>", "<h2>En los recorridos</h2>", "<h2>Visita</h2>", "<dt>Horario</dt>",
                      "<th scope=\"row\">lunes</th><td>09:00-17:00</td>", "<th scope=\"row\">domingo</th><td>Cerrado</td>", "<dd>Gratis</dd>",
                      "(vídeo)"] {
            #expect(spanish.contains(words), "\(words)")
        }
        #expect(!spanish.contains("Buildings") && !spanish.contains("Opening hours"))
        let chinese = String(decoding: PoiPage.render(poi, tourNames: [], language: "zh-Hant"), as: UTF8.self)
        #expect(chinese.contains("<html lang=\"zh-Hant\">") && chinese.contains("<h2>Buildings</h2>") && chinese.contains("<th scope=\"row\">Monday</th>"))
        #expect(PageWords.of("PT-br").language == "pt" && PageWords.of("de").language == "de" && PageWords.of("x-klingon").language == "en")
    }

    @Test("the legacy XML is well-formed with hostile text and has Appendix E's elements")
    func legacyXML() throws {
        let poi = Fixture.poi(name: hostile, summary: "Randall & Campus Commons", legacyId: 1013)
        let tour = Fixture.tour(name: "Students Tour (Beta)", stops: [poi.id], summary: hostile, legacyId: 11)
        for bytes in [LegacyXML.tours([("11", tour)]), LegacyXML.pois(of: tour, stops: [poi])] {
            let parser = XMLParser(data: Data(bytes))
            #expect(parser.parse(), "\(String(decoding: bytes, as: UTF8.self))")
        }
        let pois = String(decoding: LegacyXML.pois(of: tour, stops: [poi]), as: UTF8.self)
        for element in ["<channel>", "<name>", "<description>", "<item>", "<poiID>1013</poiID>", "<title>", "<summary>Randall &amp; Campus Commons</summary>",
                        "<latitude>", "<longitude>"] {
            #expect(pois.contains(element), "\(element)")
        }
    }

    @Test("the OpenAPI document is valid JSON and its near pattern is the one the handler applies")
    func openAPI() throws {
        let document = try #require(try JSONSerialization.jsonObject(with: Data(OpenAPIDocument.json.utf8)) as? [String: Any])
        #expect(document["openapi"] as? String == "3.1.0")
        let paths = try #require(document["paths"] as? [String: Any])
        for path in ["/v1/tours", "/v1/tours/{id}", "/v1/pois", "/v1/pois/{id}", "/v1/pois/{id}/page", "/v1/search",
                     "/v1/legacy/tours.xml", "/v1/legacy/tours/{id}/pois.xml", "/v1/events"] {
            #expect(paths[path] != nil, "\(path)")
        }
        #expect(OpenAPIDocument.json.contains(OpenAPIDocument.nearPattern.replacingOccurrences(of: "\\", with: "\\\\")))
        for good in ["34.2261,-77.8767", "90,180", "-90.0,-180.000", "0,0", "9.5,99.25"] {
            #expect(throws: Never.self) { try QueryParameters("near=\(good)").coordinate("near") }
        }
        for bad in ["91,0", "0,181", "34.2,", "abc", "34.2261, -77.8767", "1e1,2", "09,1", "90.5,0", "34.,1"] {
            #expect(throws: Problem.self) { try QueryParameters("near=\(bad)").coordinate("near") }
        }
    }
}
