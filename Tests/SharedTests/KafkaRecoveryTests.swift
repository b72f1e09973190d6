import Foundation
import Synchronization
import Testing
import TestSupport
@testable import Shared

/// The Kafka wrapper when the broker loses everything: a private tansu killed with -9 and started again
/// empty on the same port, the clients left running (issue 14).
@Suite("Kafka wrapper after broker loss", .serialized, .stopsIfHung)
struct KafkaRecoveryTests {
    let logger = TestServices.logger

    private func configuration(_ broker: PrivateBroker) -> KafkaConfiguration {
        var configuration = TestServices.kafka()
        configuration.brokers = broker.address
        return configuration
    }

    /// Sends until one send succeeds; returns how long after `from` that was.
    private func sendUntilAcknowledged(_ producer: KafkaProducer, _ message: KafkaOutgoingMessage, within limit: Duration) async -> Duration? {
        let start = ContinuousClock.now
        while ContinuousClock.now - start < limit {
            if (try? await producer.send(message)) != nil { return ContinuousClock.now - start }
            try? await Task.sleep(for: .milliseconds(200))
        }
        return nil
    }

    private func readAll(_ consumer: KafkaConsumer, count: Int, within limit: Duration) async throws -> [KafkaMessage] {
        var received: [KafkaMessage] = []
        let deadline = ContinuousClock.now + limit
        while received.count < count, ContinuousClock.now < deadline {
            received += try await consumer.poll(maxMessages: 100, timeout: .milliseconds(200))
        }
        return received
    }

    @Test("the topic guard makes missing topics again with their partition counts, and nothing else")
    func topicGuardRecreates() async throws {
        let broker = try await PrivateBroker.start()
        defer { broker.stop() }
        let configuration = configuration(broker)
        let producer = try KafkaProducer(configuration: configuration, logger: logger)
        let guardian = TopicGuard(producer: producer, logger: logger)
        var reported: Set<String> = []
        await guardian.check(reportedCounts: &reported)
        let names = Topic.all.map { configuration.topic($0.name) }
        let expected = Dictionary(uniqueKeysWithValues: Topic.all.map { (configuration.topic($0.name), $0.partitions) })
        #expect(try await producer.partitionCounts(topics: names) == expected)

        try await broker.restartEmpty()
        // A producer asking for a missing topic must not make the broker auto-create it with its own count.
        _ = try? await producer.send(KafkaOutgoingMessage(topic: configuration.topic(Topic.trackingEvents), key: "k", value: [1]))
        await guardian.check(reportedCounts: &reported)
        #expect(try await producer.partitionCounts(topics: names) == expected)
        await producer.shutdown()
    }

    @Test("an idempotent producer whose broker came back empty is acknowledged again within 10 s, and what it held is not lost")
    func producerSurvivesBrokerLoss() async throws {
        let broker = try await PrivateBroker.start()
        defer { broker.stop() }
        let configuration = configuration(broker)
        let topic = configuration.topic("events")
        let spec = KafkaTopicSpec(name: "events", partitions: 4)
        let producer = try KafkaProducer(configuration: configuration, logger: logger)
        try await producer.createTopics([spec])
        // Every partition has seen this producer's id and sequence numbers.
        _ = try await producer.send((0..<40).map { KafkaOutgoingMessage(topic: topic, key: "before-\($0)", value: Array("before".utf8)) })

        try await broker.restartEmpty()
        let back = ContinuousClock.now
        // As in a service: sends go on while the topic is missing, until the topic guard makes it again.
        let guardian = Task {
            try await Task.sleep(for: .seconds(2))
            try await producer.createTopics([spec])
        }
        let message = KafkaOutgoingMessage(topic: topic, key: "after", value: Array("after".utf8))
        let waited = await sendUntilAcknowledged(producer, message, within: .seconds(30))
        #expect(waited != nil, "no send acknowledged within 30 s of the broker coming back")
        #expect(ContinuousClock.now - back < .seconds(10), "first acknowledgement \(ContinuousClock.now - back) after the broker came back")
        try await guardian.value

        // A batch over every partition goes through too, and the broker holds it.
        let batch = (0..<40).map { KafkaOutgoingMessage(topic: topic, key: "later-\($0)", value: Array("later".utf8)) }
        let reports = try await producer.send(batch)
        #expect(Set(reports.map(\.partition)).count == 4)
        let consumer = try await KafkaConsumer.open(configuration: configuration, subscription: .allPartitions(topics: [topic], from: .beginning), logger: logger)
        let stored = try await readAll(consumer, count: 41, within: .seconds(20))
        #expect(Set(stored.compactMap(\.keyString)).isSuperset(of: Set((0..<40).map { "later-\($0)" } + ["after"])))
        await consumer.close()
        await producer.shutdown()
    }

