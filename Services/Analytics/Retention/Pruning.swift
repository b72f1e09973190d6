import Foundation
import Logging
import ServiceLifecycle
import Shared

/// How long analytics keeps what (docs/ANALYTICS.md "Retention", docs/PRIVACY.md).
struct RetentionPolicy: Sendable, Equatable {
    /// `ANALYTICS_RETENTION_DAYS`: event-level rows whose UTC day is more than this many days before today are pruned.
    var eventDays = 400
    /// Event ids are kept this many days after the day they were counted (`dedupeDays(topicConfig:)`, asked of the broker
    /// at each pass); nil: the broker could not be asked, and no id is pruned.
    var dedupeDays: Int? = RetentionPolicy.standardDedupeDays
    static let defaultEventDays = 400
    /// The feed accepts an event up to this many days after it happened (`TrackingEvent.validationError`).
    static let lateDays = 30
    /// Kafka's default segment roll (`log.roll.hours`, 7 days), taken when the broker does not report `segment.ms`.
    static let defaultSegmentMilliseconds: Int64 = 7 * 86_400_000
    /// The dedupe window for tracking.events as `Topics.swift` creates it (7 days' retention, the default roll): 45.
    static let standardDedupeDays = dedupeDays(retentionMilliseconds: Topic.trackingRetentionMilliseconds, segmentMilliseconds: defaultSegmentMilliseconds)
    /// The shortest `eventDays` taken: a late event (accepted 30 days after it happened) may be read as late as the topic
    /// keeps it and must still find its day's rows; and with a broker that cannot say its retention, ids are kept as long
    /// as the events, which must then cover what the standard topic can redeliver.
    static let minimumEventDays = standardDedupeDays
    /// The longest window of either kind: a century, before 1970 from any day this runs, so it prunes nothing. A topic
    /// "kept for ever" by a huge `retention.ms` (Long.MAX) must not overflow a day number.
    static let maximumDays = 36_600

    /// A message stays readable for the topic's retention plus a segment's roll after it was appended (Kafka deletes whole
    /// segments, once the newest message of one is older than the retention); a phone may send an event again 30 days
    /// after it happened, and the one counted may have arrived at once; one day's margin for the UTC day boundaries and a
    /// consumer that lags.
    static func dedupeDays(retentionMilliseconds: Int64, segmentMilliseconds: Int64) -> Int {
        let day: Int64 = 86_400_000
        return min(maximumDays, lateDays + Int((retentionMilliseconds + segmentMilliseconds + day - 1) / day) + 1)
    }

    /// The dedupe window for what the broker reports of tracking.events (`retention.ms`, `segment.ms`), and why. A broker
    /// that does not report the retention, or a topic kept for ever, keeps ids as long as the events: a message older
    /// than that could still be re-read, and only the events' own horizon bounds what is kept.
    func dedupeDays(topicConfig: [String: String]) -> (days: Int, reason: String) {
        guard let retention = topicConfig["retention.ms"].flatMap(Int64.init) else {
            return (eventDays, "the broker does not report the topic's retention.ms: ids kept as long as the events")
        }
        guard retention >= 0 else { return (eventDays, "the topic is kept for ever (retention.ms \(retention)): ids kept as long as the events") }
        let segment = topicConfig["segment.ms"].flatMap(Int64.init).flatMap { $0 > 0 ? $0 : nil } ?? Self.defaultSegmentMilliseconds
        let days = Self.dedupeDays(retentionMilliseconds: min(retention, Int64.max / 4), segmentMilliseconds: min(segment, Int64.max / 4))
        return (days, "retention.ms \(retention), segment.ms \(segment)")
    }

    /// The window that keeps every id a message sent at `oldest` may repeat: ids counted from 30 days before it (a phone's
    /// resend of an event counted then) on, and a day's margin.
    static func dedupeDays(holding oldest: Date, now: Date) -> Int {
        min(maximumDays, Int(Day(containing: now).number - Day(containing: oldest).number) + lateDays + 1)
    }

    /// The first UTC day kept for event-level rows, on `now`'s day.
    func firstEventDay(now: Date) -> Day { Day(containing: now).adding(days: -eventDays) }
    /// The first counting day whose event ids are kept; nil when none may be pruned.
    func firstDedupeDay(now: Date) -> Day? { dedupeDays.map { Day(containing: now).adding(days: -$0) } }
}

