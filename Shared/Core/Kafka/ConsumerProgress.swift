import Foundation
import Logging
import Metrics
import ServiceLifecycle
import Synchronization

/// How far a consumer is in one partition: the broker's offsets and the consumer's own.
public struct PartitionProgress: Sendable, Equatable {
    /// The partition's first offset on the broker (low watermark).
    public var start: Int64
    /// The offset after the partition's last message on the broker (high watermark).
    public var end: Int64
    /// The next offset the consumer still has to finish (stored with its work, or handled last + 1).
    public var done: Int64

    public init(start: Int64, end: Int64, done: Int64) {
        (self.start, self.end, self.done) = (start, end, done)
    }

    /// True when the consumer's offset is beyond the partition's end: the log moved under it (a broker
    /// that came back empty, a topic deleted and re-created), so nothing there now has been handled.
    public var movedUnder: Bool { done > end }
    /// The consumer's place in the log as it is now.
    public var position: Int64 { movedUnder ? start : max(done, start) }
    /// Messages on the broker the consumer has not finished.
    public var waiting: Int64 { end - position }
}

/// A partition's low and high watermarks.
public struct KafkaWatermarks: Sendable, Equatable {
    public var low: Int64
    public var high: Int64
}

/// Asks the broker for the offsets of a topic's partitions, through a client of its own that joins no group
/// and reads nothing (so it answers while a consumer is busy or stuck).
public final class KafkaOffsetQuery: Sendable {
    private let client: RDKafkaClient

    public init(configuration: KafkaConfiguration) throws {
        var properties = configuration.common
        properties["client.id"] = configuration.clientId + "-offsets"
        client = try RDKafkaClient(role: .producer, properties: properties)
    }

    /// Every partition of `topic` (the full name, prefix included), as the broker has it now.
    public func watermarks(topic: String, timeout: Duration = .seconds(2)) async throws -> [Int32: KafkaWatermarks] {
        try await client.run { client in
            guard let count = try client.partitionCounts(topics: [topic], timeoutMilliseconds: timeout.milliseconds)[topic] else {
                throw KafkaError(.configuration, "topic \(topic) does not exist")
            }
            var result: [Int32: KafkaWatermarks] = [:]
            for partition in 0..<Int32(count) {
                let marks = try client.watermarks(topic: topic, partition: partition, timeoutMilliseconds: timeout.milliseconds)
                result[partition] = KafkaWatermarks(low: marks.low, high: marks.high)
            }
            return result
        }
    }
}

/// The end offset of each partition of one topic, as this process can know it: the broker's answer to a
/// ListOffsets request (`KafkaOffsetQuery`), and the offset after the newest message a probe consumer of its
/// own has fetched (it starts at the end and follows the topic, so it reads what arrives once more, without
/// decoding it). Both are lower bounds of the true end; the larger is used. The probe is there because some
/// brokers answer ListOffsets with less than the end (tansu: the last batch's first offset + 1), which would
/// hide whole batches of waiting messages and make a consumer look ahead of the log.
public final class KafkaTopicEnds: Service, Sendable {
    public let topic: String
    private let configuration: KafkaConfiguration
    private let query: KafkaOffsetQuery
    private let logger: Logger
    /// Per partition, the offset after the newest message the probe fetched (the latest, so a log that
    /// restarted lower is followed down too). A partition's is forgotten when its log is replaced (the probe's own
    /// position check, `forget`): else a partition that gets nothing new after a broker loss or a topic made again
    /// would keep the old log's end, and a consumer reading the new log from 0 would look that far behind for good.
    private let seen = Mutex<[Int32: Int64]>([:])
    private let following = Flag(false)

    /// True once the probe follows the topic (what arrives from then on moves the ends).
    public var isFollowing: Bool { following.value }
    /// How long the broker may hold the probe's fetch that found nothing new.
    static let probeFetchWaitMilliseconds = 100
    /// How long a message may be on the broker before the probe has seen it (a held fetch, then the next): a sample's
    /// ends stand for the topic as it was this long before the sample.
    public static let probeDelay: Duration = .milliseconds(2 * probeFetchWaitMilliseconds)

