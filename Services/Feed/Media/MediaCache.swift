import Logging
import Metrics
import NIOCore
import Shared
import Synchronization

/// The bytes of published media files, read from the media store once and kept in memory up to a budget
/// (`FEED_MEDIA_CACHE_BYTES`), the least recently used given up first. Requests for a file being read wait for
/// that one read: a file costs one store read per process while it stays cached, never one per request. At most
/// `maximumReads` files are read at once, so requests for many large files cannot hold more than that many in
/// memory beside the cache; past it a request is told to come back (`Busy`).
final class MediaCache: Sendable {
    private struct State {
        var files: [String: Entry] = [:]
        /// Bytes held by `files`, as allocated (NIO rounds a buffer's capacity up to a power of two).
        var bytes = 0
        var clock: UInt64 = 0
        var reading: [String: Task<ByteBuffer, any Error>] = [:]
    }

    private struct Entry {
        let body: ByteBuffer
        var lastUsed: UInt64
    }

    /// Too many files are being read from the store already.
    struct Busy: Error {}

    let budgetBytes: Int
    let maximumReads: Int
    private let store: any MediaStore
    private let state = Mutex(State())
    private let reads = Counter(label: "itour_feed_media_store_reads_total", help: "Media files read from the media store (cache misses).")

    init(store: any MediaStore, budgetBytes: Int, maximumReads: Int = 4) {
        self.store = store
        self.budgetBytes = budgetBytes
        self.maximumReads = maximumReads
    }

    /// The file's bytes if they are in memory now, without waiting: what the connection pipeline answers with.
    func cachedBody(of sha256: String) -> ByteBuffer? {
        state.withLock { state in
            guard state.files[sha256] != nil else { return nil }
            state.clock += 1
            state.files[sha256]!.lastUsed = state.clock
            return state.files[sha256]!.body
        }
    }

    /// The file's bytes. Throws `Busy`, or `MediaStoreError` when the store lacks a file the catalog published.
    func body(of file: MediaLibrary.File) async throws -> ByteBuffer {
        enum Lookup {
            case cached(ByteBuffer)
            case reading(Task<ByteBuffer, any Error>)
        }
        let lookup: Lookup = try state.withLock { state in
            state.clock += 1
            if let entry = state.files[file.sha256] {
                state.files[file.sha256]!.lastUsed = state.clock
                return .cached(entry.body)
            }
            if let reading = state.reading[file.sha256] { return .reading(reading) }
            guard state.reading.count < maximumReads else { throw Busy() }
            let task = Task { [store, reads] in
                reads.increment()
                guard let blob = try await store.blob(file.sha256) else {
                    throw MediaStoreError(description: "media file \(file.sha256) is published but not in the media store")
                }
                return ByteBuffer(bytes: blob.bytes)
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
            return try result.get()
        }
    }

    /// Ends a read once (each waiter calls it; the first does the work): keeps what it read, within the budget.
    private func finish(_ task: Task<ByteBuffer, any Error>, for sha256: String, keeping body: ByteBuffer?) {
        state.withLock { state in
            guard state.reading[sha256] == task else { return }
            state.reading[sha256] = nil
            guard let body, body.capacity <= budgetBytes else { return }
            state.clock += 1
            state.files[sha256] = Entry(body: body, lastUsed: state.clock)
            state.bytes += body.capacity
            // A scan for the oldest: a library holds thousands of files, not millions, and this runs once per file read.
            while state.bytes > budgetBytes, let oldest = state.files.min(by: { $0.value.lastUsed < $1.value.lastUsed }) {
                state.files[oldest.key] = nil
                state.bytes -= oldest.value.body.capacity
            }
        }
    }
}
