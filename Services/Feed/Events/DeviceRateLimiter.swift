import Foundation
import Synchronization

/// A token bucket per device: each device may send `eventsPerMinute` events per minute, in bursts of up
/// to a minute's worth. A batch is let through whole or not at all, so a phone that is told to retry
/// resends exactly what it sent.
final class DeviceRateLimiter: Sendable {
    struct Limited: Error, Sendable {
        let deviceId: String
        /// Seconds until the device may send this many events again.
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
    /// Above this many tracked devices, buckets that are full again are dropped.
    private let pruneThreshold = 100_000

    init(eventsPerMinute: Int) {
        self.eventsPerMinute = eventsPerMinute
    }

    /// False when the limit is off (`eventsPerMinute` 0): nothing to count.
    var isLimiting: Bool { eventsPerMinute > 0 }

    /// Takes `count` tokens from each device's bucket, or none at all when one device lacks them.
    /// `now` is in seconds on any monotonic clock.
    func take(_ counts: [String: Int], now: Double = DeviceRateLimiter.now()) throws(Limited) {
        guard isLimiting else { return }
        let capacity = Double(eventsPerMinute), perSecond = capacity / 60
        let refusal: Limited? = buckets.withLock { buckets in
            var updated: [(String, Bucket)] = []
            for (device, count) in counts {
                var bucket = buckets[device] ?? Bucket(tokens: capacity, updated: now)
                bucket.tokens = min(capacity, bucket.tokens + max(0, now - bucket.updated) * perSecond)
                bucket.updated = now
                if Double(count) > bucket.tokens {
                    let exceeds = Double(count) > capacity
                    let wait = exceeds ? 60 : Int(((Double(count) - bucket.tokens) / perSecond).rounded(.up))
                    return Limited(deviceId: device, retryAfterSeconds: max(1, wait), batchExceedsAllowance: exceeds)
                }
                bucket.tokens -= Double(count)
                updated.append((device, bucket))
            }
            for (device, bucket) in updated { buckets[device] = bucket }
            if buckets.count > pruneThreshold {
                buckets = buckets.filter { $0.value.tokens + (now - $0.value.updated) * perSecond < capacity }
            }
            return nil
        }
        if let refusal { throw refusal }
    }

    /// Gives tokens back for events the broker did not take, so a device is not charged for our outage.
    func refund(_ counts: [String: Int]) {
        guard isLimiting else { return }
        let capacity = Double(eventsPerMinute)
        buckets.withLock { buckets in
            for (device, count) in counts {
                guard var bucket = buckets[device] else { continue }
                bucket.tokens = min(capacity, bucket.tokens + Double(count))
                buckets[device] = bucket
            }
        }
    }

    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
