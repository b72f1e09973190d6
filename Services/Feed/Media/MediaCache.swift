import Foundation
import Logging
import Metrics
import NIOCore
import NIOPosix
import Shared
import Synchronization

/// The bytes of published media files, read from the media store once and kept in memory up to a budget
/// (`FEED_MEDIA_CACHE_BYTES`), the least recently used given up first. Requests for a file being read wait for
/// that one read: a file costs one store read per process while it stays cached, never one per request. At most
/// `maximumReads` files are read at once, so requests for many large files cannot hold more than that many in
/// memory beside the cache; past it a request is told to come back (`Busy`).
///
/// A cached file also gets a copy on disk, in `directory` (named by its hash, so feeds on one host share it
/// safely), while it stays cached: the connection pipeline sends a whole file from there with `sendfile`, one copy
/// fewer than writing the bytes from memory. Without the copy (no directory, a full disk, a file another feed
/// evicted) the bytes in memory are sent.
final class MediaCache: Sendable {
    private struct State {
        var files: [String: Entry] = [:]
        /// Bytes held by `files`, as allocated (NIO rounds a buffer's capacity up to a power of two).
        var bytes = 0
        var clock: UInt64 = 0
        var reading: [String: Task<Fetched, any Error>] = [:]
    }

    private struct Entry {
        let body: ByteBuffer
        let path: String?
        var lastUsed: UInt64
    }

    private struct Fetched: Sendable {
        let body: ByteBuffer
        /// Its copy on disk, if one was written.
        let path: String?
    }

    /// A file in memory, and where its copy on disk is, if any.
    struct Cached {
        let body: ByteBuffer
        let path: String?
    }

    /// Too many files are being read from the store already.
    struct Busy: Error {}

    let budgetBytes: Int
    let maximumReads: Int
    private let store: any MediaStore
    private let directory: String?
    private let state = Mutex(State())
    private let reads = Counter(label: "itour_feed_media_store_reads_total", help: "Media files read from the media store (cache misses).")

    static let defaultDirectory = NSTemporaryDirectory() + "itour-feed-media"
    /// Files this large get a copy on disk; below it the pipeline writes the bytes from memory in the head's write
    /// (opening a file and corking cost more than the copy saves), so a copy would be written for nothing.
    static let sendfileBytes = 64 * 1_024

    /// Files read from the store at once (and so the feed's Postgres connections at most).
    static let defaultMaximumReads = 4

    init(store: any MediaStore, budgetBytes: Int, maximumReads: Int = MediaCache.defaultMaximumReads, directory: String? = MediaCache.defaultDirectory) {
        self.store = store
        self.budgetBytes = budgetBytes
        self.maximumReads = maximumReads
        self.directory = directory.flatMap { path in
            (try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)).map { path }
        }
    }

    /// Writes the file's copy on a thread of NIO's blocking pool (a large file must not hold an event loop), atomically
    /// (a reader never opens half a file); nil when it cannot.
    private static func writeCopy(_ bytes: [UInt8], sha256: String, in directory: String?) async -> String? {
        guard let directory else { return nil }
        let path = "\(directory)/\(sha256)"
        return try? await NIOThreadPool.singleton.runIfActive {
            try Data(bytes).write(to: URL(fileURLWithPath: path), options: .atomic)
            return path
        }
    }

    /// The file in memory (and its copy on disk) now, without waiting: what the connection pipeline answers with.
    func cached(_ sha256: String) -> Cached? {
        state.withLock { state in
            guard let entry = state.files[sha256] else { return nil }
            state.clock += 1
            state.files[sha256]!.lastUsed = state.clock
            return Cached(body: entry.body, path: entry.path)
        }
    }

    /// The file's bytes. Throws `Busy`, or `MediaStoreError` when the store lacks a file the catalog published.
    func body(of file: MediaLibrary.File) async throws -> ByteBuffer {
        enum Lookup {
            case cached(ByteBuffer)
            case reading(Task<Fetched, any Error>)
        }
        let lookup: Lookup = try state.withLock { state in
            state.clock += 1
            if let entry = state.files[file.sha256] {
                state.files[file.sha256]!.lastUsed = state.clock
                return .cached(entry.body)
            }
            if let reading = state.reading[file.sha256] { return .reading(reading) }
            guard state.reading.count < maximumReads else { throw Busy() }
            let task = Task { [store, reads, directory] in
                reads.increment()
                guard let blob = try await store.blob(file.sha256) else {
                    throw MediaStoreError(description: "media file \(file.sha256) is published but not in the media store")
                }
                let sentFromDisk = blob.bytes.count >= Self.sendfileBytes && blob.bytes.count <= budgetBytes
                return Fetched(body: ByteBuffer(bytes: blob.bytes),
                               path: sentFromDisk ? await Self.writeCopy(blob.bytes, sha256: file.sha256, in: directory) : nil)
            }
            state.reading[file.sha256] = task
            return .reading(task)
        }
        switch lookup {
        case .cached(let body):
            return body
        case .reading(let task):
            let result = await task.result
            finish(task, for: file.sha256, keeping: try? result.get())
            return try result.get().body
        }
    }

    /// Ends a read once (each waiter calls it; the first does the work): keeps what it read, within the budget.
    private func finish(_ task: Task<Fetched, any Error>, for sha256: String, keeping fetched: Fetched?) {
        let evicted: [String] = state.withLock { state in
            guard state.reading[sha256] == task else { return [] }
            state.reading[sha256] = nil
            guard let fetched else { return [] }
            guard fetched.body.capacity <= budgetBytes else { return fetched.path.map { [$0] } ?? [] }
            state.clock += 1
            state.files[sha256] = Entry(body: fetched.body, path: fetched.path, lastUsed: state.clock)
            state.bytes += fetched.body.capacity
            var evicted: [String] = []
            // A scan for the oldest: a library holds thousands of files, not millions, and this runs once per file read.
            while state.bytes > budgetBytes, let oldest = state.files.min(by: { $0.value.lastUsed < $1.value.lastUsed }) {
                state.files[oldest.key] = nil
                state.bytes -= oldest.value.body.capacity
                if let path = oldest.value.path { evicted.append(path) }
            }
            return evicted
        }
        // A pipeline that opened one already keeps reading it; one that opens it later sends the bytes from memory.
        for path in evicted { unlink(path) }
    }
}
