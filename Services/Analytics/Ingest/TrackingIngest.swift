import Foundation
import Logging
import Metrics
import ServiceLifecycle
import Shared
import Synchronization

/// Reads `tracking.events` in the analytics consumer group and counts it, one transaction per batch:
/// the aggregates, the ids counted and the offsets commit together (IngestStore), and the offsets are
/// read back from Postgres whenever partitions are assigned. The broker's committed offsets are never
/// used, so a crash anywhere (kill -9 mid-batch included) neither loses nor double-counts an event.
///
/// Reading and decoding the next batch overlaps writing the current one.
final class TrackingIngest: Service, Sendable {
    struct Options: Sendable {
        /// Most messages per transaction. Larger batches amortise round trips; a batch is whatever has
        /// arrived when the reader asks, so a quiet topic still gives small batches at once.
        var batchSize = 20_000
        var pollTimeout: Duration = .milliseconds(100)
    }

    private let configuration: KafkaConfiguration
    private let store: any IngestStore
    private let pseudonyms: IdPseudonyms
    private let deadLetters: DeadLetterSink
    private let options: Options
    private let logger: Logger
    private let topic: String
    private let groupId: String
    /// Per partition, the next offset this reader believes is stored; see IngestBatch.expectedOffsets.
    private let expected = Mutex<[Int32: Int64]>([:])
    private let stopping = Atomic<Bool>(false)
    private let consumer = Mutex<KafkaConsumer?>(nil)
    /// Partitions whose log was replaced under the reader, and the new log's start: stored with the next batch.
    private let resets = Mutex<[Int32: Int64]>([:])
    private let metrics = IngestMetrics()
    /// Events this process set aside (the database refused them), at most `refusedMemory`: each assignment reads up to
    /// `assignmentRewind` messages again, which would halve their batch and dead-letter them again. A restart forgets.
    private let refused = Mutex<Set<UUID>>([])
    private static let refusedMemory = 10_000

    init(configuration: KafkaConfiguration, store: any IngestStore, deadLetters: DeadLetterSink, pseudonyms: IdPseudonyms,
         options: Options = Options(), logger: Logger) {
        self.configuration = configuration
        self.store = store
        self.pseudonyms = pseudonyms
        self.deadLetters = deadLetters
        self.options = options
        self.logger = logger
        topic = configuration.topic(Topic.trackingEvents)
        groupId = configuration.topic("analytics")
    }

