import Foundation
import HTTPTypes
import HummingbirdTesting
import Shared
import Testing
import TestSupport
@testable import Feed

/// `GET /v1/media/{sha256}` against the real broker and Postgres's media store (DESIGN.md, "Media library").
@Suite("Media over HTTP", .serialized, .stopsIfHung)
struct MediaHTTPTests {
    static func blob(_ size: Int, seed: UInt64, prefix: [UInt8]) -> [UInt8] {
        var random = SplitMix64(seed: seed)
        return prefix + (0..<(size - prefix.count)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    }

    static func hash(_ seed: UInt64) -> String { String(format: "%064x", seed &* 0x9E37_79B9_7F4A_7C15) }

    @Test("a published file whole, by ranges and by width; 304, 400, 404 and 416 as the contract says; gone once deleted")
    func media() async throws {
        let original = Self.blob(300_000, seed: 1, prefix: [0xFF, 0xD8, 0xFF]), small = Self.blob(9_000, seed: 2, prefix: Array("RIFF".utf8))
        let medium = Self.blob(30_000, seed: 3, prefix: Array("RIFF".utf8))
        let (originalHash, smallHash, mediumHash) = (Self.hash(UInt64(Date().timeIntervalSince1970 * 1e6)), Self.hash(2_000 + UInt64.random(in: 0...1 << 40)),
                                                     Self.hash(3_000 + UInt64.random(in: 0...1 << 40)))
        try await TestServices.withPostgres(DatabaseSettings(port: TestServices.postgresPort)) { client in
            try await PostgresMediaStore.migrations.run(on: client, logger: TestServices.logger)
            let store = PostgresMediaStore(client: client, logger: TestServices.logger)
            try await store.put(MediaBlob(sha256: originalHash, contentType: "image/jpeg", bytes: original))
            try await store.put(MediaBlob(sha256: smallHash, contentType: "image/webp", bytes: small))
            try await store.put(MediaBlob(sha256: mediumHash, contentType: "image/webp", bytes: medium))
        }
        let item = MediaState(id: UUID(), version: 1, status: .published, content: MediaContent(
            sha256: originalHash, format: .jpeg, byteCount: original.count, fileName: "hall.jpg", title: "Hall", altText: "The hall at dusk",
            width: 2_000, height: 1_000, variants: [.init(width: 640, height: 320, sha256: mediumHash, byteCount: medium.count),
                                                     .init(width: 320, height: 160, sha256: smallHash, byteCount: small.count)]),
            updatedAt: Date())
        try await FeedHTTPTests.withFeed { standIn, client in
            let topic = standIn.configuration.topic(Topic.catalogEvents)
            func send(_ event: MediaEvent) async throws {
                try await standIn.producer.send(KafkaOutgoingMessage(topic: topic, key: event.entityId.uuidString.lowercased(),
                                                                     value: try Envelope(type: event.type, source: "catalog", data: event).encoded()))
            }
            // Store reads counted in this process before (the counter is the process's).
            func storeReads() async throws -> Int {
                let metrics = FeedHTTPTests.text(try await client.execute(uri: "/metrics", method: .get))
                let line = metrics.split(separator: "\n").first { $0.hasPrefix("itour_feed_media_store_reads_total") }
                return line.flatMap { $0.split(separator: " ").last.flatMap { Int($0) } } ?? 0
            }
            let readsBefore = try await storeReads()
            try await send(.changed(item))
            let path = "/v1/media/\(originalHash)"
            #expect(try await TestServices.eventually(timeout: .seconds(20), interval: .milliseconds(100)) {
                try await client.execute(uri: path, method: .get).status == .ok
            })
            let whole = try await client.execute(uri: path, method: .get)
            #expect(Array(whole.body.readableBytesView) == original)
            #expect(whole.headers[.contentType] == "image/jpeg" && whole.headers[.eTag] == "\"\(originalHash)\"")
            #expect(whole.headers[.cacheControl] == "public, max-age=31536000, immutable" && whole.headers[.acceptRanges] == "bytes")

            let range = try await client.execute(uri: path, method: .get, headers: [.range: "bytes=100-199"])
            #expect(range.status == .partialContent && range.headers[.contentRange] == "bytes 100-199/300000")
            #expect(Array(range.body.readableBytesView) == Array(original[100..<200]))
            let tail = try await client.execute(uri: path, method: .get, headers: [.range: "bytes=-50"])
            #expect(tail.status == .partialContent && Array(tail.body.readableBytesView) == Array(original.suffix(50)))
            let open = try await client.execute(uri: path, method: .get, headers: [.range: "bytes=299990-"])
            #expect(open.status == .partialContent && open.body.readableBytes == 10 && open.headers[.contentRange] == "bytes 299990-299999/300000")
            let past = try await client.execute(uri: path, method: .get, headers: [.range: "bytes=300000-"])
            try FeedHTTPTests.expectProblem(past, .rangeNotSatisfiable)
            #expect(past.headers[.contentRange] == "bytes */300000")
            #expect(past.headers[.cacheControl] == "no-store" && past.headers[.eTag] == nil, "a 416 must not be cached as the file")
            #expect(whole.headers[.xContentTypeOptions] == "nosniff")
            let several = try await client.execute(uri: path, method: .get, headers: [.range: "bytes=0-1,5-6"])
            #expect(several.status == .ok && several.body.readableBytes == original.count)
            let stale = try await client.execute(uri: path, method: .get, headers: [.range: "bytes=0-1", .ifRange: "\"other\""])
            #expect(stale.status == .ok && stale.body.readableBytes == original.count)

            let narrow = try await client.execute(uri: path + "?w=300", method: .get)
            #expect(Array(narrow.body.readableBytesView) == small && narrow.headers[.contentType] == "image/webp")
            let middle = try await client.execute(uri: path + "?w=321", method: .get)
            #expect(Array(middle.body.readableBytesView) == medium && middle.headers[.eTag] == "\"\(mediumHash)\"")
            // The original (2000 wide) is a candidate too: the narrowest at least that wide, else the widest.
            let wide = try await client.execute(uri: path + "?w=641", method: .get)
            #expect(Array(wide.body.readableBytesView) == original && wide.headers[.contentType] == "image/jpeg")
            let wider = try await client.execute(uri: path + "?w=5000", method: .get)
            #expect(Array(wider.body.readableBytesView) == original)
            #expect(try await client.execute(uri: "/v1/media/\(smallHash)", method: .get).status == .ok)

            let cached = try await client.execute(uri: path, method: .get, headers: [.ifNoneMatch: "\"\(originalHash)\""])
            #expect(cached.status == .notModified && cached.body.readableBytes == 0)
            try FeedHTTPTests.expectProblem(try await client.execute(uri: "/v1/media/NOT-A-HASH", method: .get), .badRequest)
            try FeedHTTPTests.expectProblem(try await client.execute(uri: path + "?w=0", method: .get), .badRequest)
            try FeedHTTPTests.expectProblem(try await client.execute(uri: "/v1/media/\(String(repeating: "e", count: 64))", method: .get), .notFound)

            // Every answer above came from three store reads, one per file.
            #expect(try await storeReads() - readsBefore == 3)

            try await send(MediaEvent(kind: .deleted, entityId: item.id, version: 2))
            #expect(try await TestServices.eventually(timeout: .seconds(20), interval: .milliseconds(100)) {
                try await client.execute(uri: path, method: .get).status == .notFound
            })
        }
    }

    @Test("Range headers: one range of each form; several, other units and nonsense answered whole; past the end unsatisfiable")
    func ranges() {
        let etag = "\"x\""
        #expect(ByteRange.parse(nil, length: 10, etag: etag) == .whole)
        #expect(ByteRange.parse("bytes=0-0", length: 10, etag: etag) == .range(0..<1))
        #expect(ByteRange.parse("bytes=2-", length: 10, etag: etag) == .range(2..<10))
        #expect(ByteRange.parse("bytes=5-100", length: 10, etag: etag) == .range(5..<10))
        #expect(ByteRange.parse("bytes=-3", length: 10, etag: etag) == .range(7..<10))
        #expect(ByteRange.parse("bytes=-30", length: 10, etag: etag) == .range(0..<10))
        #expect(ByteRange.parse("bytes=10-", length: 10, etag: etag) == .unsatisfiable)
        #expect(ByteRange.parse("bytes=-0", length: 10, etag: etag) == .unsatisfiable)
        #expect(ByteRange.parse("bytes=5-2", length: 10, etag: etag) == .whole)
        #expect(ByteRange.parse("bytes=0-1,3-4", length: 10, etag: etag) == .whole)
        #expect(ByteRange.parse("items=0-1", length: 10, etag: etag) == .whole)
        #expect(ByteRange.parse("bytes=a-b", length: 10, etag: etag) == .whole)
        #expect(ByteRange.parse("bytes=99999999999999999999-", length: 10, etag: etag) == .whole)
        #expect(ByteRange.parse("bytes=--5", length: 10, etag: etag) == .whole)
        #expect(ByteRange.parse("bytes=+1-2", length: 10, etag: etag) == .whole)
        #expect(ByteRange.parse("bytes=0-1", length: 10, ifRange: etag, etag: etag) == .range(0..<2))
        #expect(ByteRange.parse("bytes=0-1", length: 10, ifRange: "\"y\"", etag: etag) == .whole)
    }
}
