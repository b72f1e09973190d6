import Shared
import Testing
import TestSupport
@testable import Catalog

@Suite("A command's direct sends", .stopsIfHung)
struct DirectSendsTests {
    @Test("delivered() waits for every batch sent, returns at once when none was, and throws when one failed")
    func deliveredWaitsForEveryBatch() async throws {
        let kafka = TestServices.kafka()
        let producer = try KafkaProducer(configuration: kafka, logger: TestServices.logger)
        try await producer.createTopics(Topic.all)
        let topic = kafka.topic(Topic.deadLetters)
        try await DirectSends(producer: producer).delivered()

        let sends = DirectSends(producer: producer)
        let reader = try await KafkaConsumer.open(configuration: kafka, subscription: .allPartitions(topics: [topic], from: .end),
                                                  logger: TestServices.logger)
        sends.send((0..<3).map { KafkaOutgoingMessage(topic: topic, key: "first", value: Array("a\($0)".utf8)) })
        sends.send([])
        sends.send((0..<2).map { KafkaOutgoingMessage(topic: topic, key: "second", value: Array("b\($0)".utf8)) })
        try await sends.delivered()
        // Acknowledged means on the broker: every message is there to be read.
        var read: [String] = []
        for _ in 0..<50 where read.count < 5 {
            read += try await reader.poll(maxMessages: 10, timeout: .milliseconds(200)).map { String(decoding: $0.value, as: UTF8.self) }
        }
        await reader.close()
        #expect(read.sorted() == ["a0", "a1", "a2", "b0", "b1"])

        await producer.shutdown()
        let failing = DirectSends(producer: producer)
        failing.send([KafkaOutgoingMessage(topic: topic, key: "late", value: Array("c".utf8))])
        await #expect(throws: KafkaError.self) { try await failing.delivered() }
    }
}
