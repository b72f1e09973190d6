import CRdKafka
import Logging
import Synchronization

/// What librdkafka's C callbacks reach through `rd_kafka_conf_set_opaque`: a logger for client errors and,
/// for consumers, the hook that picks starting offsets when partitions are assigned.
final class RDKafkaCallbackContext: @unchecked Sendable {
    let logger: Logger
    let assignmentOffsets: (@Sendable ([KafkaTopicPartition]) -> [KafkaTopicPartition: KafkaConsumer.AssignedStart])?
    let assignment = Mutex<[KafkaTopicPartition]>([])
    /// Per assigned partition, the next offset the consumer will read as far as it knows: the offset it
    /// was assigned at (when a real one, not BEGINNING/END/STORED), then each message read, then a reset.
    let positions = Mutex<[KafkaTopicPartition: KnownPosition]>([:])
    /// Set when every broker was down: the log may have changed under the client (a memory-only broker
    /// restarted empty), so its positions are checked again once a broker answers.
    let brokersWereDown = Flag(false)
    /// Set by a producer's delivery report of a stored message; cleared by the poll loop that reads it.
    let acknowledged = Flag(false)
    /// Set by a producer's delivery report of a failed message; cleared likewise.
    let deliveryFailed = Flag(false)
    /// Set on a fatal error: the handle is unusable and must be replaced.
    let fatal = Flag(false)
    /// Messages whose delivery failed because their handle was purged or failed fatally: the opaque
    /// pointers, each still holding its batch's retain, to be produced again on a new handle.
    let requeued = Mutex<[RequeuedMessage]>([])

    init(logger: Logger, assignmentOffsets: (@Sendable ([KafkaTopicPartition]) -> [KafkaTopicPartition: KafkaConsumer.AssignedStart])? = nil) {
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
            if code == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN.rawValue { context.brokersWereDown.value = true }
            if code == RD_KAFKA_RESP_ERR__FATAL.rawValue { context.fatal.value = true }
            context.logger.warning("kafka client error", metadata: ["code": "\(code)", "reason": "\(text)"])
        }
    }

    /// Installs the delivery report callback of a producer: each report completes its message's slot in a
    /// `PendingDelivery`, or keeps the message to be produced again on a new handle.
    static func installDeliveryCallback(on conf: OpaquePointer) {
        rd_kafka_conf_set_dr_msg_cb(conf) { _, message, opaque in
            guard let pointer = message, let slot = pointer.pointee._private, let context = RDKafkaCallbackContext.from(opaque) else { return }
            let message = pointer.pointee
            if message.err == RD_KAFKA_RESP_ERR_NO_ERROR {
                context.acknowledged.value = true
                PendingDelivery.delivered(slot, partition: message.partition, offset: message.offset)
            } else if KafkaError.isReplaceable(message.err) {
                // Purged by a replacement, or failed with the handle: kept (with its retain) to go again.
                if message.err == RD_KAFKA_RESP_ERR__FATAL { context.fatal.value = true }
                context.requeued.withLock { $0.append(RequeuedMessage(opaque: slot)) }
            } else {
                context.deliveryFailed.value = true
                PendingDelivery.failed(slot, KafkaError(code: message.err, context: "delivery"))
            }
        }
    }

    /// Installs the rebalance callback: assigns partitions, at the offsets the hook chooses when there is one.
    static func installRebalanceCallback(on conf: OpaquePointer) {
        rd_kafka_conf_set_rebalance_cb(conf) { handle, err, partitions, opaque in
            guard let context = RDKafkaCallbackContext.from(opaque), let partitions else { return }
            if err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS {
                let list = RDKafkaTopicPartitionList(borrowing: partitions)
                let assigned = list.elements.map(\.partition)
                var starts: [KafkaTopicPartition: KafkaConsumer.AssignedStart] = [:]
                if let hook = context.assignmentOffsets {
                    starts = hook(assigned)
                    list.setOffsets(starts.mapValues(\.offset))
                }
                context.assignment.withLock { $0 = assigned }
                context.positions.withLock {
                    $0 = starts.filter { $0.value.offset >= 0 }.mapValues { KnownPosition(offset: $0.offset, seenInLog: false, stored: $0.stored) }
                }
                context.logger.info("partitions assigned", metadata: ["partitions": "\(assigned.map(\.description))"])
                rd_kafka_assign(handle, partitions)
            } else {
                context.assignment.withLock { $0 = [] }
                context.positions.withLock { $0 = [:] }
                context.logger.info("partitions revoked")
                rd_kafka_assign(handle, nil)
            }
        }
    }
}

/// A consumer's next offset, and whether the current log confirmed it (a message read from it, or the
/// log's own end or start) or it came from outside (stored offsets given at assignment).
struct KnownPosition: Sendable {
    let offset: Int64
    let seenInLog: Bool
    /// The offset stored for the partition when the position starts before it (a reader that reads a little again
    /// at assignment): the log must reach it, or it is not the log it was stored in. Kept until a message just
    /// before it is read.
    var stored: Int64? = nil
    /// librdkafka moved this partition to its new log's start since the last check: that check must not take the
    /// replaced topic's new id as a reason to read it from the start once more.
    var resetByLibrary = false

    /// The position after reading `message`'s offset.
    func reading(_ offset: Int64) -> KnownPosition {
        KnownPosition(offset: offset + 1, seenInLog: true, stored: stored.flatMap { $0 > offset + 1 ? $0 : nil }, resetByLibrary: resetByLibrary)
    }

    /// The furthest offset this position claims the log holds.
    var claimed: Int64 { Swift.max(offset, stored ?? offset) }
}

/// A message's opaque pointer while it waits to be produced again (see `RDKafkaCallbackContext.requeued`).
struct RequeuedMessage: @unchecked Sendable {
    let opaque: UnsafeMutableRawPointer
}

/// A `rd_kafka_topic_partition_list_t`, owned or borrowed.
final class RDKafkaTopicPartitionList {
    let pointer: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>
    private let owned: Bool

    init(capacity: Int) {
        pointer = rd_kafka_topic_partition_list_new(Int32(capacity))
        owned = true
    }

    convenience init(_ offsets: [KafkaTopicPartition: Int64]) {
        self.init(capacity: offsets.count)
        for (partition, offset) in offsets { add(partition, offset: offset) }
    }

    init(borrowing pointer: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>) {
        self.pointer = pointer
        owned = false
    }

    deinit {
        if owned { rd_kafka_topic_partition_list_destroy(pointer) }
    }

    /// Calls `body` with the C list, this object (which frees it) kept alive until `body` returned.
    func withPointer<T>(_ body: (UnsafeMutablePointer<rd_kafka_topic_partition_list_t>) throws -> T) rethrows -> T {
        try withExtendedLifetime(self) { try body(pointer) }
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
