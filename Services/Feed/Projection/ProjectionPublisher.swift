import Dispatch
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging
import ServiceLifecycle
import Shared
import Synchronization

/// Publishes the projection's changes: once when the catalog snapshot has fully arrived (until then the
/// feed is not ready and rendering half a catalog would be wasted), then shortly after each change.
/// Changes arriving while it renders, or in as long again after it, are gathered into the next publication,
/// so a burst of events costs a few publications, not one per event, and at most half a core.
final class ProjectionPublisher: Service, Sendable {
    private let projection: CatalogProjection
    private let isSourceLoaded: @Sendable () -> Bool
    private let logger: Logger
    private let ready = Atomic<Bool>(false)
    /// Whether a publication happened since the trimmer last looked.
    private let publishedSinceTrim = Atomic<Bool>(false)
    /// How long publications must pause before freed memory is given back.
    static let trimQuiet = Duration.seconds(1)
    /// The longest wait between publications in a burst: well under `trimQuiet`, so a burst never looks paused.
    static let burstPause = Duration.milliseconds(250)

    init(projection: CatalogProjection, isSourceLoaded: @escaping @Sendable () -> Bool, logger: Logger) {
        self.projection = projection
        self.isSourceLoaded = isSourceLoaded
        self.logger = logger
    }

    /// True once the whole catalog snapshot is published; stays true.
    var isReady: Bool { ready.load(ordering: .acquiring) }

    func run() async throws {
        // Graceful shutdown cancels the sleeps below; that is the normal end, not a failure of the service.
        do {
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask { try await self.publishUntilShutdown() }
                group.addTask { try await self.returnFreedMemoryAfterPublications() }
            }
        } catch is CancellationError {}
    }

    /// Publications free old snapshots and rendering buffers, which glibc keeps in its arenas unless asked:
    /// a feed that followed an import of a city held a third more than one that loaded it from a snapshot.
    /// Given back once publications pause, not while they go on: `malloc_trim` holds each arena's lock while
    /// it walks it, and the event loops allocate from the same arenas.
    private func returnFreedMemoryAfterPublications() async throws {
        try await cancelWhenGracefulShutdown {
            var freedSinceTrim = false
            while true {
                try await Task.sleep(for: Self.trimQuiet)
                if self.publishedSinceTrim.exchange(false, ordering: .acquiringAndReleasing) {
                    freedSinceTrim = true
                } else if freedSinceTrim {
                    freedSinceTrim = false
                    await self.offTheEventLoops { _ in GlibcMalloc.returnFreedMemory() }
                }
            }
        }
    }

    private func publishUntilShutdown() async throws {
        try await cancelWhenGracefulShutdown {
            let started = ContinuousClock.now
            var lastRenderedAhead = started
            while !self.isSourceLoaded() {
                try await Task.sleep(for: .milliseconds(20))
                // What has arrived is rendered while the rest streams in; published once all is there.
                if ContinuousClock.now - lastRenderedAhead > .milliseconds(200), self.projection.hasPendingChanges {
                    await self.offTheEventLoops { $0.renderAhead() }
                    lastRenderedAhead = .now
                }
            }
            let loaded = ContinuousClock.now
            // Loading freed far more than it kept (every chunk's JSON, the decoded events, rendering buffers);
            // glibc keeps freed memory in its arenas unless asked to give it back.
            let snapshot = await self.publishOffTheEventLoops(thenReturnFreedMemory: true)
            self.ready.store(true, ordering: .releasing)
            self.logger.info("projection published", metadata: [
                "tours": "\(snapshot.tours.count)", "pois": "\(snapshot.pois.count)",
                "loadSeconds": "\((loaded - started).seconds)", "renderSeconds": "\((ContinuousClock.now - loaded).seconds)",
            ])
            for await _ in self.projection.changeSignals {
                // A moment for the rest of a burst to arrive.
                try await Task.sleep(for: .milliseconds(2))
                let publishing = ContinuousClock.now
                await self.publishOffTheEventLoops()
                self.publishedSinceTrim.store(true, ordering: .releasing)
                // In a burst (an import), publications would follow each other back to back and take a core from
                // the machine's other work: the next waits as long as this one took (at most `burstPause`), so about
                // half a core goes to publishing and each publication gathers more changes. A lone edit, after a
                // pause, is not delayed; one right after a long publication waits at most `burstPause`.
                try await Task.sleep(for: min(ContinuousClock.now - publishing, Self.burstPause))
            }
        }
    }

    /// Rendering a whole catalog takes seconds: do it on a Dispatch thread, not on the threads that
    /// answer requests (the feed runs Swift concurrency on NIO's event loops, see App.swift).
    @discardableResult
    private func publishOffTheEventLoops(thenReturnFreedMemory: Bool = false) async -> FeedSnapshot {
        await offTheEventLoops { projection in
            let snapshot = projection.publish()
            if thenReturnFreedMemory { GlibcMalloc.returnFreedMemory() }
            return snapshot
        }
    }

    private func offTheEventLoops<Result: Sendable>(_ work: @escaping @Sendable (CatalogProjection) -> Result) async -> Result {
        let projection = self.projection
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: work(projection)) }
        }
    }
}
