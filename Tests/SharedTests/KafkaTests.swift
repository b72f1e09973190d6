import Foundation
import Shared
import Synchronization
import Testing
import TestSupport

/// The Kafka wrapper against the real broker that `make test` starts.
@Suite("Kafka wrapper", .serialized, .stopsIfHung)
struct KafkaTests {
    let logger = TestServices.logger

    func producer(_ configuration: KafkaConfiguration) throws -> KafkaProducer {
        try KafkaProducer(configuration: configuration, logger: logger)
    }

    @Test("topics are created with their partition counts, twice without error")
    func createTopics() async throws {
        let configuration = TestServices.kafka()
        let producer = try producer(configuration)
        let specs = [KafkaTopicSpec(name: "a", partitions: 3), KafkaTopicSpec(name: "b", partitions: 1)]
        try await producer.createTopics(specs)
        try await producer.createTopics(specs)
        let counts = try await producer.partitionCounts(topics: [configuration.topic("a"), configuration.topic("b")])
        #expect(counts == [configuration.topic("a"): 3, configuration.topic("b"): 1])
        await producer.shutdown()
    }

    @Test("send returns the broker's delivery report")
    func deliveryReport() async throws {
        let configuration = TestServices.kafka()
        let producer = try producer(configuration)
        let topic = configuration.topic("reports")
        try await producer.createTopics([KafkaTopicSpec(name: "reports", partitions: 1)])
        let first = try await producer.send(KafkaOutgoingMessage(topic: topic, key: "k", value: Array("one".utf8)))
        let batch = try await producer.send((0..<5).map { KafkaOutgoingMessage(topic: topic, key: "k", value: Array("m\($0)".utf8)) })
        #expect(first.topic == topic)
        #expect(first.partition == 0)
        #expect(first.offset >= 0)
        #expect(batch.map(\.offset) == (1...5).map { first.offset + Int64($0) })
        await producer.shutdown()
    }

    @Test("a group consumer receives, commits, and gets only the uncommitted message again after a restart")
    func groupReceiveCommitRedeliver() async throws {
        var configuration = TestServices.kafka()
        let producer = try producer(configuration)
        let topic = configuration.topic("orders")
        try await producer.createTopics([KafkaTopicSpec(name: "orders", partitions: 1)])
        let values = ["first", "second", "third"]
        _ = try await producer.send(values.map {
            KafkaOutgoingMessage(topic: topic, key: "key", value: Array($0.utf8), headers: [("request-id", Array("r-\($0)".utf8))])
        })
        let group = TestServices.uniqueName("group")
        configuration.clientId = "consumer-a"

        let consumerA = try await KafkaConsumer.open(configuration: configuration, subscription: .group(id: group, topics: [topic]), logger: logger)
        var received: [KafkaMessage] = []
        var iterator = consumerA.makeAsyncIterator()
        let deadline = ContinuousClock.now + .seconds(30)
        while received.count < 3, ContinuousClock.now < deadline, let message = try await iterator.next() {
            received.append(message)
        }
        #expect(received.map { String(decoding: $0.value, as: UTF8.self) } == values)
        #expect(received.first?.keyString == "key")
        #expect(received.first?.header("request-id") == "r-first")
        // Commit through the second message only: the third was "not processed".
        try await consumerA.commit(received[1])
        await consumerA.close()

        configuration.clientId = "consumer-b"
        let consumerB = try await KafkaConsumer.open(configuration: configuration, subscription: .group(id: group, topics: [topic]), logger: logger)
        var again: [KafkaMessage] = []
        let deadlineB = ContinuousClock.now + .seconds(30)
        while again.isEmpty, ContinuousClock.now < deadlineB {
            again += try await consumerB.poll(maxMessages: 10, timeout: .milliseconds(500))
        }
        #expect(again.map { String(decoding: $0.value, as: UTF8.self) } == ["third"])
        #expect(again.first?.offset == received[2].offset)
        await consumerB.close()
        await producer.shutdown()
    }

