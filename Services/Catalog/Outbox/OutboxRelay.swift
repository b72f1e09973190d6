import Foundation
import Logging
import Metrics
import ServiceLifecycle
import Shared
import Synchronization

/// Publishes the outbox: wakes when a command committed (or every `idleInterval`, for rows other instances
/// wrote), sends the oldest rows, waits for the broker's acknowledgement, then deletes them. At least
/// once: a crash between ack and delete republishes, and consumers dedupe by version or id.
final class OutboxRelay: Service, Sendable {
    private let repository: PostgresCatalogRepository
    private let producer: KafkaProducer
    private let logger: Logger
    private let idleInterval: Duration
    private let wakeups: AsyncStream<Void>
    private let wakeup: AsyncStream<Void>.Continuation
    private let published = Counter(label: "itour_outbox_published_total", help: "Outbox rows the relay published to catalog.events.")
    /// Per `catalog.events` partition, the highest offset the broker acknowledged to this relay.
    private let acknowledgedEvents = Mutex<[Int32: Int64]>([:])
    /// Partitions of `catalog.events` whose new acknowledgements came back at or below an earlier one: the
    /// log was replaced (broker restarted empty, topic made again) and lost what was published before.
    let replacedLogs: AsyncStream<[Int32]>
    private let replacedLog: AsyncStream<[Int32]>.Continuation
    private let eventsTopic: String
    private let backlogGauge = Gauge(label: "itour_outbox_backlog", help: "Outbox rows not yet published to catalog.events.")

    init(repository: PostgresCatalogRepository, producer: KafkaProducer, logger: Logger, idleInterval: Duration = .milliseconds(500)) {
        eventsTopic = producer.configuration.topic(Topic.catalogEvents)
        self.repository = repository
        self.producer = producer
        self.logger = logger
        self.idleInterval = idleInterval
        (wakeups, wakeup) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        (replacedLogs, replacedLog) = AsyncStream.makeStream(of: [Int32].self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Asks the relay to publish now.
    func notify() { wakeup.yield() }

    /// Refreshes the backlog gauge (called before a metrics scrape).
    func recordBacklog() async {
        if let backlog = try? await repository.outboxBacklog() { backlogGauge.record(backlog) }
    }

    /// Offsets in one partition only grow: an acknowledgement at or below an earlier one is from a new log.
    private func recordAcknowledged(_ reports: [KafkaDeliveryReport]) {
        let replaced = acknowledgedEvents.withLock { acknowledged -> Set<Int32> in
            var replaced: Set<Int32> = []
            var lowest: [Int32: Int64] = [:]
            // A report without an offset (librdkafka's -1, e.g. a duplicate the broker recognised) says nothing.
            for report in reports where report.topic == eventsTopic && report.offset >= 0 {
                lowest[report.partition] = min(lowest[report.partition] ?? .max, report.offset)
            }
            for (partition, offset) in lowest where offset <= (acknowledged[partition] ?? -1) { replaced.insert(partition) }
            for report in reports where report.topic == eventsTopic && report.offset >= 0 {
                acknowledged[report.partition] = replaced.contains(report.partition)
                    ? max(lowest[report.partition]!, report.offset) : max(acknowledged[report.partition] ?? -1, report.offset)
            }
            return replaced
        }
        if !replaced.isEmpty { replacedLog.yield(replaced.sorted()) }
    }

    func run() async throws {
        let ticker = Task { [wakeup, idleInterval] in
            while !Task.isCancelled {
                try? await Task.sleep(for: idleInterval)
                wakeup.yield()
            }
        }
        defer { ticker.cancel() }
        await cancelWhenGracefulShutdown {
            for await _ in self.wakeups {
                await self.drain()
            }
        }
        // Publish what the last commands wrote before the producer flushes and stops.
        await drain()
    }

    private func drain() async {
        var failures = 0
        while true {
            do {
                let producer = self.producer
                guard let count = try await repository.relayOutbox(limit: 1_000, publish: { entries in
                    let reports = try await producer.send(entries.map { entry in
                        KafkaOutgoingMessage(topic: entry.topic, key: entry.key, value: Array(entry.payload.utf8), partition: entry.partition,
                                             headers: entry.requestId.map { [(MessageHeader.requestId, Array($0.utf8))] } ?? [])
                    })
                    self.recordAcknowledged(reports)
                }) else { return }
                published.increment(by: count)
                if count < 1_000 { return }
                failures = 0
            } catch {
                if Task.isCancelled { return }
                failures += 1
                logger.warning("outbox relay failed; retrying", metadata: ["error": "\(error)", "attempt": "\(failures)"])
                if failures >= 3 || Task.isCancelled { return }
                try? await Task.sleep(for: .milliseconds(200 * failures))
            }
        }
    }
}
