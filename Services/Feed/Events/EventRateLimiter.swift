import Foundation
import Synchronization

/// A token bucket per key — a device id, or a client address (`EventIngest.clientKey`): each key may send
/// `eventsPerMinute` events per minute, in bursts of up to a minute's worth. A batch is let through whole or
/// not at all, so a phone that is told to retry resends exactly what it sent.
final class EventRateLimiter: Sendable {
    struct Limited: Error, Sendable {
        /// The device id or client address that is over its allowance.
        let key: String
        /// Seconds until the key may send this many events again.
        let retryAfterSeconds: Int
        /// True when the batch alone is more than a minute's allowance: retrying it as is never succeeds.
        let batchExceedsAllowance: Bool
    }

    private struct Bucket {
        var tokens: Double
        var updated: Double
    }

    let eventsPerMinute: Int
    private let buckets = Mutex<[String: Bucket]>([:])
    /// Above this many tracked keys, buckets that are full again are dropped.
    private let pruneThreshold = 100_000

    init(eventsPerMinute: Int) {
        self.eventsPerMinute = eventsPerMinute
    }

    /// False when the limit is off (`eventsPerMinute` 0): nothing to count.
    var isLimiting: Bool { eventsPerMinute > 0 }

    /// Takes `count` tokens from each key's bucket, or none at all when one key lacks them.
    /// `now` is in seconds on any monotonic clock.
    func take(_ counts: [String: Int], now: Double = EventRateLimiter.now()) throws(Limited) {
        guard isLimiting else { return }
        let refusal: Limited? = buckets.withLock { buckets in
            var updated: [(String, Bucket)] = []
            for (key, count) in counts {
                switch refilled(buckets[key], key: key, taking: count, now: now) {
                case .success(let bucket): updated.append((key, bucket))
                case .failure(let refusal): return refusal
                }
            }
            for (key, bucket) in updated { buckets[key] = bucket }
            prune(&buckets, now: now)
            return nil
        }
        if let refusal { throw refusal }
    }

    /// `take` for one key, without a dictionary.
    func take(_ key: String, _ count: Int, now: Double = EventRateLimiter.now()) throws(Limited) {
        guard isLimiting else { return }
        let refusal: Limited? = buckets.withLock { buckets in
            switch refilled(buckets[key], key: key, taking: count, now: now) {
            case .success(let bucket):
                buckets[key] = bucket
                prune(&buckets, now: now)
                return nil
            case .failure(let refusal):
                return refusal
            }
        }
        if let refusal { throw refusal }
    }

    /// The bucket refilled up to `now` with `count` taken, or why it cannot give them.
    private func refilled(_ bucket: Bucket?, key: String, taking count: Int, now: Double) -> Result<Bucket, Limited> {
        let capacity = Double(eventsPerMinute), perSecond = capacity / 60
        var bucket = bucket ?? Bucket(tokens: capacity, updated: now)
        bucket.tokens = min(capacity, bucket.tokens + max(0, now - bucket.updated) * perSecond)
        bucket.updated = now
        if Double(count) > bucket.tokens {
            let exceeds = Double(count) > capacity
            let wait = exceeds ? 60 : Int(((Double(count) - bucket.tokens) / perSecond).rounded(.up))
            return .failure(Limited(key: key, retryAfterSeconds: max(1, wait), batchExceedsAllowance: exceeds))
        }
        bucket.tokens -= Double(count)
        return .success(bucket)
    }

    private func prune(_ buckets: inout [String: Bucket], now: Double) {
        guard buckets.count > pruneThreshold else { return }
        let capacity = Double(eventsPerMinute), perSecond = capacity / 60
        buckets = buckets.filter { $0.value.tokens + (now - $0.value.updated) * perSecond < capacity }
    }

    /// Gives tokens back for events the broker did not take (or a batch refused after they were taken), so a
    /// sender is not charged for our outage.
    func refund(_ counts: [String: Int]) {
        guard isLimiting else { return }
        buckets.withLock { buckets in
            for (key, count) in counts { refund(&buckets, key, count) }
        }
    }

    /// `refund` for one key.
    func refund(_ key: String, _ count: Int) {
        guard isLimiting else { return }
        buckets.withLock { buckets in refund(&buckets, key, count) }
    }

    private func refund(_ buckets: inout [String: Bucket], _ key: String, _ count: Int) {
        guard var bucket = buckets[key] else { return }
        bucket.tokens = min(Double(eventsPerMinute), bucket.tokens + Double(count))
        buckets[key] = bucket
    }

    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
