import CRdKafka

/// `KafkaError` from librdkafka's error codes: the codes are read only here.
extension KafkaError {
    init(code: rd_kafka_resp_err_t, context: String) {
        let text = String(cString: rd_kafka_err2str(code))
        self.init(.librdkafka(code: code.rawValue), "\(context): \(text)")
    }

    /// A message whose delivery timeout ran out before any handle stored it.
    static let deliveryTimedOut = KafkaError(.librdkafka(code: RD_KAFKA_RESP_ERR__MSG_TIMED_OUT.rawValue),
                                             "delivery: not acknowledged within the delivery timeout")

    /// True when the broker never acknowledged in time (unreachable or paused broker).
    public var isTimeout: Bool {
        isCode(RD_KAFKA_RESP_ERR__MSG_TIMED_OUT, RD_KAFKA_RESP_ERR__TIMED_OUT, RD_KAFKA_RESP_ERR__TRANSPORT, RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN)
    }

    /// The handle failed for good (librdkafka's fatal error): only a new one helps.
    public var isFatal: Bool { isCode(RD_KAFKA_RESP_ERR__FATAL) }

    private func isCode(_ codes: rd_kafka_resp_err_t...) -> Bool {
        if case .librdkafka(let code) = kind { return codes.contains { $0.rawValue == code } }
        return false
    }

    /// Delivery errors after which a message is produced again on a new handle: purged by a replacement,
    /// or failed with its handle.
    static func isReplaceable(_ code: rd_kafka_resp_err_t) -> Bool {
        code == RD_KAFKA_RESP_ERR__PURGE_QUEUE || code == RD_KAFKA_RESP_ERR__PURGE_INFLIGHT || code == RD_KAFKA_RESP_ERR__FATAL
    }
}
