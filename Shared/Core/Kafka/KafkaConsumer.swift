import Logging
import Metrics
import ServiceLifecycle
import Synchronization

/// A consumer whose messages are an `AsyncSequence`. Offsets are committed only when asked
/// (`commit`), so a message is redelivered after a restart unless its handler finished.
///
/// Two ways to get partitions:
/// - `.group`: a consumer group shares the topics' partitions; committed offsets are kept by the broker,
///   or chosen by `assignmentOffsets` (analytics keeps its offsets in Postgres).
/// - `.allPartitions(from:)`: every partition of the topics, without a group, for projections that need
///   every message (each feed instance reads all of `catalog.events`).
public final class KafkaConsumer: AsyncSequence, Service, Sendable {
    public typealias Element = KafkaMessage

    public enum Subscription: Sendable {
        case group(id: String, topics: [String])
        case allPartitions(topics: [String], from: StartPosition)
    }

    public enum StartPosition: Sendable {
        case beginning
        /// The high watermark when the consumer starts: only messages produced after `init` returned.
        case end
    }

    /// A partition whose log no longer holds this consumer's position: the broker lost it (a memory-only
    /// broker restarted empty, a cluster restored), the topic was deleted and made again, or retention
    /// removed what was not yet read. The consumer has moved to `resetTo` (the partition's start).
    public struct LogMove: Sendable, CustomStringConvertible {
        public let partition: KafkaTopicPartition
        public let position: Int64
        public let low: Int64
        public let high: Int64
        public let resetTo: Int64

        public var description: String { "\(partition): position \(position) outside [\(low), \(high)], reset to \(resetTo)" }
    }

    /// Where an assignment hook starts a partition: at `offset`, at or before `stored`, the offset its reader
    /// stored. A start before `stored` (reading a little again) is checked against the log as `stored` until a
    /// message just before it is read: a log that ends before it is not the log it was stored in.
    public struct AssignedStart: Sendable, Equatable {
        public let offset: Int64
        public let stored: Int64

        public init(offset: Int64, stored: Int64) {
            self.offset = offset
            self.stored = stored
        }
    }

    /// What a position check found: the partitions that moved, and whether every broker had been down
    /// before it (a memory-only broker may have come back empty even where positions still fit).
    public struct LogCheck: Sendable {
        public let moves: [LogMove]
        public let afterBrokerLoss: Bool
    }

    /// Its calls block: they all run on the client's serial queue (`client.run`), off event loops and the
    /// cooperative pool, one after the other.
    private let client: RDKafkaClient
    private let context: RDKafkaCallbackContext
    private let closed = Flag(false)
    private let logger: Logger
    private let name: String
    private let lastCheck = Mutex<ContinuousClock.Instant>(.now)
    /// Each assigned partition's high watermark at the last check: a log whose end moved back was replaced.
    private let lastHighs = Mutex<[KafkaTopicPartition: Int64]>([:])
    /// Each assigned topic's ids seen so far: an id never seen is a topic made again, even one whose new log has
    /// already grown past this consumer's positions. A set, not the last one: brokers of a cluster may answer the old
    /// and the new id in turn for a moment after the topic is made again.
    private let seenTopicIds = Mutex<[String: Set<KafkaTopicId>]>([:])
    private let resetUnconfirmedBeyondEnd: Bool
    private let checkInterval: Duration
    private let onLogCheck: (@Sendable (LogCheck) -> Void)?

    /// Makes a consumer and subscribes it, or assigns it its partitions (asking the broker for them and, from
    /// `.end`, for their ends, up to 10 s each), on its own queue.
    /// - Parameters:
    ///   - name: the consumer's name in logs and metrics (`consumer` label).
    ///   - checkInterval: how often positions are compared with the partitions' logs (and at once after
    ///     every broker was down or a read failed).
    ///   - resetUnconfirmedBeyondEnd: whether a position given at assignment that lies beyond a non-empty
    ///     log's end is reset to the log's start. tansu reports a partition's end as its last record
    ///     batch's base offset + 1, so such a position may be the true end; a reader that dedupes (analytics)
    ///     re-reads rather than risk skipping a new log's head, others keep it.
    ///   - onLogCheck: called on the consumer's queue after a check that moved partitions or followed a
    ///     loss of every broker; messages read after it come from the new positions.
    public static func open(configuration: KafkaConfiguration, subscription: Subscription, logger: Logger,
                            name: String? = nil, checkInterval: Duration = .seconds(2), resetUnconfirmedBeyondEnd: Bool = false,
                            assignmentOffsets: (@Sendable ([KafkaTopicPartition]) -> [KafkaTopicPartition: AssignedStart])? = nil,
                            onLogCheck: (@Sendable (LogCheck) -> Void)? = nil) async throws -> KafkaConsumer {
        let consumer = try KafkaConsumer(configuration: configuration, subscription: subscription, logger: logger, name: name,
                                         checkInterval: checkInterval, resetUnconfirmedBeyondEnd: resetUnconfirmedBeyondEnd,
                                         assignmentOffsets: assignmentOffsets, onLogCheck: onLogCheck)
        try await consumer.client.run { _ in try consumer.start(subscription) }
        return consumer
    }

