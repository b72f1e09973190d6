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
        /// The original bytes, as text when they are UTF-8, else base64; or, when `part` is set, that part's.
        public let value: String
        /// Set when only part of the message failed (one entity of a snapshot chunk): which part.
        public let part: String?
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

    /// `part`: what of the message failed, and its bytes, when the rest of it was processed.
    public func send(_ message: KafkaMessage, part: (name: String, value: [UInt8])? = nil, reason: String) async {
        counter.increment()
        let value = part?.value ?? message.value
        let text = String(validating: value, as: UTF8.self) ?? Data(value).base64EncodedString()
        let letter = Letter(topic: message.topic, partition: message.partition, offset: message.offset, key: message.keyString,
                            reason: reason, consumer: consumerName, value: text, part: part?.name)
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
