import Foundation
import Logging
import ServiceLifecycle
import Shared

/// How long analytics keeps what (docs/ANALYTICS.md "Retention", docs/PRIVACY.md).
struct RetentionPolicy: Sendable, Equatable {
    /// `ANALYTICS_RETENTION_DAYS`: event-level rows whose UTC day is more than this many days before today are pruned.
    var eventDays = 400
    static let defaultEventDays = 400
    /// Event ids are kept this many days after the day they were counted: a phone may send an event again up to 30 days
    /// after it happened (the feed refuses older ones) and the counted one may have arrived at once; a message stays
    /// readable on tracking.events up to its retention (7 days) plus a segment's roll (`segment.ms`, 7 days by default)
    /// after it was appended; one day's margin for the UTC day boundaries and a consumer that lags.
    static let dedupeDays = 30 + 7 + 7 + 1
    /// The shortest `eventDays` taken: a late event (up to 30 days old) must still find the marks and events of its day.
    static let minimumEventDays = 31

    /// The first UTC day kept for event-level rows, on `now`'s day.
    func firstEventDay(now: Date) -> Day { Day(containing: now).adding(days: -eventDays) }
    /// The first counting day whose event ids are kept.
    func firstDedupeDay(now: Date) -> Day { Day(containing: now).adding(days: -Self.dedupeDays) }
}

extension ConfigVariable {
    static let analyticsRetentionDays = optional(
        "ANALYTICS_RETENTION_DAYS", default: String(RetentionPolicy.defaultEventDays),
        "days event-level rows (device activity, tour marks, tourless events, stop visits) are kept, by their UTC day; "
            + "aggregates are kept for ever, counted event ids 45 days (docs/PRIVACY.md)")
}

/// Prunes what the retention policy no longer keeps, inside the service (a `Service` of its group): one pass at start
/// and one an hour, each table in batches of `batchSize` rows, each batch its own short transaction that skips rows
/// the ingest holds (`FOR UPDATE SKIP LOCKED`), so pruning never blocks counting and two replicas never wait on each
/// other; a pass runs in one replica at a time (`pg_try_advisory_lock`), the other skips it.
final class PruningService: Service, Sendable {
    let store: PostgresPruningStore
    let policy: RetentionPolicy
    let interval: Duration
    let logger: Logger
    /// The clock; tests give their own instant.
    let now: @Sendable () -> Date

    init(store: PostgresPruningStore, policy: RetentionPolicy, interval: Duration = .seconds(3_600), logger: Logger,
         now: @escaping @Sendable () -> Date = { Date() }) {
        self.store = store
        self.policy = policy
        self.interval = interval
        self.logger = logger
        self.now = now
    }

    func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                if let pruned = try await store.pass(policy, now: now()), pruned.values.contains(where: { $0 > 0 }) {
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