    /// `topic` is the full name, prefix included.
    public init(topic: String, configuration: KafkaConfiguration, logger: Logger) throws {
        self.topic = topic
        var probing = configuration
        // The probe's fetches may wait longer than a worker's (samples count from `probeDelay` before they are taken): a
        // broker that holds an empty fetch for its whole wait (tansu) is otherwise asked fifty times a second by every probe.
        probing.fetchWaitMaxMilliseconds = max(configuration.fetchWaitMaxMilliseconds, Self.probeFetchWaitMilliseconds)
        self.configuration = probing
        self.logger = logger
        query = try KafkaOffsetQuery(configuration: configuration)
    }

    public func run() async throws {
        try? await cancelWhenGracefulShutdown {
            var probe: KafkaConsumer?
            while !Task.isCancelled {
                do {
                    let consumer: KafkaConsumer
                    if let probe {
                        consumer = probe
                    } else {
                        consumer = try await KafkaConsumer.open(configuration: self.configuration,
                                                                subscription: .allPartitions(topics: [self.topic], from: .end), logger: self.logger,
                                                                onLogCheck: { [self] check in self.forget(check) })
                        probe = consumer
                        _ = self.following.set()
                    }
                    let messages = try await consumer.poll(maxMessages: 10_000, timeout: .milliseconds(200))
                    guard !messages.isEmpty else { continue }
                    self.seen.withLock { seen in
                        for message in messages { seen[message.partition] = message.offset + 1 }
                    }
                } catch {
                    // The topic not there yet, or the probe failed for good: start a new one shortly.
                    self.logger.debug("end probe failed; retrying", metadata: ["topic": "\(self.topic)", "error": "\(error)"])
                    await probe?.close()
                    probe = nil
                    // A new probe starts at the broker's answer and fetches the batch holding it, so it learns a surviving
                    // log's end again at once; what the old one saw may be another log's.
                    self.seen.withLock { $0 = [:] }
                    try await Task.sleep(for: .seconds(1))
                }
            }
            await probe?.close()
        }
    }

    /// A replaced log (the probe's position check moved its partition: a log that went back or emptied, a topic made
    /// again): what the probe saw of the old log says nothing of the new one's end. Only moved partitions: after every
    /// broker was down, a log that survived keeps the end the probe read, which the broker's answer may not reach.
    /// Called in the probe's poll before its messages are returned, so the new log's messages set the ends after it.
    private func forget(_ check: KafkaConsumer.LogCheck) {
        seen.withLock { seen in
            for move in check.moves where move.partition.topic == topic { seen[move.partition.partition] = nil }
        }
    }

    /// Low and high watermark of every partition; `high` is the larger of the broker's answer and the probe's.
    public func watermarks() async throws -> [Int32: KafkaWatermarks] {
        var marks = try await query.watermarks(topic: topic)
        for (partition, end) in seen.withLock({ $0 }) {
            if var mark = marks[partition] {
                mark.high = max(mark.high, end)
                marks[partition] = mark
            }
        }
        return marks
    }
}

/// What a consumer that keeps no offsets of its own has handled, for a `LagWatch`: the consumer loop calls
/// `attach` with its consumer and `handled` after each message.
public final class ConsumerProgress: Sendable {
    private let consumer = Mutex<KafkaConsumer?>(nil)
    private let handledOffsets = Mutex<[KafkaTopicPartition: Int64]>([:])
    /// Per partition never handled: its end when first seen (the consumer starts there or earlier).
    private let firstSeenEnds = Mutex<[KafkaTopicPartition: Int64]>([:])

    public init() {}

    public func attach(_ consumer: KafkaConsumer) {
        self.consumer.withLock { $0 = consumer }
    }

    public func handled(_ message: KafkaMessage) {
        handledOffsets.withLock { $0[message.topicPartition] = message.offset + 1 }
    }

    /// Per partition of `ends.topic` assigned to the consumer, the broker's offsets and the next offset after
    /// the last message handled.
    public func sample(_ ends: KafkaTopicEnds) async throws -> [KafkaTopicPartition: PartitionProgress] {
        guard let consumer = consumer.withLock({ $0 }) else { return [:] }
        let assigned = consumer.assignment
        var result: [KafkaTopicPartition: PartitionProgress] = [:]
        if assigned.contains(where: { $0.topic == ends.topic }) {
            let topic = ends.topic
            let marks = try await ends.watermarks()
            let handled = handledOffsets.withLock { $0 }
            for partition in assigned where partition.topic == topic {
                guard let mark = marks[partition.partition] else { continue }
                let done = handled[partition] ?? firstSeenEnds.withLock { seen in
                    if let end = seen[partition] { return end }
                    seen[partition] = mark.high
                    return mark.high
                }
                result[partition] = PartitionProgress(start: mark.low, end: mark.high, done: done)
            }
        }
        return result
    }
}