    @Test("a consumer whose position is beyond a replaced log reads the new log from its start, and says so")
    func consumerFollowsReplacedLog() async throws {
        let broker = try await PrivateBroker.start()
        defer { broker.stop() }
        let configuration = configuration(broker)
        let topic = configuration.topic("log")
        let spec = KafkaTopicSpec(name: "log", partitions: 1)
        let producer = try KafkaProducer(configuration: configuration, logger: logger)
        try await producer.createTopics([spec])
        for index in 0..<20 {
            try await producer.send(KafkaOutgoingMessage(topic: topic, key: "old", value: Array("old-\(index)".utf8)))
        }
        let checks = Mutex<[KafkaConsumer.LogCheck]>([])
        let consumer = try await KafkaConsumer.open(configuration: configuration, subscription: .allPartitions(topics: [topic], from: .beginning),
                                                    logger: logger, checkInterval: .milliseconds(500),
                                                    onLogCheck: { check in checks.withLock { $0.append(check) } })
        // Read all along, as a service does: the consumer sees the broker go and come back.
        let received = Received(reading: consumer)
        await received.wait(for: 20, within: .seconds(20))
        #expect(received.values.withLock { $0.count } == 20)
        try await Task.sleep(for: .seconds(1))   // a check or two at the log's end

        try await broker.restartEmpty()
        try await producer.createTopics([spec])
        let fresh = (0..<5).map { "new-\($0)" }
        for value in fresh {
            _ = await sendUntilAcknowledged(producer, KafkaOutgoingMessage(topic: topic, key: "new", value: Array(value.utf8)), within: .seconds(30))
        }
        await received.wait(for: 25, within: .seconds(30))
        await received.stop()
        #expect(Array(received.values.withLock { $0 }.dropFirst(20)) == fresh)
        let moves = checks.withLock { $0 }.flatMap(\.moves)
        #expect(moves.map(\.position) == [20])
        #expect(moves.first?.resetTo == 0)
        #expect(checks.withLock { $0 }.contains { $0.afterBrokerLoss })
        await consumer.close()
        await producer.shutdown()
    }

    @Test("a consumer whose topic is deleted and made again reads the new topic from its start")
    func consumerFollowsRecreatedTopic() async throws {
        let broker = try await PrivateBroker.start()
        defer { broker.stop() }
        let configuration = configuration(broker)
        let topic = configuration.topic("recreated")
        let spec = KafkaTopicSpec(name: "recreated", partitions: 2)
        let producer = try KafkaProducer(configuration: configuration, logger: logger)
        try await producer.createTopics([spec])
        for index in 0..<10 {
            try await producer.send(KafkaOutgoingMessage(topic: topic, key: "k\(index)", value: Array("old-\(index)".utf8)))
        }
        let checks = Mutex<[KafkaConsumer.LogCheck]>([])
        let consumer = try await KafkaConsumer.open(configuration: configuration, subscription: .allPartitions(topics: [topic], from: .beginning),
                                                    logger: logger, checkInterval: .milliseconds(500),
                                                    onLogCheck: { check in checks.withLock { $0.append(check) } })
        let received = Received(reading: consumer)
        await received.wait(for: 10, within: .seconds(20))
        try await Task.sleep(for: .seconds(1))

        try await producer.deleteTopics([topic])
        try await Task.sleep(for: .seconds(2))
        try await producer.createTopics([spec])
        let fresh = (0..<4).map { "new-\($0)" }
        for value in fresh {
            _ = await sendUntilAcknowledged(producer, KafkaOutgoingMessage(topic: topic, key: "new", value: Array(value.utf8)), within: .seconds(30))
        }
        await received.wait(for: 14, within: .seconds(30))
        await received.stop()
        #expect(Array(received.values.withLock { $0 }.dropFirst(10)) == fresh)
        #expect(!checks.withLock { $0 }.flatMap(\.moves).isEmpty)
        await consumer.close()
        await producer.shutdown()
    }

