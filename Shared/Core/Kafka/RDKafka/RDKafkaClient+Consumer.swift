import CRdKafka

/// A consumer handle's calls. All but `subscribe` and `assign` may wait on the broker.
extension RDKafkaClient {
    /// The logical offset "the partition's first message".
    static let beginningOffset = Int64(RD_KAFKA_OFFSET_BEGINNING)

    /// Joins the consumer group for `topics`; partitions come through the rebalance callback.
    func subscribe(topics: [String]) throws {
        let list = RDKafkaTopicPartitionList(capacity: topics.count)
        for topic in topics {
            list.add(KafkaTopicPartition(topic: topic, partition: RD_KAFKA_PARTITION_UA), offset: Int64(RD_KAFKA_OFFSET_INVALID))
        }
        let err = list.withPointer { rd_kafka_subscribe(handle, $0) }
        if err != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(code: err, context: "subscribe") }
    }

    /// Reads exactly these partitions, from these offsets, without a group.
    func assign(_ offsets: [KafkaTopicPartition: Int64]) throws {
        let err = RDKafkaTopicPartitionList(offsets).withPointer { rd_kafka_assign(handle, $0) }
        if err != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(code: err, context: "assign") }
    }

    /// Waits up to `timeoutMilliseconds` for the next message or consumer error (serving callbacks, rebalances
    /// among them, meanwhile); nil when neither came.
    func consumerPoll(timeoutMilliseconds: Int32) -> Result<KafkaMessage, KafkaError>? {
        guard let raw = rd_kafka_consumer_poll(handle, timeoutMilliseconds) else { return nil }
        defer { rd_kafka_message_destroy(raw) }
        if raw.pointee.err != RD_KAFKA_RESP_ERR_NO_ERROR { return .failure(KafkaError(code: raw.pointee.err, context: "consume")) }
        return .success(KafkaMessage(raw))
    }

    /// Commits the next offset to read per partition; returns once the broker stored them.
    func commit(_ offsets: [KafkaTopicPartition: Int64]) throws {
        let err = RDKafkaTopicPartitionList(offsets).withPointer { rd_kafka_commit(handle, $0, 0) }
        if err != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(code: err, context: "commit") }
    }

    /// The next offset the consumer will read in each partition; negative where it has none yet.
    func positions(_ partitions: [KafkaTopicPartition]) -> [KafkaTopicPartition: Int64] {
        let list = RDKafkaTopicPartitionList(capacity: partitions.count)
        for partition in partitions { list.add(partition, offset: Int64(RD_KAFKA_OFFSET_INVALID)) }
        _ = list.withPointer { rd_kafka_position(handle, $0) }
        return Dictionary(list.elements.map { ($0.partition, $0.offset) }, uniquingKeysWith: { first, _ in first })
    }

    /// Leaves the group (its partitions move to other members at once) and stops fetching.
    func closeConsumer() {
        _ = rd_kafka_consumer_close(handle)
    }
}

extension KafkaMessage {
    /// Copies a message out of librdkafka's (which the caller still destroys).
    init(_ pointer: UnsafeMutablePointer<rd_kafka_message_t>) {
        let raw = pointer.pointee
        var headers: [String: [UInt8]] = [:]
        var list: OpaquePointer?
        if rd_kafka_message_headers(pointer, &list) == RD_KAFKA_RESP_ERR_NO_ERROR, let list {
            var index = 0
            var name: UnsafePointer<CChar>?
            var value: UnsafeRawPointer?
            var size = 0
            while rd_kafka_header_get_all(list, index, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR {
                if let name {
                    headers[String(cString: name)] = value.map { Array(UnsafeRawBufferPointer(start: $0, count: size)) } ?? []
                }
                index += 1
            }
        }
        self.init(
            topic: String(cString: rd_kafka_topic_name(raw.rkt)),
            partition: raw.partition,
            offset: raw.offset,
            key: raw.key.map { Array(UnsafeRawBufferPointer(start: $0, count: raw.key_len)) },
            value: raw.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: raw.len)) } ?? [],
            headers: headers
        )
    }
}

extension RDKafkaClient {
    /// A consumer handle's read of the first message at each given offset of `topic` (partition → offset, each a
    /// partition's start): the time each was appended or created (ms since 1970, the message's timestamp), by
    /// partition. Throws when a partition's message did not come within the timeout; the assignment is dropped after.
    func firstTimestamps(topic: String, starts: [Int32: Int64], timeoutMilliseconds: Int32) throws -> [Int32: Int64] {
        try assign(Dictionary(uniqueKeysWithValues: starts.map { (KafkaTopicPartition(topic: topic, partition: $0.key), $0.value) }))
        defer { _ = rd_kafka_assign(handle, nil) }
        var found: [Int32: Int64] = [:]
        let deadline = ContinuousClock.now + .milliseconds(Int(timeoutMilliseconds))
        while found.count < starts.count, ContinuousClock.now < deadline {
            guard let raw = rd_kafka_consumer_poll(handle, 200) else { continue }
            defer { rd_kafka_message_destroy(raw) }
            let partition = raw.pointee.partition
            guard raw.pointee.err == RD_KAFKA_RESP_ERR_NO_ERROR, found[partition] == nil else { continue }
            var type = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE
            let timestamp = rd_kafka_message_timestamp(raw, &type)
            if type != RD_KAFKA_TIMESTAMP_NOT_AVAILABLE { found[partition] = timestamp }
        }
        if found.count < starts.count {
            throw KafkaError(.librdkafka(code: RD_KAFKA_RESP_ERR__TIMED_OUT.rawValue),
                             "first messages of \(topic): \(found.count) of \(starts.count) partitions answered in time")
        }
        return found
    }
}