    func run() async throws {
        let storedOffsets = StoredOffsetsRequests()
        try await withGracefulShutdownHandler {
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask { await storedOffsets.serve { await self.readStoredOffsets() } }
                try await self.consumeUntilStopped(storedOffsets)
                group.cancelAll()
            }
        } onGracefulShutdown: {
            self.stopping.store(true, ordering: .releasing)
        }
    }

    private func consumeUntilStopped(_ storedOffsets: StoredOffsetsRequests) async throws {
        while !stopping.load(ordering: .acquiring) && !Task.isCancelled {
            let consumer = try await KafkaConsumer.open(configuration: configuration, subscription: .group(id: groupId, topics: [topic]),
                                                        logger: logger, name: "analytics", resetUnconfirmedBeyondEnd: true,
                                                        assignmentOffsets: { [self] in self.offsetsOnAssignment($0, storedOffsets) },
                                                        onLogCheck: { [self] check in self.logMoved(check) })
            self.consumer.withLock { $0 = consumer }
            let rejoin: Bool
            do {
                rejoin = try await consume(consumer)
            } catch {
                await consumer.close()
                throw error
            }
            await consumer.close()
            guard rejoin else { return }
            logger.warning("stored offsets are behind this reader (a replay was activated): rejoining to read from them")
        }
    }

    /// Messages behind the end of each assigned partition, for metrics (itour_consumer_lag).
    func recordLag() async {
        await consumer.withLock({ $0 })?.recordLag(consumerName: "analytics")
    }

    /// Reads and counts until shutdown (false) or until the stored offsets moved back (true: rejoin).
    private func consume(_ consumer: KafkaConsumer) async throws -> Bool {
        var pending: DecodedBatch?
        while !stopping.load(ordering: .acquiring) && !Task.isCancelled {
            async let following = DecodedBatch.read(from: consumer, topic: topic, pseudonyms: pseudonyms, max: options.batchSize,
                                                  timeout: options.pollTimeout)
            if let batch = pending, try await !count(batch) {
                _ = try? await following
                return true
            }
            pending = try await following
            // The moves its own poll found, and only those: a move found while the batch before was read from
            // the old log must not be stored with that batch's offsets.
            pending?.batch.resetOffsets = resets.withLock { resets in
                defer { resets = [:] }
                return resets
            }
        }
        // What was read but not counted is read again after a restart: nothing is lost by stopping here.
        return false
    }

    /// The consumer found partitions whose log no longer holds the stored offsets (the broker lost the topic,
    /// or it was deleted and made again) and now reads them from the start: every event there that was
    /// counted before is recognised by its id, so counts stay exact. The new start is stored with the batch
    /// its poll read (`IngestBatch.resetOffsets`), so neither a restart nor the lag watch waits beyond the new log's end.
    private func logMoved(_ check: KafkaConsumer.LogCheck) {
        let moved = check.moves.filter { $0.partition.topic == topic }
        guard !moved.isEmpty else { return }
        resets.withLock { resets in for move in moved { resets[move.partition.partition] = move.resetTo } }
    }

    /// Counts one batch; false when the stored offsets moved back under this reader.
    private func count(_ decoded: DecodedBatch) async throws -> Bool {
        let resetOffsets = decoded.batch.resetOffsets
        guard !decoded.isEmpty || !resetOffsets.isEmpty else { return true }
        let started = DispatchTime.now()
        // Dead letters first: once the offsets are stored the bad messages are never read again.
        await withTaskGroup(of: Void.self) { group in
            for case (let message?, let rejection) in decoded.rejected {
                metrics.rejected(rejection.kind).increment()
                group.addTask { await self.deadLetters.send(message, reason: rejection.reason) }
            }
        }
        var batch = decoded.batch
        let setAsideBefore = refused.withLock { $0 }
        if !setAsideBefore.isEmpty, batch.events.contains(where: { setAsideBefore.contains($0.id) }) {
            batch = batch.with(events: batch.events.filter { !setAsideBefore.contains($0.id) })
        }
        let partitions = batch.nextOffsets
        // A reset partition's stored offset belongs to the old log: nothing to compare with.
        batch.expectedOffsets = expected.withLock { held in held.filter { partitions[$0.key] != nil && resetOffsets[$0.key] == nil } }
        let outcome = try await Self.applySettingAside(batch, to: store, logger: logger, stopping: { self.stopping.load(ordering: .acquiring) }) {
            event, reason in
            self.metrics.refused.increment()
            self.refused.withLock { if $0.count < Self.refusedMemory { $0.insert(event.id) } }
            guard let message = decoded.message(of: event.id) else { return }
            await self.deadLetters.send(message, reason: reason)
        }
        switch outcome {
        case .applied(let new, let duplicates):
            expected.withLock { held in
                for (partition, offset) in resetOffsets { held[partition] = offset }
                // What the store kept (IngestBatch.resetOffsets): the batch's own offset wins over a reset's start.
                for (partition, offset) in batch.nextOffsets { held[partition] = offset }
            }
            metrics.counted.increment(by: Int64(new))
            metrics.duplicates.increment(by: Int64(duplicates))
            metrics.batchDuration.recordInterval(since: started)
            logger.debug("batch counted", metadata: ["messages": "\(decoded.messageCount)", "new": "\(new)", "duplicates": "\(duplicates)"])
            return true
        case .offsetsMovedBack:
            return false
        }
    }

    /// Applies a batch as `apply` does; when the database refuses the content of some of its events (a value
    /// no index can hold, say), finds them by halving the batch and counts everything else, so one bad event
    /// never stops the ingest (DESIGN.md "When a message fails"). Halves before the last carry no offsets:
    /// if the process dies between them, the events counted already are recognised by their ids when read
    /// again. `setAside` is called for each refused event before the batch's offsets are stored.
    static func applySettingAside(_ batch: IngestBatch, to store: any IngestStore, logger: Logger,
                                  stopping: @escaping @Sendable () -> Bool = { false },
                                  setAside: @escaping @Sendable (TrackingEvent, String) async -> Void) async throws -> ApplyOutcome {
        do {
            return try await apply(batch, to: store, logger: logger, stopping: stopping)
        } catch let refusal as ContentRefused {
            let outcome = try await applyHalving(batch, refused: refusal.reason, to: store, logger: logger, stopping: stopping, setAside: setAside)
            guard case .applied(let new, let duplicates) = outcome else { return outcome }
            // Repeats within the batch were dropped when it was made; its halves do not see them.
            return .applied(new: new, duplicates: duplicates + batch.received - batch.events.count)
        }
    }

    /// `batch`, which the database refused for `reason`, in halves.
    private static func applyHalving(_ batch: IngestBatch, refused reason: String, to store: any IngestStore, logger: Logger,
                                     stopping: @escaping @Sendable () -> Bool,
                                     setAside: @escaping @Sendable (TrackingEvent, String) async -> Void) async throws -> ApplyOutcome {
        if batch.events.count == 1 {
            logger.error("event refused by the database; set aside", metadata: ["eventId": "\(batch.events[0].id)", "reason": "\(reason)"])
            await setAside(batch.events[0], "analytics could not store this event: \(reason)")
            // Offsets alone: the database has nothing of the content to refuse.
            return try await apply(batch.with(events: []), to: store, logger: logger, stopping: stopping)
        }
        let middle = batch.events.count / 2
        var first = batch.with(events: Array(batch.events[..<middle]))
        first.nextOffsets = [:]
        first.resetOffsets = [:]
        let firstOutcome = try await applyHalf(first, to: store, logger: logger, stopping: stopping, setAside: setAside)
        guard case .applied(let newBefore, let duplicatesBefore) = firstOutcome else { return firstOutcome }
        let secondOutcome = try await applyHalf(batch.with(events: Array(batch.events[middle...])), to: store, logger: logger,
                                                stopping: stopping, setAside: setAside)
        guard case .applied(let new, let duplicates) = secondOutcome else { return secondOutcome }
        return .applied(new: newBefore + new, duplicates: duplicatesBefore + duplicates)
    }

    /// One half: applied whole, or halved again when the database refuses it.
    private static func applyHalf(_ half: IngestBatch, to store: any IngestStore, logger: Logger, stopping: @escaping @Sendable () -> Bool,
                                  setAside: @escaping @Sendable (TrackingEvent, String) async -> Void) async throws -> ApplyOutcome {
        do {
            return try await apply(half, to: store, logger: logger, stopping: stopping)
        } catch let refusal as ContentRefused {
            return try await applyHalving(half, refused: refusal.reason, to: store, logger: logger, stopping: stopping, setAside: setAside)
        }
    }

    /// The database refused the content of an event of the batch (`DatabaseFailure.content`): retrying the
    /// same batch would fail the same way.
    struct ContentRefused: Error {
        let reason: String
    }

    /// Applies a batch, retrying while Postgres fails for a reason that is not the batch's content: a batch is
    /// never skipped. Throws `ContentRefused` at once when the database refuses the events' content. Gives up
    /// only when `stopping` says so, or `shutdownGrace` after the ingest is cancelled, leaving the batch to be
    /// read again after the restart.
    static func apply(_ batch: IngestBatch, to store: any IngestStore, logger: Logger,
                      stopping: @Sendable () -> Bool = { false }) async throws -> ApplyOutcome {
        var attempt = 0
        while true {
            // Cancelled already: no new transaction; the batch is read again after the restart.
            try Task.checkCancellation()
            do {
                return try await awaitingAtMost(Self.shutdownGrace) { try await store.apply(batch) }
            } catch is CancellationError {
                logger.warning("stopped while counting a batch; it is read again after the restart")
                throw CancellationError()
            } catch {
                // Only events can be refused for their content; a batch of offsets alone is retried like any failure.
                if !batch.events.isEmpty, case .content(let reason) = DatabaseFailure(error) { throw ContentRefused(reason: reason) }
                attempt += 1
                logger.error("counting a batch failed; retrying", metadata: ["error": "\(String(reflecting: error))", "attempt": "\(attempt)"])
                if stopping() || Task.isCancelled { throw error }
                try await Task.sleep(for: .milliseconds(min(5_000, 100 << min(attempt, 6))))
            }
        }
    }

    /// How long a cancelled ingest waits for the batch it is writing (see `awaitingAtMost`).
    static let shutdownGrace: Duration = .seconds(5)

    /// Messages per partition read again at each assignment (see `offsetsOnAssignment`).
    static let assignmentRewind: Int64 = 500

    /// The assignment hook: start each assigned partition at the offset stored with the aggregates, less
    /// `assignmentRewind`.
    ///
    /// librdkafka calls it inside a poll and must have the offsets before it returns, so this blocks: on the
    /// consumer's own queue (KafkaConsumer runs its polls there, never on the cooperative pool or an event
    /// loop), while `run`'s child task reads Postgres (`StoredOffsetsRequests`).
    private func offsetsOnAssignment(_ partitions: [KafkaTopicPartition], _ storedOffsets: StoredOffsetsRequests) -> [KafkaTopicPartition: KafkaConsumer.AssignedStart] {
        let answer: [Int32: Int64]?
        if withUnsafeCurrentTask(body: { $0 != nil }) {
            // Called from a task: blocking here could hold the very thread the read needs.
            logger.error("assignment hook called from a task; not waiting for stored offsets")
            answer = nil
        } else {
            answer = storedOffsets.ask(timeout: .seconds(60))
        }
        guard let stored = answer else {
            // Still correct, only slower: from the beginning, every id already counted is recognised.
            logger.error("stored offsets unavailable; reading assigned partitions from their beginning")
            expected.withLock { held in for partition in partitions { held[partition.partition] = nil } }
            return [:]
        }
        var offsets: [KafkaTopicPartition: KafkaConsumer.AssignedStart] = [:]
        expected.withLock { held in
            for partition in partitions where partition.topic == topic {
                held[partition.partition] = stored[partition.partition]
                // A little before the stored offset: if the topic was made again (or the broker came back
                // empty) and the new log already holds more than the stored offset, its head is read rather
                // than skipped; in the same log, what is read again is recognised by its id. The consumer checks
                // the stored offset itself against the log: one beyond its end is a new log, read from its start
                // and stored anew (`logMoved`).
                if let offset = stored[partition.partition] {
                    offsets[partition] = .init(offset: max(0, offset - Self.assignmentRewind), stored: offset)
                }
            }
        }
        logger.info("starting from stored offsets, less the rewind", metadata: [
            "offsets": "\(offsets.map { "\($0.key)=\($0.value.offset)" }.sorted())", "rewind": "\(Self.assignmentRewind)",
        ])
        return offsets
    }

    /// The stored offsets, retried while Postgres fails (about 30 s); nil once stopping or out of attempts.
    private func readStoredOffsets() async -> [Int32: Int64]? {
        for attempt in 1...30 {
            if stopping.load(ordering: .acquiring) || Task.isCancelled { return nil }
            do {
                return try await store.storedOffsets(topic: topic)
            } catch {
                logger.error("reading stored offsets failed; retrying", metadata: ["error": "\(String(reflecting: error))", "attempt": "\(attempt)"])
                try? await Task.sleep(for: .seconds(1))
            }
        }
        return nil
    }
}