    @Test("an all-partitions consumer from the end sees only what was produced after it started")
    func allPartitionsFromEnd() async throws {
        let configuration = TestServices.kafka()
        let producer = try producer(configuration)
        let topic = configuration.topic("feed")
        try await producer.createTopics([KafkaTopicSpec(name: "feed", partitions: 3)])
        // One send per message: tansu reports a partition's high watermark as its last record batch's base
        // offset + 1, which is the true end only when every batch holds one message.
        for index in 0..<6 {
            try await producer.send(KafkaOutgoingMessage(topic: topic, key: "old\(index)", value: Array("old".utf8)))
        }
        let consumer = try await KafkaConsumer.open(configuration: configuration, subscription: .allPartitions(topics: [topic], from: .end), logger: logger)
        #expect(consumer.assignment.count == 3)
        _ = try await producer.send((0..<6).map { KafkaOutgoingMessage(topic: topic, key: "new\($0)", value: Array("new".utf8)) })
        var received: [KafkaMessage] = []
        let deadline = ContinuousClock.now + .seconds(20)
        while received.count < 6, ContinuousClock.now < deadline {
            received += try await consumer.poll(maxMessages: 100, timeout: .milliseconds(300))
        }
        #expect(received.count == 6)
        #expect(received.allSatisfy { String(decoding: $0.value, as: UTF8.self) == "new" })
        await consumer.close()
        await producer.shutdown()
    }

    @Test("a produce to an unreachable broker fails within its delivery timeout")
    func unreachableBroker() async throws {
        var configuration = KafkaConfiguration(brokers: "127.0.0.1:1", clientId: "unreachable")
        configuration.deliveryTimeoutMilliseconds = 1_500
        let producer = try producer(configuration)
        let start = ContinuousClock.now
        await #expect(throws: KafkaError.self) {
            try await producer.send(KafkaOutgoingMessage(topic: "nowhere", key: nil, value: Array("x".utf8)))
        }
        let elapsed = ContinuousClock.now - start
        #expect(elapsed < .seconds(5), "took \(elapsed)")
        await producer.shutdown()
    }

    @Test("consumers that wait on the broker while they are made leave the executor's threads free")
    func openingWaitsOffTheExecutor() async throws {
        // Asking an unreachable broker for partitions waits up to 10 s; more consumers than the executor has threads.
        let configuration = KafkaConfiguration(brokers: "127.0.0.1:1", clientId: "unreachable-consumer")
        final class Count: Sendable { let value = Mutex(0) }
        let opened = Count()
        let logger = self.logger
        for _ in 0..<(2 * ProcessInfo.processInfo.activeProcessorCount + 2) {
            Task {
                let consumer = try? await KafkaConsumer.open(configuration: configuration,
                                                             subscription: .allPartitions(topics: ["nowhere"], from: .end), logger: logger)
                opened.value.withLock { $0 += 1 }
                await consumer?.close()
            }
        }
        try await Task.sleep(for: .milliseconds(300))
        let start = ContinuousClock.now
        await Task {}.value
        let elapsed = ContinuousClock.now - start
        #expect(opened.value.withLock { $0 } == 0, "the broker answered: the test proved nothing")
        // Blocked threads would hold the task until the metadata requests time out (about 10 s); a bound far
        // below that and far above a busy machine's scheduling delay (0.57 s seen under a full CI run).
        #expect(elapsed < .seconds(4), "a task waited \(elapsed) for a thread")
    }

    @Test("librdkafka configuration errors surface as Swift errors with librdkafka's message")
    func configurationError() throws {
        var configuration = TestServices.kafka()
        configuration.additional = ["no.such.property": "1"]
        #expect {
            _ = try KafkaProducer(configuration: configuration, logger: logger)
        } throws: { error in
            guard let error = error as? KafkaError else { return false }
            return error.kind == .configuration && error.message.contains("no.such.property")
        }
    }
}
