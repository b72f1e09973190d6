import Foundation
import Logging
import Metrics
import ServiceLifecycle
import Shared
import Synchronization

/// Reads `catalog.commands` in the catalog consumer group and hands each command to the handler.
/// Offsets are committed after the commands' transactions committed; a redelivered command is
/// recognised by its id and changes nothing.
///
/// The group consumer is made in `run`, after start-up created the topics: a consumer that joins its group
/// before its topic exists gets no partitions until librdkafka's next metadata refresh (minutes later).
final class CommandConsumer: Service, Sendable {
    private let makeConsumer: @Sendable () throws -> KafkaConsumer
    private let consumer = Mutex<KafkaConsumer?>(nil)
    let handler: CatalogCommandHandler
    let relay: OutboxRelay
    let deadLetters: DeadLetterSink
    let logger: Logger
    private let handled = Counter(label: "itour_commands_handled_total")

    init(makeConsumer: @escaping @Sendable () throws -> KafkaConsumer, handler: CatalogCommandHandler, relay: OutboxRelay,
         deadLetters: DeadLetterSink, logger: Logger) {
        self.makeConsumer = makeConsumer
        self.handler = handler
        self.relay = relay
        self.deadLetters = deadLetters
        self.logger = logger
    }

    /// Records the group consumer's lag (before a metrics scrape).
    func recordLag(consumerName: String) async {
        await consumer.withLock({ $0 })?.recordLag(consumerName: consumerName)
    }

    func run() async throws {
        let consumer = try makeConsumer()
        self.consumer.withLock { $0 = consumer }
        try await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                let messages = try await consumer.poll(maxMessages: 100, timeout: .milliseconds(500))
                guard !messages.isEmpty else { continue }
                var offsets: [KafkaTopicPartition: Int64] = [:]
                for message in messages {
                    try await self.process(message)
                    offsets[message.topicPartition] = message.offset + 1
                }
                self.relay.notify()
                try await consumer.commit(offsets: offsets)
            }
        }
        await consumer.close()
    }

    /// Handles one message. Bad messages are dead-lettered; a database failure is retried, never skipped.
    private func process(_ message: KafkaMessage) async throws {
        let envelope: Envelope<CatalogCommand>
        do {
            envelope = try EnvelopeDecoder.decode(CatalogCommand.self, from: message.value)
        } catch {
            await deadLetters.send(message, reason: error.description)
            return
        }
        guard envelope.type == envelope.data.action.rawValue else {
            await deadLetters.send(message, reason: "envelope type \(envelope.type) does not match action \(envelope.data.action.rawValue)")
            return
        }
        var attempt = 0
        while true {
            do {
                let result = try await handler.handle(envelope.data, requestId: message.header(MessageHeader.requestId))
                handled.increment()
                logger.info("command handled", metadata: [
                    "commandId": "\(envelope.data.commandId)", "action": "\(envelope.data.action.rawValue)",
                    "outcome": "\(result.outcome.rawValue)", "request_id": "\(message.header(MessageHeader.requestId) ?? "-")",
                ])
                return
            } catch {
                attempt += 1
                logger.error("command failed; retrying", metadata: ["commandId": "\(envelope.data.commandId)", "error": "\(String(reflecting: error))", "attempt": "\(attempt)"])
                if Task.isCancelled { throw CancellationError() }
                try await Task.sleep(for: .milliseconds(min(5_000, 100 * (1 << min(attempt, 6)))))
            }
        }
    }
}