    /// Makes the handle only: no broker is asked.
    private init(configuration: KafkaConfiguration, subscription: Subscription, logger: Logger, name: String?,
                 checkInterval: Duration, resetUnconfirmedBeyondEnd: Bool,
                 assignmentOffsets: (@Sendable ([KafkaTopicPartition]) -> [KafkaTopicPartition: AssignedStart])?,
                 onLogCheck: (@Sendable (LogCheck) -> Void)?) throws {
        let groupId: String? = if case .group(let id, _) = subscription { id } else { nil }
        self.name = name ?? groupId ?? configuration.clientId
        self.checkInterval = checkInterval
        self.resetUnconfirmedBeyondEnd = resetUnconfirmedBeyondEnd
        self.onLogCheck = onLogCheck
        self.logger = logger
        context = RDKafkaCallbackContext(logger: logger, assignmentOffsets: assignmentOffsets)
        client = try RDKafkaClient(role: .consumer, properties: configuration.consumerProperties(groupId: groupId), callbackContext: context)
    }

    /// Subscribes, or assigns every partition of the topics from the start position. Blocks.
    private func start(_ subscription: Subscription) throws {
        switch subscription {
        case .group(_, let topics):
            try client.subscribe(topics: topics)
        case .allPartitions(let topics, let start):
            let counts = try client.partitionCounts(topics: topics, timeoutMilliseconds: 10_000)
            var assigned: [KafkaTopicPartition] = []
            var offsets: [KafkaTopicPartition: Int64] = [:]
            for topic in topics {
                guard let count = counts[topic] else { throw KafkaError(.configuration, "topic \(topic) does not exist") }
                for partition in 0..<Int32(count) {
                    let tp = KafkaTopicPartition(topic: topic, partition: partition)
                    // Resolve "end" now, so nothing produced after the consumer is made is missed while the
                    // first fetch resolves it.
                    let offset = start == .end
                        ? try client.watermarks(topic: topic, partition: partition, timeoutMilliseconds: 10_000).high
                        : RDKafkaClient.beginningOffset
                    offsets[tp] = offset
                    assigned.append(tp)
                    if offset >= 0 { context.positions.withLock { $0[tp] = KnownPosition(offset: offset, seenInLog: true) } }
                }
            }
            try client.assign(offsets)
            context.assignment.withLock { $0 = assigned }
            let ids = topics.compactMap { topic in (try? client.topicId(topic: topic, timeoutMilliseconds: 10_000)).flatMap { $0.map { (topic, $0) } } }
            seenTopicIds.withLock { seen in for (topic, id) in ids { seen[topic, default: []].insert(id) } }
        }
    }

    /// The partitions currently assigned to this consumer.
    public var assignment: [KafkaTopicPartition] { context.assignment.withLock { $0 } }