    @Test("the end probe forgets a replaced log's ends, also of a partition the new log has nothing in")
    func endsForgetReplacedLog() async throws {
        let broker = try await PrivateBroker.start()
        defer { broker.stop() }
        let configuration = configuration(broker)
        let topic = configuration.topic("ends")
        let spec = KafkaTopicSpec(name: "ends", partitions: 2)
        let producer = try KafkaProducer(configuration: configuration, logger: logger)
        try await producer.createTopics([spec])
        let ends = try KafkaTopicEnds(topic: topic, configuration: configuration, logger: logger)
        let probe = Task { try await ends.run() }
        defer { probe.cancel() }
        #expect(try await TestServices.eventually(timeout: .seconds(15)) { ends.isFollowing })
        for index in 0..<10 {
            try await producer.send(KafkaOutgoingMessage(topic: topic, key: "k", value: Array("old-\(index)".utf8), partition: 0))
        }
        #expect(try await TestServices.eventually(timeout: .seconds(15)) { try await ends.watermarks()[0]?.high == 10 })

        // Made again; only partition 1 gets a message. Partition 0's end is the new log's, 0, not the old 10 the probe
        // saw: analytics' lag watch compared a position reset to 0 with it and stayed degraded (tests/faults/test_restarts.py).
        try await producer.deleteTopics([topic])
        try await Task.sleep(for: .seconds(2))
        try await producer.createTopics([spec])
        _ = await sendUntilAcknowledged(producer, KafkaOutgoingMessage(topic: topic, key: "k", value: Array("new".utf8), partition: 1), within: .seconds(30))
        let forgotten = try await TestServices.eventually(timeout: .seconds(20), interval: .milliseconds(300)) {
            let marks = try await ends.watermarks()
            return marks[0]?.high == 0 && marks[1]?.high == 1
        }
        #expect(forgotten)
        await producer.shutdown()
    }

    @Test("a consumer whose topic is made again and filled past its position before it looks reads the new topic from its start")
    func consumerFollowsRecreatedTopicGrownPastPosition() async throws {
        let broker = try await PrivateBroker.start()
        defer { broker.stop() }
        let configuration = configuration(broker)
        let topic = configuration.topic("regrown")
        let spec = KafkaTopicSpec(name: "regrown", partitions: 1)
        let producer = try KafkaProducer(configuration: configuration, logger: logger)
        try await producer.createTopics([spec])
        for index in 0..<10 {
            try await producer.send(KafkaOutgoingMessage(topic: topic, key: "k", value: Array("old-\(index)".utf8)))
        }
        let consumer = try await KafkaConsumer.open(configuration: configuration, subscription: .allPartitions(topics: [topic], from: .beginning),
                                                    logger: logger, checkInterval: .milliseconds(500))
        let old = try await readAll(consumer, count: 10, within: .seconds(20))
        #expect(old.count == 10)

        // Nobody polls while the topic is replaced: the new log is past the old position (10) by the next check,
        // so offsets alone look fine (the catalog's snapshot does this to the feed).
        try await producer.deleteTopics([topic])
        try await Task.sleep(for: .seconds(2))
        try await producer.createTopics([spec])
        let fresh = (0..<15).map { "new-\($0)" }
        for value in fresh {
            _ = await sendUntilAcknowledged(producer, KafkaOutgoingMessage(topic: topic, key: "k", value: Array(value.utf8)), within: .seconds(30))
        }
        var seen: Set<String> = []
        let deadline = ContinuousClock.now + .seconds(30)
        while seen.count < fresh.count, ContinuousClock.now < deadline {
            for message in try await consumer.poll(maxMessages: 100, timeout: .milliseconds(200)) {
                seen.insert(String(decoding: message.value, as: UTF8.self))
            }
        }
        #expect(seen == Set(fresh))
        await consumer.close()
        await producer.shutdown()
    }

    /// A group consumer on a new 30-message log whose assignment hook starts at 20, having stored `stored`; what it
    /// read (by value) and the moves its checks made.
    private func readRewound(stored: Int64, _ broker: PrivateBroker, name: String) async throws -> (values: Set<String>, moves: [KafkaConsumer.LogMove]) {
        let configuration = configuration(broker)
        let topic = configuration.topic(name)
        let producer = try KafkaProducer(configuration: configuration, logger: logger)
        try await producer.createTopics([KafkaTopicSpec(name: name, partitions: 1)])
        for index in 0..<30 {   // one at a time: each its own batch, so the log's end is exact
            try await producer.send(KafkaOutgoingMessage(topic: topic, key: "k", value: Array("m\(index)".utf8)))
        }
        let checks = Mutex<[KafkaConsumer.LogCheck]>([])
        let consumer = try await KafkaConsumer.open(configuration: configuration, subscription: .group(id: "rewound-\(name)", topics: [topic]),
                                                    logger: logger, checkInterval: .milliseconds(300), resetUnconfirmedBeyondEnd: true,
                                                    assignmentOffsets: { partitions in
                                                        Dictionary(uniqueKeysWithValues: partitions.map { ($0, .init(offset: 20, stored: stored)) })
                                                    },
                                                    onLogCheck: { check in checks.withLock { $0.append(check) } })
        var values: Set<String> = []
        // Long enough for the group to form (seconds on tansu) and several checks after the first messages.
        let deadline = ContinuousClock.now + .seconds(30)
        var quietSince: ContinuousClock.Instant?
        while ContinuousClock.now < deadline {
            let messages = try await consumer.poll(maxMessages: 100, timeout: .milliseconds(200))
            values.formUnion(messages.map { String(decoding: $0.value, as: UTF8.self) })
            if values.isEmpty || !messages.isEmpty { quietSince = nil; continue }
            if quietSince == nil { quietSince = .now }
            if values.count == 30 || ContinuousClock.now - quietSince! > .seconds(2) { break }
        }
        await consumer.close()
        await producer.shutdown()
        return (values, checks.withLock { $0 }.flatMap(\.moves))
    }