/// Questions for the stored offsets from a thread that must wait for the answer (librdkafka's assignment
/// hook), answered by a task: `serve` runs as a child of the ingest's `run`, so the Postgres read is
/// structured and ends with it. Once it has ended, questions are answered with nil at once.
final class StoredOffsetsRequests: Sendable {
    private final class Request: Sendable {
        private let answered = DispatchSemaphore(value: 0)
        private let answer = Mutex<[Int32: Int64]?>(nil)

        func resolve(_ offsets: [Int32: Int64]?) {
            answer.withLock { $0 = offsets }
            answered.signal()
        }

        func wait(timeout: Duration) -> [Int32: Int64]? {
            let (seconds, attoseconds) = timeout.components
            let milliseconds = Int(seconds * 1_000 + attoseconds / 1_000_000_000_000_000)
            guard answered.wait(timeout: .now() + .milliseconds(milliseconds)) == .success else { return nil }
            return answer.withLock { $0 }
        }
    }

    private struct State {
        var pending: [Request] = []
        var closed = false
    }

    private let state = Mutex(State())
    private let wakeups = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))

    /// Blocks the calling thread until `serve` answers (nil: not available, or `timeout` passed).
    func ask(timeout: Duration) -> [Int32: Int64]? {
        let request = Request()
        let queued = state.withLock { state in
            guard !state.closed else { return false }
            state.pending.append(request)
            return true
        }
        guard queued else { return nil }
        wakeups.continuation.yield()
        return request.wait(timeout: timeout)
    }

    /// Answers questions with `read` until cancelled; then answers what is left, and all later ones, with nil.
    func serve(_ read: @Sendable () async -> [Int32: Int64]?) async {
        for await _ in wakeups.stream {
            let questions = state.withLock { state in
                defer { state.pending = [] }
                return state.pending
            }
            guard !questions.isEmpty else { continue }
            let offsets = await read()
            for question in questions { question.resolve(offsets) }
        }
        let unanswered = state.withLock { state in
            state.closed = true
            defer { state.pending = [] }
            return state.pending
        }
        wakeups.continuation.finish()
        for question in unanswered { question.resolve(nil) }
    }
}

