import Foundation

/// Slows down password guessing, at log-in and on the account page's password change. Every attempt is counted
/// as a failure *before* its password is checked, under a row lock in Postgres (so parallel attempts are counted
/// one after another, and every admin instance sees them); a right password then takes its count back.
///
/// Per account and per client address: once `perAccount` (or `perAddress`) attempts failed within 15 minutes,
/// the attempt that reached the limit waits `firstDelay` before the next is checked, and each further failure
/// doubles the wait, up to `maximumDelay`. Attempts refused while a wait runs are not counted and do not extend
/// it, so guessing can hold an account back by at most `maximumDelay` after its last checked guess.
struct LoginThrottle: Sendable {
    let repository: any LoginFailureRepository
    let perAccount: Int
    let perAddress: Int
    var firstDelay: TimeInterval = 10
    var maximumDelay: TimeInterval = 60
    static let window: TimeInterval = 15 * 60

    /// What is being guessed: a log-in, or the current password on the account page (counted apart, so guessing
    /// with a stolen session does not also hold back the owner's log-in).
    enum Purpose: String, Sendable {
        case logIn = "email"
        case passwordChange = "password"
    }

    /// An attempt that may be checked now; it counts as failed until `succeeded(_:)`.
    struct Attempt: Sendable {
        let accountKey: String
        let addressKey: String
        /// The seconds the next attempt must wait if this one fails (it reached a limit), else nil.
        let waitIfWrong: Int?
    }

    enum Outcome: Sendable {
        case check(Attempt)
        /// Not checked: wait this many seconds.
        case wait(Int)
    }

    static func key(_ purpose: Purpose, account: String) -> String { "\(purpose.rawValue):\(account.lowercased())" }
    static func addressKey(_ address: String) -> String { "ip:\(address)" }

    /// Counts an attempt for `account` from `address` before its password is checked, or says how long to wait.
    func begin(_ purpose: Purpose, account: String, address: String, now: Date = Date()) async throws -> Outcome {
        let accountKey = Self.key(purpose, account: account), addressKey = Self.addressKey(address)
        let limits = [accountKey: perAccount, addressKey: perAddress]
        let policy = self
        return try await repository.updateFailures(keys: [accountKey, addressKey]) { current -> (changes: [String: LoginFailures?], result: Outcome) in
            var changes: [String: LoginFailures?] = [:]
            var refusedFor: TimeInterval = 0
            var waitIfWrong: TimeInterval = 0
            for (key, limit) in limits {
                switch policy.count(current[key], limit: limit, now: now) {
                case .refused(let seconds):
                    refusedFor = max(refusedFor, seconds)
                case .counted(let failures):
                    changes[key] = failures
                    if let until = failures.lockedUntil { waitIfWrong = max(waitIfWrong, until.timeIntervalSince(now)) }
                }
            }
            // Refused by either count: nothing is counted.
            if refusedFor > 0 { return ([:], .wait(Int(refusedFor.rounded(.up)))) }
            return (changes, .check(Attempt(accountKey: accountKey, addressKey: addressKey,
                                            waitIfWrong: waitIfWrong > 0 ? Int(waitIfWrong.rounded(.up)) : nil)))
        }
    }

    /// The password was right: the account's count is cleared; the address gets this attempt back (only this one:
    /// one right password does not excuse many guesses).
    func succeeded(_ attempt: Attempt) async throws {
        try await repository.updateFailures(keys: [attempt.accountKey, attempt.addressKey]) { current -> (changes: [String: LoginFailures?], result: Void) in
            var address = current[attempt.addressKey]
            address?.count -= 1
            return ([attempt.accountKey: nil, attempt.addressKey: address.flatMap { $0.count > 0 ? $0 : nil }], ())
        }
    }

    /// Forgets counts quiet for longer than the window (the table would otherwise keep every email ever tried).
    func forgetQuiet(now: Date = Date()) async throws {
        try await repository.deleteQuietFailures(before: now.addingTimeInterval(-Self.window), now: now)
    }

    enum Count: Equatable {
        case counted(LoginFailures)
        case refused(seconds: TimeInterval)
    }

    /// One key's count after one more attempt at `now`, or how long that attempt must wait instead.
    func count(_ failures: LoginFailures?, limit: Int, now: Date) -> Count {
        if let until = failures?.lockedUntil, until > now { return .refused(seconds: until.timeIntervalSince(now)) }
        var failures = failures ?? LoginFailures(count: 0, lastFailureAt: now, lockedUntil: nil)
        if now.timeIntervalSince(failures.lastFailureAt) > Self.window { failures.count = 0 }
        failures.count += 1
        failures.lastFailureAt = now
        failures.lockedUntil = failures.count >= limit ? now.addingTimeInterval(delay(afterFailures: failures.count - limit)) : nil
        return .counted(failures)
    }

    /// The wait after `extra` failures beyond the limit: `firstDelay`, doubling, at most `maximumDelay`.
    func delay(afterFailures extra: Int) -> TimeInterval {
        min(maximumDelay, firstDelay * pow(2, Double(min(max(extra, 0), 20))))
    }
}
