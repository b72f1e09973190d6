import Foundation
import HTTPTypes
import HummingbirdTesting
import Shared
import Testing
import TestSupport
@testable import Feed

/// A stop's media as phones get it (alt texts, narration, captions, transcripts, trigger radius) and a tour's
/// bundle, against the real broker and Postgres's media store (DESIGN.md, "Accessibility and stops", "Offline tours
/// and changes").
/// In the media suite, which runs one test at a time: its store-reads count must not see this test's reads.
extension MediaHTTPTests {
    @Test("a stop's alt texts, narration with captions and transcript, trigger radius; the page plays it with a track; the bundle equals the single reads and its zip holds the files")
    func bundle() async throws {
        let seed = UInt64.random(in: 1...(1 << 40))
        // The picture is over 64 KiB, so the pipeline sends it by sendfile; the audio is under, sent from memory.
        let picture = MediaHTTPTests.blob(100_000, seed: seed, prefix: [0xFF, 0xD8, 0xFF]), audio = MediaHTTPTests.blob(30_000, seed: seed + 1, prefix: Array("ID3".utf8))
        let captions = Array("WEBVTT\n\n00:00.000 --> 00:02.500\nWelcome to the hall.\n".utf8)
        let (pictureHash, audioHash, captionsHash) = (MediaHash.of(picture), MediaHash.of(audio), MediaHash.of(captions))
        // Its captions in Spanish: a file of their own (DESIGN.md "Languages").
        let spanishCaptions = Array("WEBVTT\n\n00:00.000 --> 00:02.500\nBienvenidos a la sala.\n".utf8)
        let spanishCaptionsHash = MediaHash.of(spanishCaptions)
        // The tour's cover, a library picture no stop uses: first in the bundle's manifest and in its zip.
        let cover = MediaHTTPTests.blob(5_000, seed: seed + 2, prefix: [0xFF, 0xD8, 0xFF])
        let coverHash = MediaHash.of(cover)
        try await TestServices.withPostgres(DatabaseSettings(port: TestServices.postgresPort)) { client in
            try await PostgresMediaStore.migrations.run(on: client, logger: TestServices.logger)
            let store = PostgresMediaStore(client: client, logger: TestServices.logger)
            try await store.put(MediaBlob(sha256: pictureHash, contentType: "image/jpeg", bytes: picture))
            try await store.put(MediaBlob(sha256: audioHash, contentType: "audio/mpeg", bytes: audio))
            try await store.put(MediaBlob(sha256: captionsHash, contentType: WebVTT.contentType, bytes: captions))
            try await store.put(MediaBlob(sha256: spanishCaptionsHash, contentType: WebVTT.contentType, bytes: spanishCaptions))
            try await store.put(MediaBlob(sha256: coverHash, contentType: "image/jpeg", bytes: cover))
        }
        let coverItem = MediaState(id: UUID(), version: 1, status: .published, content: MediaContent(
            sha256: coverHash, format: .jpeg, byteCount: cover.count, fileName: "quad.jpg", title: "Quad", altText: "The quad in spring",
            width: 400, height: 300), updatedAt: Date())
        let pictureItem = MediaState(id: UUID(), version: 1, status: .published, content: MediaContent(
            sha256: pictureHash, format: .jpeg, byteCount: picture.count, fileName: "hall.jpg", title: "Hall", altText: "Brick hall with white columns",
            width: 800, height: 600), updatedAt: Date())
        let audioItem = MediaState(id: UUID(), version: 1, status: .published, content: MediaContent(
            sha256: audioHash, format: .mp3, byteCount: audio.count, fileName: "welcome.mp3", title: "Welcome", captions: captionsHash,
            captionsByteCount: captions.count, transcript: "Welcome to the hall.\n\nIt was built in 1961.",
            translations: ["es": ["captions": spanishCaptionsHash, "captionsByteCount": String(spanishCaptions.count)]]), updatedAt: Date())
        let base = FeedSite.defaultPublicURL + "/v1/media/"
        var hall = Fixture.poi(name: "Hall", latitude: 34.2240, longitude: -77.8700, pictures: [base + pictureHash, "https://example.edu/gate.jpg"])
        hall.content.pictureAlts = ["", "The iron gate"]
        hall.content.narration = audioHash
        hall.content.triggerRadiusMeters = 45
        let stop = hall
        let other = Fixture.poi(name: "Gate", latitude: 34.2241, longitude: -77.8701)
        var covered = Fixture.tour(name: "Media tour", stops: [stop.id, other.id])
        covered.content.coverImage = base + coverHash + "?w=400"
        covered.content.coverImageAlt = "The quad in spring"
        let tour = covered

        try await FeedHTTPTests.withFeed(testing: .live, configure: { $0.site.languages = SiteLanguages(site: "en", offered: ["en", "es"]) }) { standIn, client in
            let topic = standIn.configuration.topic(Topic.catalogEvents)
            func send(_ event: MediaEvent) async throws {
                try await standIn.producer.send(KafkaOutgoingMessage(topic: topic, key: event.entityId.uuidString.lowercased(),
                                                                     value: try Envelope(type: event.type, source: "catalog", data: event).encoded()))
            }
            try await send(.changed(pictureItem))
            try await send(.changed(audioItem))
            try await send(.changed(coverItem))
            for event: CatalogEvent in [.changed(stop), .changed(other), .changed(tour)] { try await standIn.publish(event) }
            let poiPath = "/v1/pois/\(stop.id.uuidString)"
            #expect(try await TestServices.eventually(timeout: .seconds(20), interval: .milliseconds(100)) {
                let response = try await client.execute(uri: poiPath, method: .get)
                return response.status == .ok && FeedHTTPTests.text(response).contains(captionsHash)
            })
            // The cover's item may arrive on another partition, after the tour.
            #expect(try await TestServices.eventually(timeout: .seconds(20), interval: .milliseconds(100)) {
                FeedHTTPTests.text(try await client.execute(uri: "/v1/tours/\(tour.id.uuidString)/bundle", method: .get)).contains(coverHash)
            })

            let poi = try FeedHTTPTests.json(try await client.execute(uri: poiPath, method: .get))
            #expect(poi["triggerRadiusMeters"] as? Int == 45)
            #expect(poi["pictureAlts"] as? [String] == ["Brick hall with white columns", "The iron gate"])
            let narration = try #require(poi["narration"] as? [String: Any])
            #expect(narration["url"] as? String == base + audioHash && narration["type"] as? String == "audio/mpeg")
            #expect(narration["captionsUrl"] as? String == base + captionsHash)
            #expect(narration["transcript"] as? String == "Welcome to the hall.\n\nIt was built in 1961.")
            let media = try #require(poi["media"] as? [[String: Any]])
            #expect(media.compactMap { $0["sha256"] as? String } == [pictureHash, audioHash])
            #expect(media.first?["altText"] as? String == "Brick hall with white columns" && media.first?["width"] as? Int == 800)
            let gate = try FeedHTTPTests.json(try await client.execute(uri: "/v1/pois/\(other.id.uuidString)", method: .get))
            #expect(gate["triggerRadiusMeters"] as? Int == 30 && (gate["media"] as? [Any])?.isEmpty == true && gate["narration"] is NSNull)

            let page = FeedHTTPTests.text(try await client.execute(uri: poiPath + "/page", method: .get))
            #expect(page.contains("alt=\"Brick hall with white columns\"") && page.contains("alt=\"The iron gate\""))
            // Library files are linked relatively (issue 47): the page works from the feed and from an unpacked zip.
            let relative = PoiPage.relativeMediaBase
            #expect(page.contains("<audio controls preload=\"none\" crossorigin=\"anonymous\" src=\"\(relative + audioHash)\"><track kind=\"captions\" src=\"\(relative + captionsHash)\" srclang=\"en\" label=\"English\" default></audio>"))
            #expect(page.contains("<img src=\"\(relative + pictureHash)\"") && page.contains("<img src=\"https://example.edu/gate.jpg\""))
            #expect(!page.contains(FeedSite.defaultPublicURL), "no link in the page names the feed's address")
            #expect(page.contains("<summary>Transcript</summary><p>Welcome to the hall.</p><p>It was built in 1961.</p>"))
            let vtt = try await client.execute(uri: "/v1/media/\(captionsHash)", method: .get)
            #expect(vtt.status == .ok && vtt.headers[.contentType] == WebVTT.contentType && Array(vtt.body.readableBytesView) == captions)
            #expect(vtt.headers[.accessControlAllowOrigin] == "*", "a page opened from another origin loads the track")

            // In Spanish: its own captions file, a track in Spanish, and the page's words in Spanish.
            let spanishPoi = try FeedHTTPTests.json(try await client.execute(uri: poiPath + "?lang=es", method: .get))
            #expect((spanishPoi["narration"] as? [String: Any])?["captionsUrl"] as? String == base + spanishCaptionsHash)
            let spanishPage = FeedHTTPTests.text(try await client.execute(uri: poiPath + "/page?lang=es", method: .get))
            #expect(spanishPage.contains("<track kind=\"captions\" src=\"\(relative + spanishCaptionsHash)\" srclang=\"es\" label=\"español\" default>"),
                    "\(spanishPage)")
            #expect(spanishPage.contains("<figcaption>Narración</figcaption>") && spanishPage.contains("<summary>Transcripción</summary>"))
            let spanishVTT = try await client.execute(uri: "/v1/media/\(spanishCaptionsHash)", method: .get)
            #expect(spanishVTT.status == .ok && Array(spanishVTT.body.readableBytesView) == spanishCaptions)

            // A file in memory asked for whole is answered in the connection pipeline, as the router answers it.
            let port = try #require(client.port)
            let pictureGet = "GET /v1/media/\(pictureHash) HTTP/1.1\r\nHost: feed\r\n"
            #expect(try await client.execute(uri: "/v1/media/\(pictureHash)", method: .get).status == .ok)  // now in memory
            let inPipelineBefore = RouteTableTests.storedAnswers(try await client.execute(uri: "/metrics", method: .get))
            for request in [pictureGet, pictureGet + "If-None-Match: \"\(pictureHash)\"\r\n", pictureGet + "Range: bytes=0-9\r\n"] {
                let answers = try await RouteTableTests.bothWays(port: port, request)
                #expect(RouteTableTests.comparable(answers.pipeline) == RouteTableTests.comparable(answers.router), "\(request)")
            }
            let whole = try await RouteTableTests.bothWays(port: port, pictureGet)
            #expect(whole.pipeline.status == "HTTP/1.1 200 OK" && Array(whole.pipeline.body) == picture)
            #expect(whole.pipeline.headers["etag"] == "\"\(pictureHash)\"" && whole.pipeline.headers["content-type"] == "image/jpeg")
            // Two whole answers and a 304 came from the pipeline (at least: the counter is the process's, and live tests
            // of other suites may add to it meanwhile); the range went to the router.
            #expect(RouteTableTests.storedAnswers(try await client.execute(uri: "/metrics", method: .get)) - inPipelineBefore >= 3)

            let tourFeed = try FeedHTTPTests.json(try await client.execute(uri: "/v1/tours/\(tour.id.uuidString)", method: .get))
            #expect((tourFeed["stops"] as? [[String: Any]])?.compactMap { $0["triggerRadiusMeters"] as? Int } == [45, 30])

            // The bundle holds the single reads' bodies byte for byte.
            let bundlePath = "/v1/tours/\(tour.id.uuidString)/bundle"
            let bundleResponse = try await client.execute(uri: bundlePath, method: .get)
            #expect(bundleResponse.status == .ok && bundleResponse.headers[.contentType] == "application/json")
            let bundle = try FeedHTTPTests.json(bundleResponse)
            func same(_ value: Any?, _ path: String) async throws -> Bool {
                let single = try JSONSerialization.jsonObject(with: Data(try await client.execute(uri: path, method: .get).body.readableBytesView))
                let inBundle = try #require(value)
                return NSDictionary(dictionary: ["v": single]).isEqual(to: ["v": inBundle])
            }
            #expect(try await same(bundle["tour"], "/v1/tours/\(tour.id.uuidString)"))
            let pois = try #require(bundle["pois"] as? [Any])
            #expect(pois.count == 2)
            #expect(try await same(pois[0], poiPath))
            #expect(try await same(pois[1], "/v1/pois/\(other.id.uuidString)"))
            let pages = try #require(bundle["pages"] as? [[String: Any]])
            #expect(pages.map { $0["poiId"] as? String } == [stop.id.uuidString, other.id.uuidString])
            #expect(pages.first?["html"] as? String == page)
            let manifest = try #require(bundle["media"] as? [[String: Any]])
            #expect(manifest.compactMap { $0["sha256"] as? String } == [coverHash, pictureHash, audioHash, captionsHash, spanishCaptionsHash])
            #expect(manifest.compactMap { $0["byteCount"] as? Int } == [cover.count, picture.count, audio.count, captions.count, spanishCaptions.count])
            #expect(manifest.first?["url"] as? String == base + coverHash, "the file itself, without the cover's ?w=")
            let etag = try #require(bundleResponse.headers[.eTag])
            #expect(try await client.execute(uri: bundlePath, method: .get, headers: [.ifNoneMatch: etag]).status == .notModified)

            let zip = try await client.execute(uri: bundlePath + "?media=1", method: .get)
            #expect(zip.status == .ok && zip.headers[.contentType] == "application/zip")
            #expect(zip.headers[.contentDisposition]?.contains("attachment") == true)
            let entries = try Self.unzip(Array(zip.body.readableBytesView))
            #expect(entries["bundle.json"] == Array(bundleResponse.body.readableBytesView))
            #expect(entries["media/\(pictureHash)"] == picture && entries["media/\(audioHash)"] == audio && entries["media/\(captionsHash)"] == captions)
            #expect(entries["media/\(coverHash)"] == cover && entries["media/\(spanishCaptionsHash)"] == spanishCaptions)
            // Each stop's page, whose relative links reach the zip's files from where it lies.
            let pageInZip = try #require(entries["pois/\(stop.id.uuidString)/page.html"])
            #expect(pageInZip == Array(page.utf8) && entries["pois/\(other.id.uuidString)/page.html"] != nil)
            let linked = page.components(separatedBy: "src=\"").dropFirst().compactMap { $0.split(separator: "\"").first }
                .filter { $0.hasPrefix(relative) }
            #expect(linked.count == 3)
            for link in linked {
                let resolved = URL(string: String(link), relativeTo: URL(string: "file:///unpacked/pois/\(stop.id.uuidString)/page.html"))!.path
                #expect(entries[String(resolved.dropFirst("/unpacked/".count))] != nil, "\(link) resolves to \(resolved)")
            }
            let zipTag = try #require(zip.headers[.eTag])
            #expect(try await client.execute(uri: bundlePath + "?media=1", method: .get, headers: [.ifNoneMatch: zipTag]).status == .notModified)
            // A download that broke off resumes where it stopped (issue 47): the same bundle makes the same zip.
            let zipBytes = Array(zip.body.readableBytesView)
            #expect(zip.headers[.acceptRanges] == "bytes")
            let head = try await client.execute(uri: bundlePath + "?media=1", method: .get, headers: [.range: "bytes=0-99"])
            #expect(head.status == .partialContent && head.headers[.contentRange] == "bytes 0-99/\(zipBytes.count)")
            let rest = try await client.execute(uri: bundlePath + "?media=1", method: .get, headers: [.range: "bytes=100-", .ifRange: zipTag])
            #expect(rest.status == .partialContent && rest.headers[.contentRange] == "bytes 100-\(zipBytes.count - 1)/\(zipBytes.count)")
            #expect(Array(head.body.readableBytesView) + Array(rest.body.readableBytesView) == zipBytes)
            let stale = try await client.execute(uri: bundlePath + "?media=1", method: .get, headers: [.range: "bytes=100-", .ifRange: "\"other\""])
            #expect(stale.status == .ok && Array(stale.body.readableBytesView) == zipBytes, "a changed bundle is sent whole")
            try FeedHTTPTests.expectProblem(try await client.execute(uri: bundlePath + "?media=1", method: .get,
                                                                     headers: [.range: "bytes=\(zipBytes.count)-"]), .rangeNotSatisfiable)
            try FeedHTTPTests.expectProblem(try await client.execute(uri: bundlePath + "?media=yes", method: .get), .badRequest)
            try FeedHTTPTests.expectProblem(try await client.execute(uri: "/v1/tours/\(UUID().uuidString)/bundle", method: .get), .notFound)

            // An edit of the library's alt text reaches the stop that uses it.
            var renamed = pictureItem
            renamed.version = 2
            renamed.content.altText = "Brick hall at dusk"
            try await send(.changed(renamed))
            #expect(try await TestServices.eventually(timeout: .seconds(20), interval: .milliseconds(100)) {
                FeedHTTPTests.text(try await client.execute(uri: poiPath, method: .get)).contains("Brick hall at dusk")
            })
        }
    }

    /// The archive's entries by name, read by Python's zipfile (an independent reader).
    static func unzip(_ archive: [UInt8]) throws -> [String: [UInt8]] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bundle-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("tour.zip")
        try Data(archive).write(to: file)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); assert z.testzip() is None; z.extractall(sys.argv[2])",
                             file.path, directory.appendingPathComponent("out").path]
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0)
        let out = directory.appendingPathComponent("out")
        var entries: [String: [UInt8]] = [:]
        for name in try FileManager.default.subpathsOfDirectory(atPath: out.path) {
            var isDirectory: ObjCBool = false
            let path = out.appendingPathComponent(name).path
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
                entries[name] = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
            }
        }
        return entries
    }
}
