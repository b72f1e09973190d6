import CRdKafka
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// An idempotent (`enable.idempotence`, `acks=all`) producer whose `send` returns only once the broker
/// acknowledged every message, or throws. Run it as a `Service`: on graceful shutdown it flushes what is
/// in flight and stops its poll thread.
public final class KafkaProducer: Service, Sendable {
    private let client: RDKafkaClient
    private let pollThread: PollThread
    private let logger: Logger
    public let configuration: KafkaConfiguration

    public init(configuration: KafkaConfiguration, logger: Logger) throws {
        let context = RDKafkaCallbackContext(logger: logger)
        client = try RDKafkaClient(role: .producer, properties: configuration.producerProperties, callbackContext: context) { conf in
            RDKafkaCallbackContext.installErrorCallback(on: conf)
            rd_kafka_conf_set_dr_msg_cb(conf) { _, message, _ in
                guard let pointer = message, let opaque = pointer.pointee._private else { return }
                let message = pointer.pointee
                if message.err == RD_KAFKA_RESP_ERR_NO_ERROR {
                    PendingDelivery.delivered(opaque, partition: message.partition, offset: message.offset)
                } else {
                    PendingDelivery.failed(opaque, KafkaError(code: message.err, context: "delivery"))
                }
            }
        }
        self.configuration = configuration
        self.logger = logger
        Self.checkLibraryVersion(logger: logger)
        let client = self.client
        pollThread = PollThread(name: "kafka-producer-poll") { client.poll(timeoutMilliseconds: 100) }
    }

    /// librdkafka before 2.3 mis-parses newer brokers' ApiVersion responses (tansu among them): say so plainly.
    private static func checkLibraryVersion(logger: Logger) {
        let version = rd_kafka_version()
        if version < 0x0203_0000 {
            logger.warning("librdkafka \(String(cString: rd_kafka_version_str())) is loaded; 2.3 or later is needed to talk to current brokers. Put a newer librdkafka.so.1 first on LD_LIBRARY_PATH (make up and make test use .local/lib).")
        }
    }

    /// Sends one message and returns where the broker stored it.
    @discardableResult
    public func send(_ message: KafkaOutgoingMessage) async throws -> KafkaDeliveryReport {
        try await send([message])[0]
    }

    /// Sends messages together; returns when the broker acknowledged all of them (reports in order),
    /// or throws the first failure. A failure means some of them may still have been stored:
    /// consumers dedupe by message id.
    public func send(_ messages: [KafkaOutgoingMessage]) async throws -> [KafkaDeliveryReport] {
        try await withCheckedThrowingContinuation { continuation in
            send(messages) { continuation.resume(with: $0) }
        }
    }

    /// `send` for callers on an event loop that must not wait in a task: `completion` runs once, on
    /// librdkafka's poll thread (or at once when nothing could be queued), and must be quick.
    public func send(_ messages: [KafkaOutgoingMessage],
                     completion: @escaping @Sendable (Result<[KafkaDeliveryReport], any Error>) -> Void) {
        guard !messages.isEmpty else { return completion(.success([])) }
        guard pollThread.isRunning else { return completion(.failure(KafkaError(.closed, "producer is shut down"))) }
        let pending = PendingDelivery(topics: messages.map(\.topic), completion: completion)
        for (index, message) in messages.enumerated() {
            let opaque = pending.retainedSlot(index)
            do {
                try client.produce(topic: message.topic, partition: message.partition, key: message.key,
                                   value: message.value, headers: message.headers, opaque: opaque)
            } catch {
                // This message and the rest were never queued: release their references and fail them.
                PendingDelivery.release(opaque)
                pending.failUnsent(count: messages.count - index, error: error as? KafkaError ?? KafkaError(.message, "\(error)"))
                return
            }
        }
    }

    /// Partition count per topic, from the broker's metadata.
    public func partitionCounts(topics: [String], timeout: Duration = .seconds(5)) async throws -> [String: Int] {
        let client = self.client
        return try await runBlocking { try client.partitionCounts(topics: topics, timeoutMilliseconds: timeout.milliseconds) }
    }

    /// Creates topics with their partition counts; existing ones are left as they are.
    public func createTopics(_ topics: [KafkaTopicSpec], timeout: Duration = .seconds(10)) async throws {
        let client = self.client
        let prefix = configuration.topicPrefix
        try await runBlocking {
            try client.createTopics(topics.map { (prefix + $0.name, $0.partitions, $0.config) },
                                    timeoutMilliseconds: timeout.milliseconds)
        }
    }

