import Foundation
import Logging
import Metrics
import ServiceLifecycle
import Shared

/// Publishes a full snapshot when `catalog.events` lost what the relay published (a memory-only broker
/// restarted empty, the topic deleted and made again), as catalog does when a feed starts, so every reader of
/// the new log (and every feed started later) gets the whole catalog from it. The relay notices the loss
/// from its own acknowledgements (OutboxRelay.replacedLogs): offsets in a partition only grow. No broker
/// query: tansu reports a partition's end as its last batch's base offset + 1, and a watermark query on
/// the producer's handle while the broker is away crashed librdkafka 2.4.
struct CatalogEventsWatch: Service {
    let relay: OutboxRelay
    let handler: CatalogCommandHandler
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            for await partitions in relay.replacedLogs {
                await publishSnapshot(lostPartitions: partitions)
            }
        }
    }

    private func publishSnapshot(lostPartitions: [Int32]) async {
        logger.warning("catalog.events lost what was published (broker restarted empty or topic re-created); publishing a full snapshot",
                       metadata: ["partitions": "\(lostPartitions)"])
        for attempt in 1... {
            do {
                try await handler.handle(CatalogCommand(commandId: UUID.random(), action: .snapshot, actor: "catalog"))
                Counter(label: "itour_catalog_republished_total",
                        help: "Full snapshots of the catalog published again because catalog.events lost what was published.").increment()
                relay.notify()
                return
            } catch {
                if Task.isCancelled { return }
                logger.error("publishing a snapshot after the log was lost failed; retrying", metadata: ["error": "\(error)", "attempt": "\(attempt)"])
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }
}
