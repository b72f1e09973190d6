import Foundation
import Logging
import Metrics
import ServiceLifecycle
import Synchronization

/// An idempotent (`enable.idempotence`, `acks=all`) producer whose `send` returns only once the broker
/// acknowledged every message, or throws. Run it as a `Service`: on graceful shutdown it flushes what is
/// in flight and stops its poll loop. The poll loop and every call that waits on the broker run on Dispatch
/// queues of their own (`RDKafkaQueue`), never on an event loop or the cooperative pool.
///
/// It survives losing its broker's state. An idempotent producer whose broker forgot it (a memory-only
/// broker restarted empty, a cluster restored) is refused with "unknown producer id" on every message and
/// never recovers by itself (librdkafka 2.3 fails such messages at once, later versions retry them until
/// they time out); a fatal error leaves the handle unusable. Either way the handle is replaced: what it
/// still held is purged from it and produced again on the new one (consumers dedupe by message id, so a
/// message the old handle had in fact stored counts once); a send whose messages already failed gets the
/// error and is sent again by its caller.
public final class KafkaProducer: Service, Sendable {
    /// The handle sends go to; replaced by `replaceClient`. A send takes it under the lock and queues
    /// outside it (two event loops queueing batches of fifty used to wait on each other), counted in
    /// `Handle.sending`: the replacement waits for those sends before it purges the old handle, so no
    /// message lands on a handle after its purge.
    private let current: Mutex<Handle>
    private let context: RDKafkaCallbackContext
    private let health = Mutex<Health>(Health())
    private let pollLoop = Mutex<PollLoop?>(nil)
    private let logger: Logger
    public let configuration: KafkaConfiguration
    /// How long messages may wait with no acknowledgement at all, while the broker answers, before the
    /// handle is taken to be stuck and replaced.
    public let stallThreshold: Duration
    private let replacements = Counter(label: "itour_kafka_producer_replacements_total",
                                       help: "Times the Kafka producer was found stuck (no acknowledgement while the broker answers) and replaced.")

    /// What the poll loop knows about progress: the last acknowledgement, and since when messages
    /// waited or failed without one.
    private struct Health {
        var lastAcknowledged = ContinuousClock.now
        /// Since when messages have waited or failed with no acknowledgement in between.
        var troubleSince: ContinuousClock.Instant?
        var lastFailure: ContinuousClock.Instant?
        var lastCheck = ContinuousClock.now
        var lastReplaced: ContinuousClock.Instant?
    }

    public init(configuration: KafkaConfiguration, logger: Logger, stallThreshold: Duration = .seconds(3)) throws {
        let context = RDKafkaCallbackContext(logger: logger)
        self.context = context
        current = Mutex(Handle(try RDKafkaClient(role: .producer, properties: configuration.producerProperties, callbackContext: context)))
        self.configuration = configuration
        self.logger = logger
        self.stallThreshold = stallThreshold
        RDKafkaClient.checkLibraryVersion(logger: logger)
        pollLoop.withLock { $0 = PollLoop(label: "kafka-producer-poll") { [self] in pollOnce() } }
    }

    private var client: RDKafkaClient { current.withLock { $0.client } }

    /// A handle and the sends queueing on it now.
    private final class Handle: Sendable {
        let client: RDKafkaClient
        let sending = Atomic<Int>(0)

        init(_ client: RDKafkaClient) { self.client = client }

