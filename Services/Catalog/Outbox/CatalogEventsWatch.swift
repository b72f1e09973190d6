import Foundation
import Logging
import Metrics
import ServiceLifecycle
import Shared

/// Notices when `catalog.events` lost what the relay published (a memory-only broker restarted empty, the
/// topic deleted and made again): a partition's end behind the highest offset the broker acknowledged to
/// the relay. Catalog then publishes a full snapshot, as it does when a feed starts, so every reader of the
/// new log (and every feed started later) gets the whole catalog from it.
struct CatalogEventsWatch: Service {
    let relay: OutboxRelay
    let handler: CatalogCommandHandler
    let producer: KafkaProducer
    let interval: Duration
    let logger: Logger

    init(relay: OutboxRelay, handler: CatalogCommandHandler, producer: KafkaProducer, interval: Duration = .seconds(2), logger: Logger) {
        self.relay = relay
        self.handler = handler
        self.producer = producer
        self.interval = interval
        self.logger = logger
    }

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try await Task.sleep(for: interval)
                await check()
            }
        }
    }

    func check() async {
        let acknowledged = relay.acknowledgedEvents.withLock { $0 }
        guard !acknowledged.isEmpty else { return }
        let topic = producer.configuration.topic(Topic.catalogEvents)
        // nil: the topic is gone; TopicGuard makes it again, and the next check sees it empty.
        guard let marks = try? await producer.highWatermarks(topic: topic), !marks.isEmpty else { return }
        let lost = acknowledged.filter { partition, offset in (marks[partition] ?? 0) <= offset }
        guard !lost.isEmpty else { return }
        logger.warning("catalog.events lost what was published (broker restarted empty or topic re-created); publishing a full snapshot", metadata: [
            "partitions": "\(lost.keys.sorted())", "acknowledged": "\(acknowledged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })",
            "ends": "\(marks.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })",
        ])
        relay.acknowledgedEvents.withLock { $0 = [:] }
        do {
            try await handler.handle(CatalogCommand(commandId: UUID(), action: .snapshot, actor: "catalog"))
            Counter(label: "itour_catalog_republished_total").increment()
            relay.notify()
        } catch {
            // Not forgotten: the acknowledged offsets come back with the next relay and the check repeats.
            logger.error("publishing a snapshot after the log was lost failed", metadata: ["error": "\(error)"])
            relay.acknowledgedEvents.withLock { held in held.merge(acknowledged) { max($0, $1) } }
        }
    }
}