    /// Waits up to `timeout` for the first message, then takes whatever else is already fetched,
    /// up to `maxMessages`. Returns an empty array on timeout or once closed.
    public func poll(maxMessages: Int, timeout: Duration) async throws -> [KafkaMessage] {
        let timeoutMilliseconds = timeout.milliseconds
        return try await client.run { [self] client in
            checkPositionsIfDue()
            var messages: [KafkaMessage] = []
            var movedByLibrary: [LogMove] = []
            var wait = timeoutMilliseconds
            while messages.count < maxMessages, !closed.value {
                guard let read = client.consumerPoll(timeoutMilliseconds: wait) else { break }
                wait = 0
                let message: KafkaMessage
                switch read {
                case .success(let read): message = read
                case .failure(let error) where error.isFatal: throw error
                case .failure(let error):
                    // Transient (broker down, topic gone): librdkafka recovers by itself; positions are checked soon.
                    logger.debug("consumer notice", metadata: ["error": "\(error.message)"])
                    lastCheck.withLock { $0 = .now - checkInterval }
                    continue
                }
                // Per message, not per batch: a rebalance inside the poll replaces the map.
                // A message before the known position: librdkafka itself reset the partition (the broker said
                // the position was out of range, auto.offset.reset=earliest), so the log was replaced, and the
                // offset stored for the old one means nothing here.
                let known = context.positions.withLock { positions in
                    let known = positions[message.topicPartition]
                    let reset = known.map { message.offset < $0.offset } ?? false
                    positions[message.topicPartition] = reset ? KnownPosition(offset: message.offset + 1, seenInLog: true, resetByLibrary: true)
                        : known?.reading(message.offset) ?? KnownPosition(offset: message.offset + 1, seenInLog: true)
                    return known
                }
                if let known, message.offset < known.offset {
                    movedByLibrary.append(LogMove(partition: message.topicPartition, position: known.claimed, low: message.offset,
                                                  high: -1, resetTo: message.offset))
                }
                messages.append(message)
            }
            if !movedByLibrary.isEmpty {
                report(movedByLibrary)
                onLogCheck?(LogCheck(moves: movedByLibrary, afterBrokerLoss: false))
            }
            return messages
        }
    }

    /// Compares each assigned partition's position with its log, every `checkInterval` and at once after
    /// every broker was down; a position outside the log is reset to the log's start (see `LogMove`).
    /// Runs on the client's queue. A check that cannot reach the broker is tried again at the next interval.
    private func checkPositionsIfDue() {
        // Taken now, so a loss of every broker during this check is seen by the next one.
        let afterBrokerLoss = context.brokersWereDown.clear()
        let now = ContinuousClock.now
        guard afterBrokerLoss || lastCheck.withLock({ now - $0 >= checkInterval }) else { return }
        lastCheck.withLock { $0 = now }
        let assigned = assignment
        let known = context.positions.withLock { $0 }
        var moves: [LogMove] = []
        var highs: [KafkaTopicPartition: Int64] = [:]
        var lows: [KafkaTopicPartition: Int64] = [:]
        let lastHighs = self.lastHighs.withLock { $0 }
        let seenTopicIds = self.seenTopicIds.withLock { $0 }
        var topicIds: [String: KafkaTopicId] = [:]
        var replacedTopics: Set<String> = []
        for topic in Set(assigned.map(\.topic)) {
            // No id (a library or broker without them, a missing topic, a failed request): the offsets below still decide.
            guard let id = (try? client.topicId(topic: topic, timeoutMilliseconds: 1_000)) ?? nil else { continue }
            topicIds[topic] = id
            if let seen = seenTopicIds[topic], !seen.contains(id) {
                replacedTopics.insert(topic)
                logger.warning("topic made again under its name", metadata: [
                    "consumer": "\(name)", "topic": "\(topic)", "seen_ids": "\(seen.map(\.description).sorted())", "new_id": "\(id)",
                ])
            }
        }
        for partition in assigned {
            guard let marks = try? client.watermarks(topic: partition.topic, partition: partition.partition, timeoutMilliseconds: 1_000) else {
                // Broker unreachable or topic missing: tried again at the next interval, still as after a loss.
                if afterBrokerLoss { context.brokersWereDown.value = true }
                return
            }
            highs[partition] = marks.high
            lows[partition] = marks.low
            guard let position = known[partition] else { continue }
            // The end moved back, the position is before the start, or beyond the end of an empty log (or, for
            // a position from outside, of any log when asked): the log is not the one the position is in. A rewound
            // position counts where it was stored once it has read to the end: before, tansu's end (its last batch's
            // base + 1) may not yet have been read past.
            let storedBeyondEnd = position.stored.map { $0 > marks.high && position.offset >= marks.high } ?? false
            let moved = marks.high < (lastHighs[partition] ?? 0) || position.offset < marks.low
                || (position.offset > marks.high && (marks.high == 0 || (!position.seenInLog && resetUnconfirmedBeyondEnd)))
                || (storedBeyondEnd && (marks.high == 0 || resetUnconfirmedBeyondEnd))
            if moved {
                moves.append(LogMove(partition: partition, position: position.claimed, low: marks.low, high: marks.high, resetTo: marks.low))
            }
        }
        self.lastHighs.withLock { $0 = highs }
        // A log that went back is a topic made again or a broker that lost it: every partition of that topic
        // was replaced, also those whose new log already reached the old position before this check.
        replacedTopics.formUnion(moves.filter { $0.position > $0.high }.map(\.partition.topic))
        for partition in assigned where replacedTopics.contains(partition.topic) && !moves.contains(where: { $0.partition == partition }) {
            guard let position = known[partition], !position.resetByLibrary, let low = lows[partition], let high = highs[partition],
                  position.offset > low else { continue }
            moves.append(LogMove(partition: partition, position: position.offset, low: low, high: high, resetTo: low))
        }
        // A library reset exempts its partition from this check only.
        context.positions.withLock { positions in
            for (partition, position) in positions where position.resetByLibrary { positions[partition]?.resetByLibrary = false }
        }
        if !moves.isEmpty {
            do {
                try client.seek(Dictionary(uniqueKeysWithValues: moves.map { ($0.partition, $0.resetTo) }), timeoutMilliseconds: 5_000)
            } catch {
                logger.error("could not reset positions outside their logs; trying again", metadata: ["error": "\(error)"])
                if afterBrokerLoss { context.brokersWereDown.value = true }
                return
            }
            context.positions.withLock { positions in
                for move in moves { positions[move.partition] = KnownPosition(offset: move.resetTo, seenInLog: true) }
            }
            report(moves)
        }
        // Kept only once the moves are made: a failed seek leaves the new ids unseen, so the next check finds them again.
        self.seenTopicIds.withLock { seen in for (topic, id) in topicIds { seen[topic, default: []].insert(id) } }
        if !moves.isEmpty || afterBrokerLoss {
            onLogCheck?(LogCheck(moves: moves, afterBrokerLoss: afterBrokerLoss))
        }
    }

