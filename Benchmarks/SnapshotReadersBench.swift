import Foundation
import Logging
import Shared
import Synchronization

/// `itour-bench snapshot-readers --readers N`: N readers of `catalog.events` started together, as N feed replicas
/// scaling out start (`CatalogEventFeed`, each asking catalog for a snapshot, unsigned as the feed's are), against a
/// running catalog with its catalog loaded (scripts/bench-snapshots.sh). Prints how many snapshots catalog published
/// for them and the bytes of `catalog.events` each reader read until every one was loaded (DESIGN.md "One snapshot for
/// many readers"). Every reader reads every message on `catalog.events` from where it started, so those bytes are what a
/// consumer opened at the end just before them reads until the last reader is loaded and the topic is quiet (2 s).
/// Settings from the environment: KAFKA_BROKERS, KAFKA_TOPIC_PREFIX.
enum SnapshotReadersBench {
    final class Tally: Sendable {
        let bytes = Atomic<Int>(0)
        let messages = Atomic<Int>(0)
        let snapshots = Mutex<Set<UUID>>([])
        let markers = Atomic<Int>(0)
    }

    static func run(readers: Int, timeout: Duration) async throws {
        LoggingSetup.bootstrap(format: .text, level: .warning)
        let logger = Logger(label: "snapshot-readers")
        var kafka = try BenchProgram.commandsKafka(Environment(), clientId: "itour-bench-readers")
        // The feed and analytics hold no command key: their requests take the unsigned allowance.
        kafka.commandSignature = nil
        let producer = try KafkaProducer(configuration: kafka, logger: logger)
        try await producer.createTopics(Topic.all)
        let topic = kafka.topic(Topic.catalogEvents)

        // Opened at the end before the readers: it reads what each of them reads.
        let measure = try await KafkaConsumer.open(configuration: kafka, subscription: .allPartitions(topics: [topic], from: .end),
                                                   logger: logger, name: "bench-measure")
        let tally = Tally()
        let lastMessage = Mutex(ContinuousClock.now)
        let measuring = Task {
            while !Task.isCancelled {
                let messages = try await measure.poll(maxMessages: 1_000, timeout: .milliseconds(100))
                guard !messages.isEmpty else { continue }
                lastMessage.withLock { $0 = .now }
                for message in messages {
                    tally.bytes.add(message.value.count + (message.key?.count ?? 0), ordering: .relaxed)
                    tally.messages.add(1, ordering: .relaxed)
                    guard (try? EnvelopeDecoder.header(message.value).type) == CatalogEvent.Kind.snapshotMarker.rawValue,
                          let marker = try? EnvelopeDecoder.decode(CatalogEvent.self, from: message.value).data, let id = marker.snapshotId
                    else { continue }
                    tally.markers.add(1, ordering: .relaxed)
                    tally.snapshots.withLock { _ = $0.insert(id) }
                }
            }
        }

        let startup = StartupBarrier()
        startup.open()
        let commands = CatalogCommandClient(producer: producer, configuration: kafka, startup: startup, source: "bench-reader", logger: logger)
        let entities = Atomic<Int>(0)
        let feeds = (0..<readers).map { n in
            CatalogEventFeed(configuration: kafka, startup: startup, commands: commands,
                             deadLetters: DeadLetterSink(producer: producer, consumerName: "bench-reader-\(n)", logger: logger),
                             source: "bench-reader-\(n)", logger: logger,
                             handler: { events in entities.add(events.count, ordering: .relaxed) },
                             categoryHandler: { _ in })
        }
        let started = ContinuousClock.now
        let running = Task {
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask { try await commands.run() }
                for feed in feeds { group.addTask { try await feed.run() } }
            }
        }
        while !feeds.allSatisfy(\.isLoaded) {
            guard ContinuousClock.now - started < timeout else {
                throw BenchError("\(feeds.filter(\.isLoaded).count) of \(readers) readers loaded after \(timeout)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        let ready = (ContinuousClock.now - started).benchSeconds
        // Whatever catalog still sends for these requests (with each answered alone, later snapshots may follow).
        while ContinuousClock.now - lastMessage.withLock({ $0 }) < .seconds(2) { try await Task.sleep(for: .milliseconds(100)) }
        running.cancel()
        measuring.cancel()
        _ = await running.result
        _ = await measuring.result
        await measure.close()
        await producer.shutdown()

        let bytes = tally.bytes.load(ordering: .relaxed)
        let snapshots = tally.snapshots.withLock { $0.count }
        print(String(format: "snapshot-readers: readers=%d snapshots=%d markers=%d messages-per-reader=%d bytes-per-reader=%d (%.1f MB) all-ready=%.2f s entities-handled-per-reader=%d",
                     readers, snapshots, tally.markers.load(ordering: .relaxed), tally.messages.load(ordering: .relaxed), bytes,
                     Double(bytes) / 1e6, ready, entities.load(ordering: .relaxed) / max(readers, 1)))
    }
}