    @Test("a reader starting a little before its stored offset, beyond the log's end, reads the log from its start (the log is not the one it stored)")
    func rewoundStartBeyondEndReadsNewLog() async throws {
        let broker = try await PrivateBroker.start()
        defer { broker.stop() }
        let read = try await readRewound(stored: 50, broker, name: "rewound-beyond")
        #expect(read.values == Set((0..<30).map { "m\($0)" }), "the head before the rewound start was skipped: read \(read.values.count)")
        #expect(read.moves.map(\.position) == [50])
        #expect(read.moves.first?.resetTo == 0)
    }

    @Test("a reader starting a little before its stored offset, at the log's end, reads from its start and is not reset")
    func rewoundStartWithinLogIsNotReset() async throws {
        let broker = try await PrivateBroker.start()
        defer { broker.stop() }
        let read = try await readRewound(stored: 30, broker, name: "rewound-within")
        #expect(read.values == Set((20..<30).map { "m\($0)" }))
        #expect(read.moves.isEmpty, "\(read.moves)")
    }

    @Test("a consumer caught up with a log of multi-message batches is not reset (tansu's end is its last batch's base + 1)")
    func consumerAtEndIsNotReset() async throws {
        let broker = try await PrivateBroker.start()
        defer { broker.stop() }
        let configuration = configuration(broker)
        let topic = configuration.topic("batches")
        let producer = try KafkaProducer(configuration: configuration, logger: logger)
        try await producer.createTopics([KafkaTopicSpec(name: "batches", partitions: 1)])
        _ = try await producer.send((0..<30).map { KafkaOutgoingMessage(topic: topic, key: "k", value: Array("m\($0)".utf8)) })
        let checks = Mutex<[KafkaConsumer.LogCheck]>([])
        let consumer = try await KafkaConsumer.open(configuration: configuration, subscription: .allPartitions(topics: [topic], from: .beginning),
                                                    logger: logger, checkInterval: .milliseconds(200),
                                                    onLogCheck: { check in checks.withLock { $0.append(check) } })
        #expect(try await readAll(consumer, count: 30, within: .seconds(20)).count == 30)
        // Several checks pass with the consumer at the log's true end.
        let again = try await readAll(consumer, count: 1, within: .seconds(2))
        #expect(again.isEmpty, "read \(again.count) messages again")
        #expect(checks.withLock { $0 }.flatMap(\.moves).isEmpty)
        await consumer.close()
        await producer.shutdown()
    }
}

/// Reads a consumer in the background, as a service does (so it sees the broker go and come back), and
/// keeps what it received for the test to wait on.
private final class Received: Sendable {
    let values = Mutex<[String]>([])
    private let reader = Mutex<Task<Void, Never>?>(nil)

    init(reading consumer: KafkaConsumer) {
        let task = Task { [self] in
            while !Task.isCancelled {
                let messages = (try? await consumer.poll(maxMessages: 100, timeout: .milliseconds(200))) ?? []
                values.withLock { $0 += messages.map { String(decoding: $0.value, as: UTF8.self) } }
                if messages.isEmpty { try? await Task.sleep(for: .milliseconds(20)) }   // a closed consumer answers at once
            }
        }
        reader.withLock { $0 = task }
    }

    func wait(for count: Int, within limit: Duration) async {
        let deadline = ContinuousClock.now + limit
        while values.withLock({ $0.count }) < count, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(100)) }
    }

    func stop() async {
        let task = reader.withLock { $0 }
        task?.cancel()
        await task?.value
    }
}