    /// True when a broker answers a metadata request within the timeout.
    public func isBrokerReachable(timeout: Duration = .seconds(2)) async -> Bool {
        let client = self.client
        return (try? await runBlocking { try client.partitionCounts(topics: [], timeoutMilliseconds: timeout.milliseconds) }) != nil
    }

    public func run() async throws {
        await withGracefulShutdownHandler {
            try? await gracefulShutdown()
        } onGracefulShutdown: {}
        await shutdown()
    }

    /// Flushes in-flight messages (up to the delivery timeout) and stops polling.
    public func shutdown() async {
        let client = self.client
        let timeout = Int32(configuration.deliveryTimeoutMilliseconds)
        do {
            try await runBlocking { try client.flush(timeoutMilliseconds: timeout) }
        } catch {
            logger.error("producer flush failed", metadata: ["error": "\(error)", "outstanding": "\(client.outstandingCount)"])
        }
        pollThread.stop()
    }
}

public struct KafkaTopicSpec: Sendable {
    public let name: String
    public let partitions: Int
    public let config: [String: String]

    public init(name: String, partitions: Int, config: [String: String] = [:]) {
        self.name = name
        self.partitions = partitions
        self.config = config
    }
}

/// Collects the delivery reports of one `send` call and completes it once all arrived.
/// Each queued message's opaque pointer is the address of its slot (the batch and the message's index),
/// all slots in one allocation, and holds one retain on the batch: no object per message.
final class PendingDelivery: @unchecked Sendable {
    private struct Slot {
        let batch: Unmanaged<PendingDelivery>
        let index: Int
    }

    /// Written once in init, read-only after: the unchecked Sendable.
    private let slots: UnsafeMutableBufferPointer<Slot>

    private struct State {
        var remaining: Int
        var reports: [KafkaDeliveryReport?]
        var error: KafkaError?
        var completion: (@Sendable (Result<[KafkaDeliveryReport], any Error>) -> Void)?
    }

    private let state: Mutex<State>
    /// Each message's topic, for its report (not read back from librdkafka: a string per message).
    private let topics: [String]

    init(topics: [String], completion: @escaping @Sendable (Result<[KafkaDeliveryReport], any Error>) -> Void) {
        self.topics = topics
        state = Mutex(State(remaining: topics.count, reports: Array(repeating: nil, count: topics.count), completion: completion))
        slots = .allocate(capacity: topics.count)
        let batch = Unmanaged.passUnretained(self)
        for index in slots.indices { slots.initializeElement(at: index, to: Slot(batch: batch, index: index)) }
    }

    deinit { slots.deallocate() }

    /// The opaque pointer for message `index`, holding a retain on this batch until its report.
    func retainedSlot(_ index: Int) -> UnsafeMutableRawPointer {
        _ = Unmanaged.passUnretained(self).retain()
        return UnsafeMutableRawPointer(slots.baseAddress! + index)
    }

    static func delivered(_ opaque: UnsafeMutableRawPointer, partition: Int32, offset: Int64) {
        let slot = opaque.load(as: Slot.self)
        slot.batch.takeRetainedValue().record(index: slot.index, partition: partition, offset: offset)
    }

    static func failed(_ opaque: UnsafeMutableRawPointer, _ error: KafkaError) {
        let slot = opaque.load(as: Slot.self)
        slot.batch.takeRetainedValue().record(index: slot.index, error: error)
    }

    /// Gives back the retain of a message that was never queued.
    static func release(_ opaque: UnsafeMutableRawPointer) {
        opaque.load(as: Slot.self).batch.release()
    }

    func record(index: Int, partition: Int32, offset: Int64) {
        let report = KafkaDeliveryReport(topic: topics[index], partition: partition, offset: offset)
        finish(count: 1) { state in state.reports[index] = report }
    }

    func record(index: Int, error: KafkaError) {
        finish(count: 1) { state in
            if state.error == nil { state.error = error }
        }
    }

    func failUnsent(count: Int, error: KafkaError) {
        finish(count: count) { state in
            if state.error == nil { state.error = error }
        }
    }

    private func finish(count: Int, _ update: (inout State) -> Void) {
        let done: (@Sendable (Result<[KafkaDeliveryReport], any Error>) -> Void, Result<[KafkaDeliveryReport], any Error>)? = state.withLock { state in
            update(&state)
            state.remaining -= count
            guard state.remaining == 0, let completion = state.completion else { return nil }
            state.completion = nil
            if let error = state.error { return (completion, .failure(error)) }
            return (completion, .success(state.reports.map { $0! }))
        }
        if let (completion, result) = done { completion(result) }
    }
}
