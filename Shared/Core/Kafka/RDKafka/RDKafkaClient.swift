import CRdKafka
import Logging

/// Owns one `rd_kafka_t` handle. Every `rd_kafka_*` call of the wrapper goes through this type or its
/// siblings in this folder; nothing above `RDKafka/` sees a C type. Its calls block; async code runs them
/// through `run`, on the handle's own queue.
final class RDKafkaClient: @unchecked Sendable {
    enum Role: String { case producer, consumer }

    let handle: OpaquePointer
    /// Where this handle's blocking calls run when async code asks (`run`): serial for a consumer.
    private let queue: RDKafkaQueue
    /// Strong reference to the object librdkafka's callbacks reach through the opaque pointer.
    private let callbackContext: RDKafkaCallbackContext?

    /// Builds the handle. With a `callbackContext`, client errors are reported to it, and a producer's
    /// delivery reports or a consumer's rebalances go through it.
    init(role: Role, properties: [String: String], callbackContext: RDKafkaCallbackContext? = nil) throws {
        let conf = rd_kafka_conf_new()!
        for (key, value) in properties.sorted(by: { $0.key < $1.key }) {
            var errstr = [CChar](repeating: 0, count: 512)
            if rd_kafka_conf_set(conf, key, value, &errstr, errstr.count) != RD_KAFKA_CONF_OK {
                rd_kafka_conf_destroy(conf)
                // A refused password (sasl.password, ssl.key.password) is named, never shown.
                let shown = key.hasSuffix(".password") ? "(hidden)" : value
                throw KafkaError(.configuration, "\(key)=\(shown): \(String(cBuffer: errstr))")
            }
        }
        if let callbackContext {
            rd_kafka_conf_set_opaque(conf, Unmanaged.passUnretained(callbackContext).toOpaque())
            RDKafkaCallbackContext.installErrorCallback(on: conf)
            switch role {
            case .producer: RDKafkaCallbackContext.installDeliveryCallback(on: conf)
            case .consumer: RDKafkaCallbackContext.installRebalanceCallback(on: conf)
            }
        }
        var errstr = [CChar](repeating: 0, count: 512)
        let type = role == .producer ? RD_KAFKA_PRODUCER : RD_KAFKA_CONSUMER
        // rd_kafka_new takes ownership of conf only on success.
        guard let handle = rd_kafka_new(type, conf, &errstr, errstr.count) else {
            rd_kafka_conf_destroy(conf)
            throw KafkaError(.clientCreation, String(cBuffer: errstr))
        }
        // A consumer's callbacks and messages all come through rd_kafka_consumer_poll.
        if role == .consumer { rd_kafka_poll_set_consumer(handle) }
        self.handle = handle
        self.callbackContext = callbackContext
        queue = RDKafkaQueue(label: "kafka-\(role.rawValue)-\(properties["client.id"] ?? "")", serial: role == .consumer)
    }

    deinit {
        // rd_kafka_destroy waits for librdkafka's threads (and closes a consumer still open): on the queue,
        // after the calls already queued, with the callbacks' context kept alive until it returned.
        let handle = UncheckedSendable(value: handle)
        let callbackContext = callbackContext
        queue.async { withExtendedLifetime(callbackContext) { rd_kafka_destroy(handle.value) } }
    }

    /// Runs blocking calls of this handle on its queue; the caller waits without holding its thread.
    func run<T: Sendable>(_ body: @escaping @Sendable (RDKafkaClient) throws -> T) async throws -> T {
        try await queue.run { try body(self) }
    }

    /// librdkafka before 2.3 mis-parses newer brokers' ApiVersion responses (tansu among them): say so plainly.
    static func checkLibraryVersion(logger: Logger) {
        if rd_kafka_version() < 0x0203_0000 {
            logger.warning("librdkafka \(String(cString: rd_kafka_version_str())) is loaded; 2.3 or later is needed to talk to current brokers. Put a newer librdkafka.so.1 first on LD_LIBRARY_PATH (make up and make test use .local/lib).")
        }
    }

    /// Serves queued callbacks (delivery reports, logs, errors); blocks up to `timeoutMilliseconds`.
    /// Returns how many events were served.
    @discardableResult
    func poll(timeoutMilliseconds: Int32) -> Int {
        Int(rd_kafka_poll(handle, timeoutMilliseconds))
    }

