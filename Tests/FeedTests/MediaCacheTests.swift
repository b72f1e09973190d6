import Foundation
import NIOCore
import Shared
import Testing
import TestSupport
@testable import Feed

/// The feed's media cache against Postgres's media store: one read per file while cached, the least recently used
/// given up past the budget, and the copies on disk the pipeline sends kept and removed with their entries.
/// In the media suite, which runs one test at a time: the store-reads metric is the process's, and a CI run
/// failed when this test's reads landed in the middle of `media()`'s count.
extension MediaHTTPTests {
    @Test("files stay within the budget, least recently used out first, their disk copies with them; without a directory none is made")
    func eviction() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("media-cache-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await TestServices.withPostgres(DatabaseSettings(port: TestServices.postgresPort)) { client in
            try await PostgresMediaStore.migrations.run(on: client, logger: TestServices.logger)
            let store = PostgresMediaStore(client: client, logger: TestServices.logger)
            let files = try await (0..<3).asyncMap { index -> MediaLibrary.File in
                let bytes = MediaHTTPTests.blob(70_000, seed: UInt64.random(in: 1...(1 << 40)) + UInt64(index), prefix: [0xFF, 0xD8, 0xFF])
                let file = MediaLibrary.File(sha256: MediaHash.of(bytes), contentType: "image/jpeg", byteCount: bytes.count)
                try await store.put(MediaBlob(sha256: file.sha256, contentType: file.contentType, bytes: bytes))
                return file
            }
            // Room for two (a 70 000-byte buffer is allocated as 128 KiB; over 64 KiB, each gets a copy on disk).
            let cache = MediaCache(store: store, budgetBytes: 280_000, directory: directory)
            for file in files.prefix(2) { _ = try await cache.body(of: file) }
            let first = try #require(cache.cached(files[0].sha256))
            #expect(first.path == "\(directory)/\(files[0].sha256)" && FileManager.default.contents(atPath: first.path!).map(Array.init) == Array(first.body.readableBytesView))
            // files[0] was used last, so files[1] goes when files[2] comes.
            _ = try await cache.body(of: files[2])
            #expect(cache.cached(files[1].sha256) == nil && !FileManager.default.fileExists(atPath: "\(directory)/\(files[1].sha256)"))
            #expect(cache.cached(files[0].sha256) != nil && cache.cached(files[2].sha256)?.path != nil)

            let memoryOnly = MediaCache(store: store, budgetBytes: 280_000, directory: nil)
            #expect(try await memoryOnly.body(of: files[1]).readableBytes == 70_000)
            #expect(memoryOnly.cached(files[1].sha256).map { $0.path == nil } == true)
        }
    }
}

extension Sequence {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