        /// Waits (briefly: a send queues in microseconds) until no send is queueing on this handle; once it is
        /// no longer `current`, none starts.
        func waitForSends() {
            while sending.load(ordering: .acquiring) > 0 { sched_yield() }
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
    /// the poll loop (or at once when nothing could be queued), and must be quick.
    public func send(_ messages: [KafkaOutgoingMessage],
                     completion: @escaping @Sendable (Result<[KafkaDeliveryReport], any Error>) -> Void) {
        guard !messages.isEmpty else { return completion(.success([])) }
        guard pollLoop.withLock({ $0?.isRunning ?? false }) else {
            return completion(.failure(KafkaError(.closed, "producer is shut down")))
        }
        let pending = PendingDelivery(messages: messages, deadline: .now + .milliseconds(configuration.deliveryTimeoutMilliseconds),
                                      completion: completion)
        let handle = current.withLock { handle in
            handle.sending.add(1, ordering: .relaxed)
            return handle
        }
        let client = handle.client
        let unsent: (count: Int, error: KafkaError)? = {
            defer { handle.sending.subtract(1, ordering: .releasing) }
            for index in messages.indices {
                let opaque = pending.retainedSlot(index)
                do {
                    try client.produce(messages[index], opaque: opaque)
                } catch let error as KafkaError where error.isFatal {
                    // The handle died under this send: the poll loop replaces it and sends this message then.
                    context.fatal.value = true
                    context.requeued.withLock { $0.append(RequeuedMessage(opaque: opaque)) }
                } catch {
                    // This message and the rest were never queued: release their references and fail them.
                    PendingDelivery.release(opaque)
                    return (messages.count - index, KafkaError(error))
                }
            }
            return nil
        }()
        // Outside the lock: the completion may send again.
        if let unsent { pending.failUnsent(count: unsent.count, error: unsent.error) }
    }

    /// One turn of the poll loop: serve callbacks, then replace the handle if it failed or is stuck.
    private func pollOnce() {
        let client = self.client
        client.poll(timeoutMilliseconds: 100)
        let now = ContinuousClock.now
        let acknowledged = context.acknowledged.clear()
        let failed = context.deliveryFailed.clear()
        let due = health.withLock { health -> Bool in
            if acknowledged {
                health.lastAcknowledged = now
                health.troubleSince = nil
            } else if failed {
                health.lastFailure = now
                if health.troubleSince == nil { health.troubleSince = now }
            }
            guard now - health.lastCheck >= .milliseconds(500) else { return false }
            health.lastCheck = now
            return true
        }
        if context.fatal.value {
            replaceClient(reason: "fatal", detail: client.fatalError.map(\.message) ?? "fatal error")
        } else if due, isStuck(client, now: now) {
            replaceClient(reason: "stalled", detail: "no acknowledgement for \(stallThreshold) with \(client.outstandingCount) messages waiting (or failed) while the broker answers")
        }
    }

    /// Messages waited or failed, none was acknowledged for `stallThreshold`, yet the broker answers metadata
    /// requests: the broker refuses this handle's messages (it no longer knows its producer id; some
    /// librdkafka versions retry such messages until they time out, others fail them at once). At most once
    /// per two thresholds, so a slow broker is not met with a replacement loop.
    private func isStuck(_ client: RDKafkaClient, now: ContinuousClock.Instant) -> Bool {
        let outstanding = client.outstandingCount > 0
        let waiting = health.withLock { health in
            if outstanding, health.troubleSince == nil { health.troubleSince = now }
            // Idle with nothing failing lately: one old failure (a message too large, say) is no reason.
            guard let since = health.troubleSince,
                  outstanding || health.lastFailure.map({ now - $0 < stallThreshold }) == true else { return false }
            let rested = health.lastReplaced.map { now - $0 >= stallThreshold * 2 } ?? true
            return rested && now - since >= stallThreshold && now - health.lastAcknowledged >= stallThreshold
        }
        guard waiting else { return false }
        return (try? client.partitionCounts(topics: [], timeoutMilliseconds: 1_000)) != nil
    }

    /// Makes a new handle, sends go to it from now on; the old handle's messages are purged and produced
    /// again on the new one.
    private func replaceClient(reason: String, detail: String) {
        let fresh: RDKafkaClient
        do {
            fresh = try RDKafkaClient(role: .producer, properties: configuration.producerProperties, callbackContext: context)
        } catch {
            logger.error("kafka producer could not be replaced", metadata: ["error": "\(error)"])
            return
        }
        let oldHandle = current.withLock { handle in
            defer { handle = Handle(fresh) }
            return handle
        }
        oldHandle.waitForSends()
        let old = oldHandle.client
        old.purgeAll()
        // Serve the purge reports: each lands in `requeued`. A report never served would leave its send
        // waiting for good, so this waits (boundedly) for all of them.
        let drainDeadline = ContinuousClock.now + .seconds(10)
        while old.outstandingCount > 0, ContinuousClock.now < drainDeadline { _ = old.poll(timeoutMilliseconds: 10) }
        if old.outstandingCount > 0 {
            logger.error("kafka producer replaced with messages still unreported", metadata: ["messages": "\(old.outstandingCount)"])
        }
        // Cleared after the drain: fatal reports served during it belong to the old handle.
        context.fatal.value = false
        let moved = context.requeued.withLock { $0.count }
        health.withLock { health in
            health.lastReplaced = .now
            health.lastAcknowledged = .now
            health.troubleSince = nil
        }
        replacements.increment()
        logger.warning("kafka producer replaced", metadata: ["reason": "\(reason)", "detail": "\(detail)", "resent": "\(moved)"])
        resendRequeued()
    }

    private func resendRequeued() {
        let requeued = context.requeued.withLock { list in
            defer { list = [] }
            return list
        }
        let now = ContinuousClock.now
        for message in requeued {
            // A message keeps the delivery timeout it was sent with: one that is never stored (its topic
            // missing) fails then, rather than going from handle to handle.
            if PendingDelivery.deadline(message.opaque) < now {
                PendingDelivery.failed(message.opaque, .deliveryTimedOut)
                continue
            }
            do {
                try current.withLock { handle in try handle.client.produce(PendingDelivery.message(message.opaque), opaque: message.opaque) }
            } catch {
                PendingDelivery.failed(message.opaque, KafkaError(error))
            }
        }
    }

    /// Partition count per topic, from the broker's metadata.
    public func partitionCounts(topics: [String], timeout: Duration = .seconds(5)) async throws -> [String: Int] {
        try await client.run { try $0.partitionCounts(topics: topics, timeoutMilliseconds: timeout.milliseconds) }
    }

    /// The configuration a broker reports for a topic (full name), by entry name; entries it does not report are absent.
    public func topicConfig(_ topic: String, timeout: Duration = .seconds(5)) async throws -> [String: String] {
        try await client.run { try $0.topicConfig(topic: topic, timeoutMilliseconds: timeout.milliseconds) }
    }

    /// Deletes topics by their full names (for tests and operators' tools; no service deletes one).
    public func deleteTopics(_ names: [String], timeout: Duration = .seconds(10)) async throws {
        try await client.run { try $0.deleteTopics(names, timeoutMilliseconds: timeout.milliseconds) }
    }

    /// Creates topics with their partition counts; existing ones are left as they are.
    public func createTopics(_ topics: [KafkaTopicSpec], timeout: Duration = .seconds(10)) async throws {
        let prefix = configuration.topicPrefix
        try await client.run {
            try $0.createTopics(topics.map { (prefix + $0.name, $0.partitions, $0.config) }, timeoutMilliseconds: timeout.milliseconds)
        }
    }

    /// True when a broker answers a metadata request within the timeout.
    public func isBrokerReachable(timeout: Duration = .seconds(2)) async -> Bool {
        (try? await partitionCounts(topics: [], timeout: timeout)) != nil
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
            try await client.run { try $0.flush(timeoutMilliseconds: timeout) }
        } catch {
            logger.error("producer flush failed", metadata: ["error": "\(error)", "outstanding": "\(client.outstandingCount)"])
        }
        pollLoop.withLock { $0?.stop() }
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
    /// The messages, for their reports' topics and to produce again after a replacement of the handle.
    private let messages: [KafkaOutgoingMessage]

    /// When the delivery timeout of the send runs out; a message purged after it is not sent again.
    let deadline: ContinuousClock.Instant

    init(messages: [KafkaOutgoingMessage], deadline: ContinuousClock.Instant,
         completion: @escaping @Sendable (Result<[KafkaDeliveryReport], any Error>) -> Void) {
        self.messages = messages
        self.deadline = deadline
        state = Mutex(State(remaining: messages.count, reports: Array(repeating: nil, count: messages.count), completion: completion))
        slots = .allocate(capacity: messages.count)
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

    /// The message behind a slot (to produce it again).
    static func message(_ opaque: UnsafeMutableRawPointer) -> KafkaOutgoingMessage {
        let slot = opaque.load(as: Slot.self)
        return slot.batch.takeUnretainedValue().messages[slot.index]
    }

    static func deadline(_ opaque: UnsafeMutableRawPointer) -> ContinuousClock.Instant {
        opaque.load(as: Slot.self).batch.takeUnretainedValue().deadline
    }

    /// Gives back the retain of a message that was never queued.
    static func release(_ opaque: UnsafeMutableRawPointer) {
        opaque.load(as: Slot.self).batch.release()
    }

    func record(index: Int, partition: Int32, offset: Int64) {
        let report = KafkaDeliveryReport(topic: messages[index].topic, partition: partition, offset: offset)
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
