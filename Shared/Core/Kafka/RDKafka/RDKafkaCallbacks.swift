import CRdKafka
import Logging
import Synchronization

/// What librdkafka's C callbacks reach through `rd_kafka_conf_set_opaque`: a logger for client errors and,
/// for consumers, the hook that picks starting offsets when partitions are assigned.
final class RDKafkaCallbackContext: @unchecked Sendable {
    let logger: Logger
    let assignmentOffsets: (@Sendable ([KafkaTopicPartition]) -> [KafkaTopicPartition: Int64])?
    let assignment = Mutex<[KafkaTopicPartition]>([])

    init(logger: Logger, assignmentOffsets: (@Sendable ([KafkaTopicPartition]) -> [KafkaTopicPartition: Int64])? = nil) {
        self.logger = logger
        self.assignmentOffsets = assignmentOffsets
    }

    static func from(_ opaque: UnsafeMutableRawPointer?) -> RDKafkaCallbackContext? {
        opaque.map { Unmanaged<RDKafkaCallbackContext>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Installs the error callback (client-level errors such as "all brokers down" become log lines).
    static func installErrorCallback(on conf: OpaquePointer) {
        rd_kafka_conf_set_error_cb(conf) { _, code, reason, opaque in
            guard let context = RDKafkaCallbackContext.from(opaque) else { return }
            let text = reason.map { String(cString: $0) } ?? ""
            context.logger.warning("kafka client error", metadata: ["code": "\(code)", "reason": "\(text)"])
        }
    }

    /// Installs the rebalance callback: assigns partitions, at the offsets the hook chooses when there is one.
    static func installRebalanceCallback(on conf: OpaquePointer) {
        rd_kafka_conf_set_rebalance_cb(conf) { handle, err, partitions, opaque in
            guard let context = RDKafkaCallbackContext.from(opaque), let partitions else { return }
            if err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS {
                let list = RDKafkaTopicPartitionList(borrowing: partitions)
                let assigned = list.elements.map(\.partition)
                if let hook = context.assignmentOffsets {
                    let offsets = hook(assigned)
                    list.setOffsets(offsets)
                }
                context.assignment.withLock { $0 = assigned }
                context.logger.info("partitions assigned", metadata: ["partitions": "\(assigned.map(\.description))"])
                rd_kafka_assign(handle, partitions)
            } else {
                context.assignment.withLock { $0 = [] }
                context.logger.info("partitions revoked")
                rd_kafka_assign(handle, nil)
            }
        }
    }
}

/// A `rd_kafka_topic_partition_list_t`, owned or borrowed.
final class RDKafkaTopicPartitionList {
    let pointer: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>
    private let owned: Bool

    init(capacity: Int) {
        pointer = rd_kafka_topic_partition_list_new(Int32(capacity))
        owned = true
    }

    init(borrowing pointer: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>) {
        self.pointer = pointer
        owned = false
    }

    deinit {
        if owned { rd_kafka_topic_partition_list_destroy(pointer) }
    }

    func add(_ partition: KafkaTopicPartition, offset: Int64) {
        let element = rd_kafka_topic_partition_list_add(pointer, partition.topic, partition.partition)!
        element.pointee.offset = offset
    }

    func setOffsets(_ offsets: [KafkaTopicPartition: Int64]) {
        for index in 0..<Int(pointer.pointee.cnt) {
            let element = pointer.pointee.elems + index
            let key = KafkaTopicPartition(topic: String(cString: element.pointee.topic), partition: element.pointee.partition)
            if let offset = offsets[key] { element.pointee.offset = offset }
        }
    }

    var elements: [(partition: KafkaTopicPartition, offset: Int64, error: rd_kafka_resp_err_t)] {
        (0..<Int(pointer.pointee.cnt)).map { index in
            let element = pointer.pointee.elems[index]
            return (KafkaTopicPartition(topic: String(cString: element.topic), partition: element.partition), element.offset, element.err)
        }
    }
}
