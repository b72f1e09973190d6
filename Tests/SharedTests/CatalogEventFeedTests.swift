import Foundation
import Synchronization
import Testing
import TestSupport
@testable import Shared

@Suite("Catalog event feed", .stopsIfHung)
struct CatalogEventFeedTests {
    let logger = TestServices.logger

    @Test("cancelled while its snapshot request waits for a command client that never started, it stops at once")
    func stopsWhileRequestingSnapshot() async throws {
        let configuration = TestServices.kafka()
        let producer = try KafkaProducer(configuration: configuration, logger: logger)
        try await producer.createTopics(Topic.all)
        let startup = StartupBarrier()
        startup.open()
        // Not run: its sends wait for a results consumer that never comes.
        let commands = CatalogCommandClient(producer: producer, configuration: configuration, startup: startup, source: "test", logger: logger)
        let feed = CatalogEventFeed(configuration: configuration, startup: startup, commands: commands,
                                    deadLetters: DeadLetterSink(producer: producer, consumerName: "test", logger: logger),
                                    source: "test", logger: logger, handler: { _ in })
        let finished = Atomic<Bool>(false)
        let running = Task {
            defer { finished.store(true, ordering: .releasing) }
            try await feed.run()
        }
        // Its consumer reads, and its snapshot request waits in `send`.
        // Bounds that catch a hang, not a slow start: the full run starts ~200 tests at once on two cores.
        let requesting = try await TestServices.eventually(timeout: .seconds(90)) { commands.listening.waiterCount == 1 }
        try #require(requesting)
        running.cancel()
        let stopped = try await TestServices.eventually(timeout: .seconds(90)) { finished.load(ordering: .acquiring) }
        #expect(stopped, "run() still running 90 s after its task was cancelled")
        await producer.shutdown()
    }