/// Watches one consumer's progress, sampling every `interval`, and says when it is degraded: messages wait
/// and the lag has not shrunk over the last `window` (DESIGN.md "Readiness and degraded consumers"). It also
/// knows up to when the consumer has caught up: the newest sample time whose broker ends it has reached
/// (DESIGN.md "Report semantics", freshness).
public final class LagWatch: Service, Sendable {
    public typealias Sampler = @Sendable () async throws -> [KafkaTopicPartition: PartitionProgress]

    public struct Status: Sendable, Equatable {
        /// Messages waiting at the latest sample; nil before the first.
        public var waiting: Int64?
        /// Everything on the broker before this instant has been handled; nil until first known.
        public var caughtUpTo: Date?
        /// When the latest sample was taken.
        public var checkedAt: Date?
        /// Why the consumer is degraded; nil when it is not.
        public var degraded: String?
        /// When the watch was made (what `caughtUpTo` falls back to).
        public var startedAt: Date

        /// Whole seconds from `caughtUpTo` (else the watch's start) to `now`.
        public func behindSeconds(now: Date = Date()) -> Int {
            max(0, Int(now.timeIntervalSince(caughtUpTo ?? startedAt)))
        }
    }

    struct Sample: Sendable {
        let at: ContinuousClock.Instant
        let wall: Date
        let progress: [KafkaTopicPartition: PartitionProgress]
        let waiting: Int64
    }

    struct State: Sendable {
        /// Oldest first: the newest sample at least `window` old, and every later one.
        var history: [Sample] = []
        /// Samples' ends not yet reached, oldest first.
        var pending: [(wall: Date, ends: [KafkaTopicPartition: Int64])] = []
        /// Partitions whose consumer offset was beyond the end at the previous sample.
        var beyondEnd: Set<KafkaTopicPartition> = []
        var status: Status
    }

    public let name: String
    public let window: Duration
    public let interval: Duration
    public let endsDelay: Duration
    private let sampler: Sampler
    private let state: Mutex<State>
    private let logger: Logger
    private let degradedGauge: Gauge
    private let waitingGauge: Gauge

    /// `endsDelay`: how old the ends a sample reads may be (`KafkaTopicEnds.probeDelay`); a sample counts from that long
    /// before it was taken, so `caughtUpTo` never claims a message the ends did not yet show.
    public init(name: String, window: Duration = .seconds(30), interval: Duration = .seconds(1), endsDelay: Duration = .zero, logger: Logger,
                sampler: @escaping Sampler) {
        self.name = name
        self.endsDelay = endsDelay
        self.window = window
        self.interval = interval
        self.sampler = sampler
        self.logger = logger
        state = Mutex(State(status: Status(startedAt: Date())))
        degradedGauge = Gauge(label: "itour_consumer_degraded", dimensions: [("consumer", name)],
                              help: "1 while the consumer is degraded (stuck or not keeping up; see /ready), else 0, by consumer.")
        degradedGauge.record(0)
        waitingGauge = Gauge(label: "itour_consumer_waiting", dimensions: [("consumer", name)],
                             help: "Messages waiting for the consumer on all its partitions, against the broker's ends, by consumer.")
    }

    public var status: Status { state.withLock { $0.status } }

    /// The readiness check `consumer <name>`: passes always (degraded is not unready), degraded with the reason.
    public var readinessCheck: ReadinessCheck {
        ReadinessCheck("consumer \(name)") { [self] in status.degraded.map { .degraded($0) } ?? .ready }
    }