    func flush(timeoutMilliseconds: Int32) throws {
        let err = rd_kafka_flush(handle, timeoutMilliseconds)
        if err != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(code: err, context: "flush") }
    }

    /// Fails every message queued or in flight with a purge error (delivered by the next `poll`), so they can be
    /// produced again on another handle. Acknowledgements still due for them are void.
    func purgeAll() {
        _ = rd_kafka_purge(handle, Int32(RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT))
    }

    /// The fatal error that made this handle unusable, if any.
    var fatalError: KafkaError? {
        var errstr = [CChar](repeating: 0, count: 512)
        let code = rd_kafka_fatal_error(handle, &errstr, errstr.count)
        guard code != RD_KAFKA_RESP_ERR_NO_ERROR else { return nil }
        return KafkaError(.librdkafka(code: code.rawValue), "fatal: \(String(cBuffer: errstr))")
    }

    /// Moves the fetch position of assigned partitions (a consumer's), dropping what was prefetched for them.
    func seek(_ offsets: [KafkaTopicPartition: Int64], timeoutMilliseconds: Int32) throws {
        let list = RDKafkaTopicPartitionList(offsets)
        if let error = list.withPointer({ rd_kafka_seek_partitions(handle, $0, timeoutMilliseconds) }) {
            throw Self.consume(error, context: "seek")
        }
        for element in list.elements where element.error != RD_KAFKA_RESP_ERR_NO_ERROR {
            throw KafkaError(code: element.error, context: "seek \(element.partition)")
        }
    }

    /// Number of messages handed to librdkafka and not yet acknowledged or failed.
    var outstandingCount: Int { Int(rd_kafka_outq_len(handle)) }

    /// Queues one message; its delivery report arrives through the `dr_msg_cb` with `opaque` as `_private`.
    ///
    /// librdkafka is not given a copy: it points at the message's key and value bytes where they are, so the
    /// caller must keep `message` (its buffers, unmodified) alive until that delivery report. `KafkaProducer` does:
    /// the `PendingDelivery` behind `opaque` holds the messages until every report arrived.
    func produce(_ message: KafkaOutgoingMessage, opaque: UnsafeMutableRawPointer) throws {
        try produce(topic: message.topic, partition: message.partition, key: message.key, value: message.value,
                    headers: message.headers, opaque: opaque)
    }

    private func produce(topic: String, partition: Int32?, key: ArraySlice<UInt8>?, value: ArraySlice<UInt8>,
                 headers: [(String, [UInt8])], opaque: UnsafeMutableRawPointer) throws {
        try topic.withCString { topicPointer in
            try value.withUnsafeBytes { valueBytes in
                try (key ?? []).withUnsafeBytes { keyBytes in
                    // At most seven fields, on the stack: this runs for every message.
                    try withUnsafeTemporaryAllocation(of: rd_kafka_vu_t.self, capacity: 7) { fields in
                        var count = 0
                        func add(_ type: rd_kafka_vtype_t, _ set: (inout rd_kafka_vu_t) -> Void) {
                            var vu = rd_kafka_vu_t()
                            vu.vtype = type
                            set(&vu)
                            fields.initializeElement(at: count, to: vu)
                            count += 1
                        }
                        add(RD_KAFKA_VTYPE_TOPIC) { $0.u.cstr = topicPointer }
                        add(RD_KAFKA_VTYPE_VALUE) {
                            $0.u.mem.ptr = UnsafeMutableRawPointer(mutating: valueBytes.baseAddress)
                            $0.u.mem.size = valueBytes.count
                        }
                        if key != nil {
                            add(RD_KAFKA_VTYPE_KEY) {
                                $0.u.mem.ptr = UnsafeMutableRawPointer(mutating: keyBytes.baseAddress)
                                $0.u.mem.size = keyBytes.count
                            }
                        }
                        if let partition { add(RD_KAFKA_VTYPE_PARTITION) { $0.u.i32 = partition } }
                        // No RD_KAFKA_MSG_F_COPY: see `produce(_:opaque:)`. The buffers' storage lives on the heap
                        // and stays where it is while they are alive and unmodified.
                        add(RD_KAFKA_VTYPE_MSGFLAGS) { $0.u.i = 0 }
                        add(RD_KAFKA_VTYPE_OPAQUE) { $0.u.ptr = opaque }
                        // librdkafka owns the headers list once the message is accepted.
                        var list: OpaquePointer?
                        if !headers.isEmpty {
                            let headerList = rd_kafka_headers_new(headers.count)!
                            for (name, value) in headers {
                                _ = value.withUnsafeBytes { rd_kafka_header_add(headerList, name, -1, $0.baseAddress, $0.count) }
                            }
                            add(RD_KAFKA_VTYPE_HEADERS) { $0.u.headers = headerList }
                            list = headerList
                        }
                        if let error = rd_kafka_produceva(handle, fields.baseAddress, count) {
                            if let list { rd_kafka_headers_destroy(list) }
                            throw Self.consume(error, context: "produce to \(topic)")
                        }
                    }
                }
            }
        }
    }

    static func consume(_ error: OpaquePointer, context: String) -> KafkaError {
        let code = rd_kafka_error_code(error)
        let text = String(cString: rd_kafka_error_string(error))
        rd_kafka_error_destroy(error)
        return KafkaError(.librdkafka(code: code.rawValue), "\(context): \(text)")
    }

    /// Partition count of each named topic, from the broker's metadata.
    func partitionCounts(topics: [String], timeoutMilliseconds: Int32) throws -> [String: Int] {
        var metadata: UnsafePointer<rd_kafka_metadata>?
        let err = rd_kafka_metadata(handle, 1, nil, &metadata, timeoutMilliseconds)
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR, let metadata else {
            throw KafkaError(code: err, context: "metadata")
        }
        defer { rd_kafka_metadata_destroy(metadata) }
        var result: [String: Int] = [:]
        let wanted = Set(topics)
        for index in 0..<Int(metadata.pointee.topic_cnt) {
            let topic = metadata.pointee.topics[index]
            let name = String(cString: topic.topic)
            if wanted.contains(name), topic.err == RD_KAFKA_RESP_ERR_NO_ERROR {
                result[name] = Int(topic.partition_cnt)
            }
        }
        return result
    }

    /// Low and high watermark offsets of one partition, asked of the broker.
    func watermarks(topic: String, partition: Int32, timeoutMilliseconds: Int32) throws -> (low: Int64, high: Int64) {
        var low: Int64 = 0
        var high: Int64 = 0
        let err = rd_kafka_query_watermark_offsets(handle, topic, partition, &low, &high, timeoutMilliseconds)
        if err != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(code: err, context: "watermarks of \(topic)[\(partition)]") }
        return (low, high)
    }

    /// A topic's id, which changes when the topic is deleted and made again under its name; nil when the
    /// loaded librdkafka (before 2.3) or the broker has no topic ids. Throws for a missing topic or a failed request.
    func topicId(topic: String, timeoutMilliseconds: Int32) throws -> KafkaTopicId? {
        var most: Int64 = 0
        var least: Int64 = 0
        let result = itour_rd_kafka_topic_id(handle, topic, timeoutMilliseconds, &most, &least)
        if result == Int32.min { return nil }
        if result != 0 { throw KafkaError(code: rd_kafka_resp_err_t(result), context: "id of topic \(topic)") }
        return most == 0 && least == 0 ? nil : KafkaTopicId(most: most, least: least)
    }

    /// The configuration entries the broker reports for a topic (DescribeConfigs), by name. A broker may report only
    /// what was set on the topic (tansu) or nothing: an entry missing means the broker did not say.
    func topicConfig(topic: String, timeoutMilliseconds: Int32) throws -> [String: String] {
        guard let resource = rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, topic) else {
            throw KafkaError(.configuration, "config of topic \(topic): not a resource name")
        }
        defer { rd_kafka_ConfigResource_destroy(resource) }
        return try adminRequest(RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS, context: "config of topic \(topic)", timeoutMilliseconds: timeoutMilliseconds,
                                request: { options, queue in
                                    var resources: [OpaquePointer?] = [resource]
                                    resources.withUnsafeMutableBufferPointer { rd_kafka_DescribeConfigs(handle, $0.baseAddress, $0.count, options, queue) }
                                }) { event in
            var entries: [String: String] = [:]
            var resourceCount = 0
            guard let result = rd_kafka_event_DescribeConfigs_result(event),
                  let described = rd_kafka_DescribeConfigs_result_resources(result, &resourceCount) else { return entries }
            for index in 0..<resourceCount {
                guard let described = described[index] else { continue }
                let err = rd_kafka_ConfigResource_error(described)
                if err != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(code: err, context: "config of topic \(topic)") }
                var entryCount = 0
                guard let configs = rd_kafka_ConfigResource_configs(described, &entryCount) else { continue }
                for entryIndex in 0..<entryCount {
                    guard let entry = configs[entryIndex], let name = rd_kafka_ConfigEntry_name(entry) else { continue }
                    if let value = rd_kafka_ConfigEntry_value(entry) { entries[String(cString: name)] = String(cString: value) }
                }
            }
            return entries
        }
    }

    /// Creates topics; an existing topic is not an error.
    func createTopics(_ specs: [(name: String, partitions: Int, config: [String: String])], timeoutMilliseconds: Int32) throws {
        guard !specs.isEmpty else { return }
        var newTopics: [OpaquePointer?] = []
        defer { for topic in newTopics { rd_kafka_NewTopic_destroy(topic) } }
        for spec in specs {
            var errstr = [CChar](repeating: 0, count: 512)
            guard let topic = rd_kafka_NewTopic_new(spec.name, Int32(spec.partitions), -1, &errstr, errstr.count) else {
                throw KafkaError(.configuration, "topic \(spec.name): \(String(cBuffer: errstr))")
            }
            for (key, value) in spec.config {
                _ = rd_kafka_NewTopic_set_config(topic, key, value)
            }
            newTopics.append(topic)
        }
        try topicAdmin(RD_KAFKA_ADMIN_OP_CREATETOPICS, context: "create topic", tolerating: RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS,
                       timeoutMilliseconds: timeoutMilliseconds,
                       request: { options, queue in
                           newTopics.withUnsafeMutableBufferPointer { rd_kafka_CreateTopics(handle, $0.baseAddress, $0.count, options, queue) }
                       },
                       results: { event, count in rd_kafka_event_CreateTopics_result(event).flatMap { rd_kafka_CreateTopics_result_topics($0, count) } })
    }

    /// Deletes topics (operators' and tests' tool: the services never delete one); a missing topic is not an error.
    func deleteTopics(_ names: [String], timeoutMilliseconds: Int32) throws {
        guard !names.isEmpty else { return }
        var topics: [OpaquePointer?] = names.map { rd_kafka_DeleteTopic_new($0) }
        defer { for topic in topics { rd_kafka_DeleteTopic_destroy(topic) } }
        try topicAdmin(RD_KAFKA_ADMIN_OP_DELETETOPICS, context: "delete topic", tolerating: RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART,
                       timeoutMilliseconds: timeoutMilliseconds,
                       request: { options, queue in
                           topics.withUnsafeMutableBufferPointer { rd_kafka_DeleteTopics(handle, $0.baseAddress, $0.count, options, queue) }
                       },
                       results: { event, count in rd_kafka_event_DeleteTopics_result(event).flatMap { rd_kafka_DeleteTopics_result_topics($0, count) } })
    }

    /// One topic admin request: `request` issues it with the options and a reply queue, `results` reads the
    /// per-topic results from the reply; each topic's error other than `tolerated` is thrown.
    private func topicAdmin(_ operation: rd_kafka_admin_op_t, context: String, tolerating tolerated: rd_kafka_resp_err_t,
                            timeoutMilliseconds: Int32, request: (OpaquePointer?, OpaquePointer?) -> Void,
                            results: (OpaquePointer, UnsafeMutablePointer<Int>) -> UnsafeMutablePointer<OpaquePointer?>?) throws {
        try adminRequest(operation, context: context, timeoutMilliseconds: timeoutMilliseconds, request: request) { event in
            var count = 0
            guard let topics = results(event, &count) else { return }
            for index in 0..<count {
                let err = rd_kafka_topic_result_error(topics[index])
                if err != RD_KAFKA_RESP_ERR_NO_ERROR && err != tolerated {
                    let name = String(cString: rd_kafka_topic_result_name(topics[index]))
                    let text = rd_kafka_topic_result_error_string(topics[index]).map { String(cString: $0) } ?? ""
                    throw KafkaError(.librdkafka(code: err.rawValue), "\(context) \(name): \(text)")
                }
            }
        }
    }

    /// One admin request: `request` issues it with the options and a reply queue; `read` reads the reply event (an
    /// error of the whole request is thrown first). An operation timeout is refused, harmlessly, by requests without one.
    private func adminRequest<Result>(_ operation: rd_kafka_admin_op_t, context: String, timeoutMilliseconds: Int32,
                                      request: (OpaquePointer?, OpaquePointer?) -> Void,
                                      read: (OpaquePointer) throws -> Result) throws -> Result {
        let queue = rd_kafka_queue_new(handle)
        defer { rd_kafka_queue_destroy(queue) }
        let options = rd_kafka_AdminOptions_new(handle, operation)
        defer { rd_kafka_AdminOptions_destroy(options) }
        var errstr = [CChar](repeating: 0, count: 512)
        _ = rd_kafka_AdminOptions_set_operation_timeout(options, timeoutMilliseconds, &errstr, errstr.count)
        _ = rd_kafka_AdminOptions_set_request_timeout(options, timeoutMilliseconds, &errstr, errstr.count)
        request(options, queue)
        guard let event = rd_kafka_queue_poll(queue, timeoutMilliseconds + 1_000) else {
            throw KafkaError(.librdkafka(code: RD_KAFKA_RESP_ERR__TIMED_OUT.rawValue), "\(context): timed out")
        }
        defer { rd_kafka_event_destroy(event) }
        let eventError = rd_kafka_event_error(event)
        if eventError != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(code: eventError, context: context) }
        return try read(event)
    }
}

extension String {
    /// The text of a NUL-terminated C string buffer (librdkafka's error strings).
    init(cBuffer: [CChar]) {
        self.init(decoding: cBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
