import Foundation
import Logging
import ServiceLifecycle
import Shared
import Synchronization

/// The POI chunks of the snapshots catalog sent, by bucket (of a hash of the id), each with its bucket's fingerprint: a
/// snapshot reads and encodes again only the buckets whose POIs changed since. A city's POIs are most of a
/// snapshot's work, and most snapshots follow few changes. It keeps one snapshot's POI messages in memory
/// (their JSON); a chunk keeps the `snapshotId` of the snapshot that encoded it, or none when it was encoded
/// ahead of any (`SnapshotCacheWarmer`).
final class SnapshotCache: Sendable {
    private struct Bucket: Sendable {
        let fingerprint: String
        let payloads: [[UInt8]]
        let count: Int
    }

    private let buckets = Mutex<[Int: Bucket]>([:])
    private let changes = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    private let lastChange = Mutex(ContinuousClock.now)
    /// Commands being handled: an import's command runs for seconds, and encoding a city meanwhile competes with it.
    private let handling = Atomic<Int>(0)

    init() {
        // Warm once at start.
        changes.continuation.yield()
    }

    /// A command changed content: the warmer brings the cache up to date once commands pause.
    func noteChange() {
        lastChange.withLock { $0 = .now }
        changes.continuation.yield()
    }

    /// When a command last changed content or finished.
    var lastChangeAt: ContinuousClock.Instant { lastChange.withLock { $0 } }

    /// Whether a command is being handled now.
    var isHandlingCommand: Bool { handling.load(ordering: .relaxed) > 0 }

    /// Runs `body` (a command) as activity: the warmer waits until no command runs and none ended for its quiet period.
    func handlingCommand<T>(_ body: () async throws -> T) async rethrows -> T {
        handling.add(1, ordering: .relaxed)
        defer {
            lastChange.withLock { $0 = .now }
            handling.subtract(1, ordering: .relaxed)
        }
        return try await body()
    }

    /// Signals of `noteChange`, for the warmer.
    var changeSignals: AsyncStream<Void> { changes.stream }

    /// Every live POI's chunk messages, bucket after bucket, and how many POIs they hold. `encode` makes the
    /// messages of a bucket's POIs (in id order); buckets are encoded on all cores.
    func poiPayloads(in transaction: any CatalogTransaction,
                     encode: @escaping @Sendable ([PoiState]) -> [[UInt8]]) async throws -> (payloads: [[UInt8]], count: Int, encodedBuckets: Int) {
        let fine = try await transaction.livePoiBuckets()
        // Buckets of a few hundred POIs: all 256 in a city; 16 or one in a smaller catalog, whose chunks would
        // otherwise hold a POI or two each.
        let total = fine.values.reduce(0) { $0 + $1.count }
        let shift = total < 4_096 ? 8 : total < 65_536 ? 4 : 0
        let fineByBucket = Dictionary(grouping: fine.keys.sorted()) { $0 >> shift }
        let fingerprints = fineByBucket.mapValues { keys in "\(shift)/" + keys.map { "\($0)=\(fine[$0]!.fingerprint)" }.joined(separator: ",") }
        let cached = buckets.withLock { $0 }
        var current = cached.filter { fingerprints[$0.key] == $0.value.fingerprint }
        let stale = fingerprints.keys.filter { current[$0] == nil }.sorted()
        if !stale.isEmpty {
            let byFineBucket = try await transaction.livePois(inBuckets: stale.flatMap { fineByBucket[$0]! })
            let encoded = await stale.concurrentMapOffThePool(minimumCount: 2, elementsPerTask: 1) { bucket in
                let pois = fineByBucket[bucket]!.flatMap { byFineBucket[$0] ?? [] }.sorted { $0.id.uuidString < $1.id.uuidString }
                return (bucket, pois.count, encode(pois))
            }
            for (bucket, count, payloads) in encoded {
                current[bucket] = Bucket(fingerprint: fingerprints[bucket]!, payloads: payloads, count: count)
            }
        }
        buckets.withLock { $0 = current }
        let ordered = current.keys.sorted().map { current[$0]! }
        return (ordered.flatMap(\.payloads), ordered.reduce(0) { $0 + $1.count }, stale.count)
    }
}

/// Encodes the chunks of changed POI buckets shortly after commands stop changing content (and once at start),
/// so that a new reader's snapshot finds them ready instead of encoding a city while it waits.
final class SnapshotCacheWarmer: Service, Sendable {
    private let handler: CatalogCommandHandler
    private let logger: Logger
    /// How long content must stay unchanged before the cache is brought up to date (an import is many commands).
    private let quietPeriod: Duration

    /// The longest it waits for a pause before encoding anyway.
    private let longestWait: Duration

    init(handler: CatalogCommandHandler, logger: Logger, quietPeriod: Duration = .seconds(1), longestWait: Duration = .seconds(60)) {
        self.handler = handler
        self.logger = logger
        self.quietPeriod = quietPeriod
        self.longestWait = longestWait
    }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            for await _ in self.handler.snapshotCache.changeSignals {
                do {
                    // Until no command ran for the quiet period, or at most `longestWait`: commands that keep coming
                    // (an admin reading histories) must not keep the chunks stale for good.
                    let cache = self.handler.snapshotCache
                    let giveUpAt = ContinuousClock.now + self.longestWait
                    while ContinuousClock.now < giveUpAt {
                        let quietFrom = cache.lastChangeAt + self.quietPeriod
                        if cache.isHandlingCommand {
                            try await Task.sleep(for: self.quietPeriod)
                        } else if quietFrom > .now {
                            try await Task.sleep(until: quietFrom, clock: .continuous)
                        } else {
                            break
                        }
                    }
                    let started = ContinuousClock.now
                    let encoded = try await self.handler.warmSnapshotCache()
                    if encoded > 0 {
                        self.logger.info("snapshot chunks encoded ahead", metadata: [
                            "buckets": "\(encoded)", "seconds": "\(String(format: "%.3f", (ContinuousClock.now - started).seconds))",
                        ])
                    }
                } catch is CancellationError {
                    return
                } catch {
                    self.logger.warning("encoding snapshot chunks ahead failed; a snapshot will encode them", metadata: ["error": "\(error)"])
                }
            }
        }
    }
}
