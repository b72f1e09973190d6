import Foundation
import PostgresNIO
import Shared
import TestSupport
@testable import Catalog

/// A command handler as catalog runs one: on a fresh database, with its own topics on the real broker.
enum HandlerFixture {
    static func with<T: Sendable>(_ body: @Sendable (CatalogCommandHandler, PostgresClient) async throws -> T) async throws -> T {
        let database = try await TestServices.freshDatabase()
        let kafka = TestServices.kafka()
        let producer = try KafkaProducer(configuration: kafka, logger: TestServices.logger)
        try await producer.createTopics(Topic.all)
        do {
            let result = try await TestServices.withPostgres(database) { client in
                try await CatalogMigrations.runner.run(on: client, logger: TestServices.logger)
                let handler = CatalogCommandHandler(repository: PostgresCatalogRepository(client: client, logger: TestServices.logger), topics: kafka,
                                                    eventPartitions: { 4 }, producer: producer, logger: TestServices.logger)
                return try await body(handler, client)
            }
            await producer.shutdown()
            return result
        } catch {
            await producer.shutdown()
            throw error
        }
    }
}

/// Reads a test's `catalog.events` from the beginning: each call gives what arrived since the last.
final class CatalogEventsReader: Sendable {
    private let consumer: KafkaConsumer

    init(_ configuration: KafkaConfiguration) async throws {
        consumer = try await KafkaConsumer.open(configuration: configuration,
                                                subscription: .allPartitions(topics: [configuration.topic(Topic.catalogEvents)], from: .beginning),
                                                logger: TestServices.logger)
    }

    /// The messages that arrived since the last call, once none came for half a second.
    func next() async throws -> [KafkaMessage] {
        var messages: [KafkaMessage] = []
        while true {
            let batch = try await consumer.poll(maxMessages: 500, timeout: .milliseconds(500))
            if batch.isEmpty { return messages }
            messages += batch
        }
    }

    /// The snapshot chunks among `messages`, in the order catalog numbered them (their keys), with their partitions.
    static func chunks(_ messages: [KafkaMessage]) throws -> [(number: Int, partition: Int32, bytes: Int, event: CatalogEvent)] {
        try messages.compactMap { message -> (Int, Int32, Int, CatalogEvent)? in
            guard let key = message.keyString, key.hasPrefix("catalog.snapshot-chunk/"), let number = Int(key.dropFirst("catalog.snapshot-chunk/".count)) else { return nil }
            return (number, message.partition, message.value.count, try EnvelopeDecoder.decode(CatalogEvent.self, from: message.value).data)
        }.sorted { $0.0 < $1.0 }
    }

    func close() async { await consumer.close() }
}
