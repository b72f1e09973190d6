import Foundation
import Logging
import Metrics

/// Sends a message that could not be processed to `dead-letters`, with the reason, so nothing is silently
/// dropped. If even that fails the message is logged in full.
public struct DeadLetterSink: Sendable {
    public struct Letter: Codable, Sendable {
        public let topic: String
        public let partition: Int32
        public let offset: Int64
        public let key: String?
        public let reason: String
        public let consumer: String
        /// The original bytes, as text when they are UTF-8, else base64.
        public let value: String
    }

    private let producer: KafkaProducer
    private let consumerName: String
    private let logger: Logger
    private let counter: Counter

    public init(producer: KafkaProducer, consumerName: String, logger: Logger) {
        self.producer = producer
        self.consumerName = consumerName
        self.logger = logger
        counter = Counter(label: "itour_dead_letters_total", dimensions: [("consumer", consumerName)],
                          help: "Messages a consumer could not process and sent to the dead-letters topic, by consumer.")
    }

    public func send(_ message: KafkaMessage, reason: String) async {
        counter.increment()
        let text = String(validating: message.value, as: UTF8.self) ?? Data(message.value).base64EncodedString()
        let letter = Letter(topic: message.topic, partition: message.partition, offset: message.offset, key: message.keyString,
                            reason: reason, consumer: consumerName, value: text)
        let envelope = Envelope(type: "dead-letter", source: consumerName, data: letter)
        logger.warning("dead-lettered", metadata: ["topic": "\(message.topic)", "offset": "\(message.offset)", "reason": "\(reason)"])
        do {
            try await producer.send(KafkaOutgoingMessage(topic: producer.configuration.topic(Topic.deadLetters),
                                                         key: message.keyString, value: try envelope.encoded()))
        } catch {
            logger.error("dead letter could not be sent", metadata: ["error": "\(error)", "letter": "\(text)"])
        }
    }
}