    public func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                await self.sampleOnce()
                try await Task.sleep(for: self.interval)
            }
        }
    }

    /// Takes one sample now; a failed one (broker or Postgres away) changes nothing, the checks of those say so.
    public func sampleOnce() async {
        let at = ContinuousClock.now, wall = Date(timeIntervalSinceNow: -endsDelay.seconds)
        do {
            record(try await sampler(), at: at, wall: wall)
        } catch {
            logger.debug("consumer progress not sampled", metadata: ["consumer": "\(name)", "error": "\(error)"])
        }
    }

    func record(_ sampled: [KafkaTopicPartition: PartitionProgress], at: ContinuousClock.Instant, wall: Date) {
        let window = self.window
        let (before, after, waiting) = state.withLock { state -> (String?, String?, Int64) in
            let before = state.status.degraded
            // An offset beyond the end is believed from the second sample in a row: the ends may trail the
            // consumer's progress by a fetch.
            var progress = sampled
            for (partition, current) in sampled where current.movedUnder && !state.beyondEnd.contains(partition) {
                progress[partition]?.done = current.end
            }
            state.beyondEnd = Set(sampled.filter { $0.value.movedUnder }.keys)
            let waiting = progress.values.reduce(0) { $0 + $1.waiting }
            state.history.append(Sample(at: at, wall: wall, progress: progress, waiting: waiting))
            if let old = state.history.lastIndex(where: { at - $0.at >= window }), old > 0 {
                state.history.removeFirst(old)
            }
            let base = state.history.first.flatMap { at - $0.at >= window ? $0 : nil }
            state.status.degraded = base.flatMap { Self.degradedReason(progress, waiting: waiting, base: $0, now: at) }

            // Caught up to a sample once every end it saw is reached (an end beyond today's, from a log that was
            // replaced, counts as reached once today's end is).
            state.pending.append((wall, progress.mapValues(\.end)))
            while let first = state.pending.first, first.ends.allSatisfy({ partition, end in
                guard let now = progress[partition] else { return true }
                return now.position >= min(end, now.end)
            }) {
                state.status.caughtUpTo = first.wall
                state.pending.removeFirst()
            }
            if state.pending.count > 4_096 {
                // Fewer, older samples only make caughtUpTo coarser, never later than it truly is.
                state.pending = state.pending.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
            }
            state.status.waiting = waiting
            state.status.checkedAt = wall
            return (before, state.status.degraded, waiting)
        }
        degradedGauge.record(after == nil ? 0 : 1)
        waitingGauge.record(waiting)
        if let after, before == nil {
            logger.warning("consumer degraded", metadata: ["consumer": "\(name)", "reason": "\(after)"])
        } else if after == nil, before != nil {
            logger.info("consumer no longer degraded", metadata: ["consumer": "\(name)", "waiting": "\(waiting)"])
        }
    }

    /// Degraded: messages wait, no fewer than `window` ago, and some message already on the broker then is still
    /// waiting now. A backlog being worked off shrinks; a stream read promptly has nothing that old waiting.
    static func degradedReason(_ progress: [KafkaTopicPartition: PartitionProgress], waiting: Int64, base: Sample,
                               now: ContinuousClock.Instant) -> String? {
        guard waiting > 0, waiting >= base.waiting else { return nil }
        let stuck = progress.filter { partition, current in
            base.progress[partition].map { current.position < $0.end } ?? false
        }.sorted { $0.value.waiting > $1.value.waiting }
        guard let worst = stuck.first else { return nil }
        let seconds = (now - base.at).components.seconds
        var reason = "\(waiting) messages waiting, not fewer than \(seconds) s ago (\(base.waiting)): \(worst.key) at offset \(worst.value.position) of \(worst.value.end)"
        if let moved = progress.filter({ $0.value.movedUnder }).min(by: { $0.key.description < $1.key.description }) {
            reason += "; offset \(moved.value.done) is beyond the end (\(moved.value.end)) of \(moved.key): the log moved under this consumer"
        }
        return reason
    }
}

extension LagWatch {
    /// `CONSUMER_STALL_SECONDS` (30): how long a consumer's lag may wait without shrinking before it is degraded.
    public static func stallWindow(_ environment: Environment = Environment()) throws -> Duration {
        .seconds(try environment.int(.consumerStallSeconds))
    }

    /// A watch of the consumer that reports to `progress` on `topic` (its full name), with the probe of the topic's
    /// ends it samples against. Run both as services, after start-up; add `watch.readinessCheck` to `/ready`.
    public static func watching(_ progress: ConsumerProgress, name: String, topic: String, configuration: KafkaConfiguration,
                                logger: Logger) throws -> (ends: KafkaTopicEnds, watch: LagWatch) {
        let ends = try KafkaTopicEnds(topic: topic, configuration: configuration, logger: logger)
        let watch = LagWatch(name: name, window: try stallWindow(), endsDelay: KafkaTopicEnds.probeDelay, logger: logger) {
            try await progress.sample(ends)
        }
        return (ends, watch)
    }
}
