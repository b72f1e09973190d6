import Foundation
import PostgresNIO
import Shared
import Testing
import TestSupport

@Suite("Media library: formats and the store", .stopsIfHung)
struct MediaTests {
    /// The first bytes of each format as encoders write them.
    static let samples: [(MediaFormat, [UInt8])] = [
        (.jpeg, [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8)),
        (.png, [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D] + Array("IHDR".utf8)),
        (.webp, Array("RIFF".utf8) + [0x24, 0x00, 0x00, 0x00] + Array("WEBPVP8 ".utf8)),
        (.mp3, Array("ID3".utf8) + [0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]),
        (.mp3, [0xFF, 0xFB, 0x90, 0x64, 0x00]),
        (.aac, [0xFF, 0xF1, 0x50, 0x80, 0x02, 0x1F, 0xFC]),
        (.m4a, [0x00, 0x00, 0x00, 0x20] + Array("ftypM4A ".utf8) + [0, 0, 0, 0]),
        (.opus, Array("OggS".utf8) + [UInt8](repeating: 0, count: 24) + Array("OpusHead".utf8) + [1, 2]),
        (.mp4, [0x00, 0x00, 0x00, 0x18] + Array("ftypisom".utf8) + [0, 0, 2, 0]),
    ]

    @Test("formats are told by their bytes; other files are named for what they look like")
    func sniffing() {
        for (format, bytes) in Self.samples {
            #expect(MediaFormat.sniff(bytes) == format, "\(format)")
            #expect(MediaFormat.sniff(bytes + [UInt8](repeating: 7, count: 100)) == format, "\(format) with a body")
        }
        #expect(MediaFormat.sniff(Array("hello, this is text\n".utf8)) == nil)
        #expect(MediaFormat.describe(unrecognized: Array("hello, this is text\n".utf8)) == "text")
        #expect(MediaFormat.sniff(Array("%PDF-1.7".utf8)) == nil)
        #expect(MediaFormat.describe(unrecognized: Array("%PDF-1.7".utf8)) == "a PDF document")
        #expect(MediaFormat.describe(unrecognized: Array("GIF89a".utf8)) == "a GIF image")
        let heic = [0x00, 0x00, 0x00, 0x18] + Array("ftypheic".utf8) + [0, 0, 0, 0], movie = [0x00, 0x00, 0x00, 0x14] + Array("ftypqt  ".utf8)
        #expect(MediaFormat.sniff(heic) == nil && MediaFormat.describe(unrecognized: heic).hasPrefix("a HEIF or AVIF image"))
        #expect(MediaFormat.sniff(movie) == nil && MediaFormat.describe(unrecognized: movie).hasPrefix("a QuickTime movie"))
        #expect(MediaFormat.m4a.contentType == "audio/mp4" && MediaFormat.aac.contentType == "audio/aac")
        #expect(MediaFormat.sniff([]) == nil && MediaFormat.sniff([0xFF]) == nil && MediaFormat.sniff(Array("OggS".utf8)) == nil)
        #expect(MediaFormat.kind(announcedBy: "Hall.JPG") == .image && MediaFormat.kind(announcedBy: "tour.m4a") == .audio)
        #expect(MediaFormat.kind(announcedBy: "clip.mp4") == .video && MediaFormat.kind(announcedBy: "notes.txt") == nil)
        #expect(MediaFormat.kind(announcedBy: "no-extension") == nil)
        #expect(MediaHash.isValid(String(repeating: "a0", count: 32)) && !MediaHash.isValid(String(repeating: "A0", count: 32)))
        #expect(!MediaHash.isValid("abc") && !MediaHash.isValid(String(repeating: "g", count: 64)))
    }

    @Test("a URL names a library file by its path's last part after /v1/media/, any host and query; anything else names none")
    func urlsNamingLibraryFiles() {
        let hash = String(repeating: "0f", count: 32)
        #expect(MediaHash.named(inURL: "https://feed.example.org/v1/media/\(hash)") == hash)
        #expect(MediaHash.named(inURL: "http://other:8080/prefix/v1/media/\(hash)?size=small&x=/v1/media/") == hash)
        #expect(MediaHash.named(inURL: "/v1/media/\(hash)") == nil, "no room for a host: 74 bytes are not enough")
        #expect(MediaHash.named(inURL: "x/v1/media/\(hash)") == hash)
        #expect(MediaHash.named(inURL: "https://a/v1/media/\(hash.uppercased())") == nil)
        #expect(MediaHash.named(inURL: "https://a/v1/medias/\(hash)") == nil && MediaHash.named(inURL: "https://a/v1/media/x\(hash)") == nil)
        #expect(MediaHash.named(inURL: "https://a/v1/media/\(hash.dropLast())") == nil)
        #expect(MediaHash.named(inURL: "https://é.example/v1/media/\(hash)") == hash)
        #expect(MediaHash.named(inURL: "https://a/v1/media/\(hash.dropLast())é") == nil)
        #expect(MediaHash.named(inURL: "https://media.example.org/pictures/0.jpg") == nil && MediaHash.named(inURL: "") == nil)
        let other = String(repeating: "a1", count: 32)
        let poi = PoiContent(name: "P", latitude: 0, longitude: 0,
                             pictures: ["https://x/v1/media/\(hash)", "https://x/p.jpg", "https://y/v1/media/\(other)?v=2"],
                             links: [MediaLink(name: "again", type: .page, url: "https://z/v1/media/\(hash)")], narration: String(repeating: "b2", count: 32))
        #expect(MediaHash.named(in: poi) == [hash, other, String(repeating: "b2", count: 32)])
    }

    @Test("the Postgres store keeps a blob in chunks and gives it back whole; storing it again changes nothing; an unknown hash is nil")
    func store() async throws {
        let database = try await TestServices.freshDatabase()
        try await TestServices.withPostgres(database) { client in
            try await PostgresMediaStore.migrations.run(on: client, logger: TestServices.logger)
            let store = PostgresMediaStore(client: client, logger: TestServices.logger)
            var random = SplitMix64(seed: 5)
            for size in [0, 1, PostgresMediaStore.chunkBytes - 1, PostgresMediaStore.chunkBytes, 2 * PostgresMediaStore.chunkBytes + 17] {
                let bytes = (0..<size).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                let sha = String(format: "%064x", size)
                try await store.put(MediaBlob(sha256: sha, contentType: "image/png", bytes: bytes))
                try await store.put(MediaBlob(sha256: sha, contentType: "image/png", bytes: bytes))
                let read = try #require(try await store.blob(sha))
                #expect(read.bytes == bytes && read.contentType == "image/png", "size \(size)")
                let rows = try await client.query("SELECT count(*) FROM media.chunks WHERE sha256 = \(sha)", logger: TestServices.logger)
                var chunks = -1
                for try await count in rows.decode(Int.self) { chunks = count }
                #expect(chunks == (size + PostgresMediaStore.chunkBytes - 1) / PostgresMediaStore.chunkBytes, "size \(size)")
            }
            #expect(try await store.blob(String(repeating: "f", count: 64)) == nil)
        }
    }

    @Test("a translation's narration is one of the POI's files, after its own (DESIGN.md \"Languages\")")
    func translatedNarration() {
        let own = String(repeating: "a1", count: 32), spanish = String(repeating: "b2", count: 32)
        let content = PoiContent(name: "Hall", latitude: 0, longitude: 0, narration: own, translations: ["es": ["narration": spanish, "name": "Sala"]])
        #expect(MediaHash.named(in: content) == [own, spanish])
        #expect(MediaHash.narrations(of: content).map(\.field) == ["narration", "translations.es.narration"])
    }
}
