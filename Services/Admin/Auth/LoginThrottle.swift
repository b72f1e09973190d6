import Foundation

/// Slows down password guessing: after `perAccount` failed log-ins for one email (or `perAddress` from one
/// client address) within 15 minutes, further attempts must wait, 30 s at first and doubling with each
/// further failure, up to 15 minutes. The counts live in Postgres so every admin instance sees them.
struct LoginThrottle: Sendable {
    let repository: any LoginFailureRepository
    let perAccount: Int
    let perAddress: Int
    static let window: TimeInterval = 15 * 60
    static let maximumWait: TimeInterval = 15 * 60

    static func accountKey(_ email: String) -> String { "email:\(email.lowercased())" }
    static func addressKey(_ address: String) -> String { "ip:\(address)" }

    /// Seconds to wait before the next attempt is even checked, or nil when one may try now.
    func waitSeconds(email: String, address: String, now: Date = Date()) async throws -> Int? {
        var wait: TimeInterval = 0
        for key in [Self.accountKey(email), Self.addressKey(address)] {
            if let lockedUntil = try await repository.failures(key: key)?.lockedUntil, lockedUntil > now {
                wait = max(wait, lockedUntil.timeIntervalSince(now))
            }
        }
        return wait > 0 ? Int(wait.rounded(.up)) : nil
    }

    /// Counts a failure; returns the seconds to wait from now on, if this failure imposed a wait.
    @discardableResult
    func recordFailure(email: String, address: String, now: Date = Date()) async throws -> Int? {
        var wait: TimeInterval = 0
        for (key, limit, base) in [(Self.accountKey(email), perAccount, 30.0), (Self.addressKey(address), perAddress, 60.0)] {
            var failures = try await repository.failures(key: key) ?? LoginFailures(count: 0, lastFailureAt: now, lockedUntil: nil)
            if now.timeIntervalSince(failures.lastFailureAt) > Self.window { failures.count = 0 }
            failures.count += 1
            failures.lastFailureAt = now
            if failures.count >= limit {
                let seconds = min(Self.maximumWait, base * pow(2, Double(min(failures.count - limit, 10))))
                failures.lockedUntil = now.addingTimeInterval(seconds)
                wait = max(wait, seconds)
            }
            try await repository.saveFailures(key: key, failures)
        }
        return wait > 0 ? Int(wait) : nil
    }

    /// A successful log-in clears the account's count (not the address's: one right password does not excuse many guesses).
    func recordSuccess(email: String) async throws {
        try await repository.clearFailures(key: Self.accountKey(email))
    }
}
