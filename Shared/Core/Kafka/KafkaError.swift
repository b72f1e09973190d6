import CRdKafka

/// An error from librdkafka or from this wrapper, carrying librdkafka's code and message.
public struct KafkaError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable, Equatable {
        /// librdkafka rejected a configuration property.
        case configuration
        /// Creating the client handle failed.
        case clientCreation
        /// A call to librdkafka returned an error code.
        case librdkafka(code: Int32)
        /// The client was closed before the operation finished.
        case closed
        /// A message could not be encoded or decoded.
        case message
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    init(code: rd_kafka_resp_err_t, context: String) {
        let text = String(cString: rd_kafka_err2str(code))
        self.init(.librdkafka(code: code.rawValue), "\(context): \(text)")
    }

    /// True when the broker never acknowledged in time (unreachable or paused broker).
    public var isTimeout: Bool {
        if case .librdkafka(let code) = kind {
            return code == RD_KAFKA_RESP_ERR__MSG_TIMED_OUT.rawValue || code == RD_KAFKA_RESP_ERR__TIMED_OUT.rawValue
                || code == RD_KAFKA_RESP_ERR__TRANSPORT.rawValue || code == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN.rawValue
        }
        return false
    }

    /// The handle failed for good (librdkafka's fatal error): only a new one helps.
    public var isFatal: Bool {
        if case .librdkafka(let code) = kind { return code == RD_KAFKA_RESP_ERR__FATAL.rawValue }
        return false
    }

    /// Delivery errors after which a message is produced again on a new handle: purged by a replacement,
    /// or failed with its handle.
    static func isReplaceable(_ code: rd_kafka_resp_err_t) -> Bool {
        code == RD_KAFKA_RESP_ERR__PURGE_QUEUE || code == RD_KAFKA_RESP_ERR__PURGE_INFLIGHT || code == RD_KAFKA_RESP_ERR__FATAL
    }

    public var description: String { "KafkaError(\(kind)): \(message)" }
}