    /// Logs and counts partitions whose log moved under this consumer.
    private func report(_ moves: [LogMove]) {
        for move in moves {
            logger.warning("consumer position outside its partition's log (broker lost or topic re-created): reading from the log's start", metadata: [
                "consumer": "\(name)", "topic": "\(move.partition.topic)", "partition": "\(move.partition.partition)",
                "stored": "\(move.position)", "low": "\(move.low)", "high": "\(move.high)",
            ])
            Counter(label: "itour_consumer_offset_resets_total", dimensions: [
                ("consumer", name), ("topic", move.partition.topic), ("partition", String(move.partition.partition)),
            ], help: "Times a consumer's stored offset was outside its partition's log and reading restarted from the log's start, by consumer, topic and partition.").increment()
        }
    }

    /// Commits `message`'s offset (the next one to read) for its partition; returns after the broker stored it.
    public func commit(_ message: KafkaMessage) async throws {
        try await commit(offsets: [message.topicPartition: message.offset + 1])
    }

    /// Commits the next offset to read for each partition.
    public func commit(offsets: [KafkaTopicPartition: Int64]) async throws {
        guard !offsets.isEmpty else { return }
        try await client.run { try $0.commit(offsets) }
    }

    /// High watermark minus the next offset this consumer will read, per assigned partition.
    public func lag() async throws -> [KafkaTopicPartition: Int64] {
        let partitions = assignment
        return try await client.run { client in
            var lags: [KafkaTopicPartition: Int64] = [:]
            for (partition, position) in client.positions(partitions) {
                // Asked of the broker: librdkafka's cached marks are 0 until its first fetch answered, which
                // made a replay that had read nothing yet look finished.
                let marks = try client.watermarks(topic: partition.topic, partition: partition.partition, timeoutMilliseconds: 2_000)
                lags[partition] = position >= 0 ? Swift.max(0, marks.high - position) : Swift.max(0, marks.high - marks.low)
            }
            return lags
        }
    }

    /// Leaves the group (so its partitions move to other members at once) and stops reading.
    public func close() async {
        guard !closed.set() else { return }
        _ = try? await client.run { $0.closeConsumer() }
    }

    /// As a `Service`: closes the consumer on graceful shutdown.
    public func run() async throws {
        try? await gracefulShutdown()
        await close()
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let consumer: KafkaConsumer
        var buffer: [KafkaMessage] = []

        public mutating func next() async throws -> KafkaMessage? {
            while buffer.isEmpty {
                if consumer.closed.value || Task.isCancelled { return nil }
                buffer = try await consumer.poll(maxMessages: 64, timeout: .milliseconds(200)).reversed()
            }
            return buffer.popLast()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(consumer: self) }
}