/// Messages read in one poll, decoded: the batch to count, and the rejected messages with their reasons.
struct DecodedBatch: Sendable {
    var batch: IngestBatch
    /// Rejected messages (nil when read from a file) and why.
    var rejected: [(KafkaMessage?, TrackingCodec.MessageRejection)]
    var messageCount: Int
    /// The messages read (none when read from a file), to find a refused event's message.
    private var messages: [KafkaMessage]

    var isEmpty: Bool { messageCount == 0 }

    init(batch: IngestBatch, rejected: [(KafkaMessage?, TrackingCodec.MessageRejection)], messageCount: Int, messages: [KafkaMessage] = []) {
        self.batch = batch
        self.rejected = rejected
        self.messageCount = messageCount
        self.messages = messages
    }

    /// The message that carried event `id` (decoded again: only a refused event, a rare case, asks).
    func message(of id: UUID) -> KafkaMessage? {
        messages.first { message in
            if case .event(let event) = TrackingCodec.readMessage(message.value) { event.id == id } else { false }
        }
    }

    /// Decodes `messages`; each event's device and tourist ids become their pseudonyms here, before anything keeps them.
    init(_ messages: [KafkaMessage], topic: String, pseudonyms: IdPseudonyms) {
        var events: [TrackingEvent] = []
        var known: [[UInt8]: String] = [:]
        events.reserveCapacity(messages.count)
        var nextOffsets: [Int32: Int64] = [:]
        var rejected: [(KafkaMessage?, TrackingCodec.MessageRejection)] = []
        for message in messages {
            // The last message's, not the highest: across a log that moved under the consumer within one poll,
            // the old log's offsets come first and may be higher.
            nextOffsets[message.partition] = message.offset + 1
            switch TrackingCodec.readMessage(message.value) {
            case .event(let event): events.append(pseudonyms.pseudonymized(event, cache: &known))
            case .rejected(let rejection): rejected.append((message, rejection))
            }
        }
        self.init(batch: IngestBatch(events: events, topic: topic, nextOffsets: nextOffsets), rejected: rejected, messageCount: messages.count,
                  messages: messages)
    }