    @Test("a snapshot chunk's entities go to the handler in one call; an unreadable entity, or one the handler refuses, loses only that entity: the rest are handled, each bad one dead-lettered alone")
    func chunkEntitiesInOneCall() async throws {
        let configuration = TestServices.kafka()
        let producer = try KafkaProducer(configuration: configuration, logger: logger)
        try await producer.createTopics(Topic.all)
        let startup = StartupBarrier()
        startup.open()
        let pois = (0..<4).map { n in
            PoiState(id: UUID(), version: 1, content: PoiContent(name: n == 1 ? "DAMAGED" : "POI \(n)", latitude: 34.2, longitude: -77.8),
                     updatedAt: Date(timeIntervalSince1970: 1_700_000_000))
        }
        let refused = pois[3].id
        let handled = Mutex<[UUID]>([])
        let callSizes = Mutex<[Int]>([])
        let commands = CatalogCommandClient(producer: producer, configuration: configuration, startup: startup, source: "test", logger: logger)
        let feed = CatalogEventFeed(configuration: configuration, startup: startup, commands: commands,
                                    deadLetters: DeadLetterSink(producer: producer, consumerName: "test", logger: logger),
                                    source: "test", logger: logger, handler: { events in
                                        callSizes.withLock { $0.append(events.count) }
                                        for event in events {
                                            guard let id = event.entityId else { continue }
                                            if id == refused { throw Refused() }
                                            handled.withLock { $0.append(id) }
                                        }
                                    })
        let running = Task { try await feed.run() }
        // Reading (its snapshot request waits for a command client not run): what is sent now is read.
        try #require(try await TestServices.eventually(timeout: .seconds(90)) { commands.listening.waiterCount == 1 })
        let chunk = CatalogEventCodec.write(Envelope(type: CatalogEvent.Kind.snapshotChunk.rawValue, source: "catalog",
                                                     data: .snapshotChunk(pois: pois, snapshotId: UUID())))
        let damaged = String(decoding: chunk, as: UTF8.self).replacingOccurrences(of: #""name":"DAMAGED""#, with: #""name":17"#)
        try #require(damaged.utf8.count == chunk.count - 7)
        try await producer.send(KafkaOutgoingMessage(topic: configuration.topic(Topic.catalogEvents), key: "catalog.snapshot-chunk/0",
                                                     value: Array(damaged.utf8)))

        let letters = try await TestServices.deadLetters(configuration, count: 2)
        // The three readable entities in one call, which failed; then each alone, so only the refused one is lost.
        #expect(callSizes.withLock { $0 } == [3, 1, 1, 1])
        #expect(Set(handled.withLock { $0 }) == [pois[0].id, pois[2].id])
        try #require(letters.count == 2)
        let unreadable = try #require(letters.first { $0.data.part == "an entity of a snapshot chunk" })
        #expect(unreadable.data.value.contains(#""name":17"#) && !unreadable.data.value.contains("POI 0"))
        #expect(unreadable.data.reason.hasPrefix("unreadable entity"))
        let refusedLetter = try #require(letters.first { $0.data.part == "entity \(refused.uuidString.lowercased())" })
        let event = try EnvelopeDecoder.decode(CatalogEvent.self, from: Array(refusedLetter.data.value.utf8))
        #expect(event.data.poi == pois[3] && event.type == CatalogEvent.Kind.poiChanged.rawValue)
        running.cancel()
        _ = await running.result
        await producer.shutdown()
    }

    @Test("a snapshot request nobody answers is asked again under a new id; a snapshot answering the first request, arriving late, still loads the feed")
    func unansweredSnapshotRequestIsAskedAgain() async throws {
        let configuration = TestServices.kafka()
        let producer = try KafkaProducer(configuration: configuration, logger: logger)
        try await producer.createTopics(Topic.all)
        let startup = StartupBarrier()
        startup.open()
        let source = "patience-\(UUID().uuidString.prefix(8))"
        // What reaches catalog.commands from this feed, read from the end before it asks.
        let requests = try await KafkaConsumer.open(configuration: configuration,
                                                    subscription: .allPartitions(topics: [configuration.topic(Topic.catalogCommands)], from: .end),
                                                    logger: logger)
        let commands = CatalogCommandClient(producer: producer, configuration: configuration, startup: startup, source: source, logger: logger)
        let feed = CatalogEventFeed(configuration: configuration, startup: startup, commands: commands,
                                    deadLetters: DeadLetterSink(producer: producer, consumerName: source, logger: logger),
                                    source: source, logger: logger, handler: { _ in }, snapshotPatience: .seconds(3))
        let client = Task { try await commands.run() }
        let running = Task { try await feed.run() }

        // No catalog runs: the first request goes unanswered, and a second follows under another id.
        var asked: [UUID] = []
        let deadline = ContinuousClock.now + .seconds(60)
        while asked.count < 2, ContinuousClock.now < deadline {
            for message in try await requests.poll(maxMessages: 100, timeout: .milliseconds(200)) {
                guard let command = try? CatalogEventCodec.readCommand(message.value).data,
                      command.action == .snapshot, command.actor == source else { continue }
                asked.append(command.commandId)
            }
        }
        try #require(asked.count == 2, "requests seen: \(asked)")
        #expect(asked[0] != asked[1])
        #expect(!feed.isLoaded)

        // A snapshot answering the first request, arriving only now (slower than the patience), still loads it.
        let topic = configuration.topic(Topic.catalogEvents)
        let partitions = try await producer.partitionCounts(topics: [topic])[topic] ?? 1
        _ = try await producer.send((0..<Int32(partitions)).map { partition in
            KafkaOutgoingMessage(topic: topic, key: nil,
                                 value: CatalogEventCodec.write(Envelope(type: CatalogEvent.Kind.snapshotMarker.rawValue, source: "catalog",
                                                                         data: CatalogEvent(kind: .snapshotMarker, snapshotId: asked[0],
                                                                                            partition: partition, partitionCount: partitions))),
                                 partition: partition)
        })
        #expect(try await TestServices.eventually(timeout: .seconds(30)) { feed.isLoaded })
        running.cancel()
        client.cancel()
        _ = await running.result
        _ = await client.result
        await requests.close()
        await producer.shutdown()
    }
}

private struct Refused: Error {}