extension ConfigVariable {
    static let analyticsRetentionDays = optional(
        "ANALYTICS_RETENTION_DAYS", default: String(RetentionPolicy.defaultEventDays),
        "days event-level rows (device activity, tour marks, tourless events, stop visits) are kept, by their UTC day; "
            + "at least \(RetentionPolicy.minimumEventDays); aggregates are kept for ever, counted event ids as long as tracking.events can "
            + "bring them again (45 days for its standard 7 days' retention, docs/ANALYTICS.md \"Retention\")")
}

/// Prunes what the retention policy no longer keeps, inside the service (a `Service` of its group): one pass at start
/// and one an hour, each table in batches of `batchSize` rows, each batch its own short transaction that skips rows
/// the ingest holds (`FOR UPDATE SKIP LOCKED`), so pruning never blocks counting and two replicas never wait on each
/// other; a pass runs in one replica at a time (`pg_try_advisory_lock`), the other skips it. Each pass first asks the
/// broker how long tracking.events keeps messages (`topicConfig`) and when its oldest message still there was sent
/// (`oldestMessage`), which set how long event ids are kept.
final class PruningService: Service, Sendable {
    let store: PostgresPruningStore
    let policy: RetentionPolicy
    /// What the broker reports of tracking.events' configuration.
    let topicConfig: @Sendable () async throws -> [String: String]
    /// When the oldest message tracking.events still holds was sent (nil: it holds none).
    let oldestMessage: @Sendable () async throws -> Date?
    let interval: Duration
    let logger: Logger
    /// The clock; tests give their own instant.
    let now: @Sendable () -> Date

    init(store: PostgresPruningStore, policy: RetentionPolicy, topicConfig: @escaping @Sendable () async throws -> [String: String],
         oldestMessage: @escaping @Sendable () async throws -> Date?, interval: Duration = .seconds(3_600), logger: Logger,
         now: @escaping @Sendable () -> Date = { Date() }) {
        self.store = store
        self.policy = policy
        self.topicConfig = topicConfig
        self.oldestMessage = oldestMessage
        self.interval = interval
        self.logger = logger
        self.now = now
    }

    func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                if let pruned = try await store.pass(now: now(), policy: { await self.policyNow() }), pruned.values.contains(where: { $0 > 0 }) {
                    logger.notice("pruned what the retention no longer keeps", metadata: ["rows": "\(pruned.filter { $0.value > 0 })"])
                }
            } catch where !(error is CancellationError) {
                // Pruning can wait for the next pass; counting must not stop for it.
                logger.error("pruning failed; trying again at the next pass", metadata: ["error": "\(error)"])
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: self.interval) }
        }
    }
}

extension PruningService {
    /// The policy of this pass: the dedupe window from the topic's retention as the broker reports it now (an operator
    /// may change it at any time), widened to what the topic still holds (a consumer reading it from the start gets its
    /// oldest message again), or no id pruned when the broker cannot be asked.
    func policyNow() async -> RetentionPolicy {
        var policy = self.policy
        do {
            var (days, reason) = policy.dedupeDays(topicConfig: try await topicConfig())
            if let oldest = try await oldestMessage() {
                let held = RetentionPolicy.dedupeDays(holding: oldest, now: now())
                if held > days {
                    (days, reason) = (held, "tracking.events still holds a message sent \(RFC3339.format(oldest)), beyond its retention (\(reason))")
                }
            }
            policy.dedupeDays = days
            if days != RetentionPolicy.standardDedupeDays {
                logger.notice("event ids kept \(days) days", metadata: ["why": "\(reason)"])
            }
            if days > policy.eventDays {
                // A late event read that long after its day would find the day's rows pruned and count its device again.
                logger.warning("ANALYTICS_RETENTION_DAYS is shorter than tracking.events can redeliver; raise it to \(days)",
                               metadata: ["why": "\(reason)"])
            }
        } catch {
            policy.dedupeDays = nil
            logger.warning("the broker did not say how long tracking.events keeps messages; no event id pruned this pass",
                           metadata: ["error": "\(error)"])
        }
        return policy
    }
}