    /// Polls and decodes; run beside the previous batch's transaction.
    static func read(from consumer: KafkaConsumer, topic: String, pseudonyms: IdPseudonyms, max: Int, timeout: Duration) async throws -> DecodedBatch {
        DecodedBatch(try await consumer.poll(maxMessages: max, timeout: timeout), topic: topic, pseudonyms: pseudonyms)
    }
}

/// The ingest's metrics, on /metrics.
struct IngestMetrics: Sendable {
    let counted = Counter(label: "itour_analytics_events_counted_total", help: "Tracking events counted in the reports.")
    let duplicates = Counter(label: "itour_analytics_events_duplicate_total", help: "Tracking events already counted (redeliveries), not counted again.")
    let batchDuration = Metrics.Timer(label: "itour_analytics_batch_duration_seconds", help: "Time to count one batch of tracking events into Postgres.")
    private let undecodable = Counter(label: "itour_analytics_events_rejected_total", dimensions: [("reason", "undecodable")], help: Self.rejectedHelp)
    private let invalid = Counter(label: "itour_analytics_events_rejected_total", dimensions: [("reason", "invalid")], help: Self.rejectedHelp)
    /// Valid events the database refused to store (DatabaseFailure.content), set aside by halving their batch.
    let refused = Counter(label: "itour_analytics_events_rejected_total", dimensions: [("reason", "refused")], help: Self.rejectedHelp)
    private static let rejectedHelp = "Tracking messages not counted and sent to dead-letters, by reason (undecodable, invalid, or refused by the database)."

    func rejected(_ kind: TrackingCodec.MessageRejection.Kind) -> Counter {
        kind == .undecodable ? undecodable : invalid
    }
}
