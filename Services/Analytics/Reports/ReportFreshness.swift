import Foundation
import Logging
import Shared

/// Up to when the reports count (DESIGN.md "Report semantics", freshness), from the ingest's lag watch: each
/// second it asks the broker for the ends of `tracking.events` and then Postgres for the offsets stored with
/// the aggregates, so `countedUpTo` is the newest such sample whose ends are all counted.
enum IngestLagWatch {
    static func make(ends: KafkaTopicEnds, store: any IngestStore, window: Duration, logger: Logger) -> LagWatch {
        let topic = ends.topic
        return LagWatch(name: "analytics", window: window, endsDelay: KafkaTopicEnds.probeDelay, logger: logger) {
            // Ends first: what they saw is counted once the stored offsets, read after them, reach them.
            let ends = try await ends.watermarks()
            let stored = try await store.storedOffsets(topic: topic)
            var progress: [KafkaTopicPartition: PartitionProgress] = [:]
            for (partition, marks) in ends {
                // No stored offset: the partition is read from its beginning.
                progress[KafkaTopicPartition(topic: topic, partition: partition)] =
                    PartitionProgress(start: marks.low, end: marks.high, done: stored[partition] ?? marks.low)
            }
            return progress
        }
    }
}

extension LagWatch {
    /// The body of `GET /v1/reports/freshness`.
    func reportFreshness(now: Date = Date()) -> ReportFreshness {
        let status = self.status
        return ReportFreshness(countedUpTo: status.caughtUpTo, waiting: status.waiting ?? 0, behindSeconds: status.behindSeconds(now: now),
                               checkedAt: now)
    }
}
