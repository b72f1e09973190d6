import Foundation
import Shared

/// The admin site's own settings, from the environment (DESIGN.md "Demo mode").
struct AdminSettings: Sendable {
    /// The first owner (`ADMIN_EMAIL` / `ADMIN_PASSWORD`; demo values in demo mode, else required when no owner exists).
    var bootstrapOwner: (email: String, password: String)?
    /// `ADMIN_COOKIE_SECURE=1` when the site is served over HTTPS (behind the ingress): cookies get `Secure`.
    var secureCookies: Bool
    /// `ADMIN_SESSION_HOURS`: a session's lifetime.
    var sessionLifetime: Duration
    /// `ADMIN_BCRYPT_COST`: log2 rounds of bcrypt (12 by default; tests use less).
    var bcryptCost: UInt8
    /// `ADMIN_COMMAND_TIMEOUT_SECONDS`: how long a page waits for catalog's answer before saying it may be down.
    var commandTimeout: Duration
    /// Failed log-ins allowed per account, and per client address, before waiting is imposed.
    var failuresPerAccount: Int
    var failuresPerAddress: Int
    /// `ADMIN_LOGIN_DELAY_SECONDS` (10): the wait once a limit is reached, doubling with each further failure up to
    /// `ADMIN_LOGIN_MAX_DELAY_SECONDS` (60).
    var loginFirstDelay: Int
    var loginMaximumDelay: Int
    /// Where the analytics service answers (`ANALYTICS_URL`), for the reports pages.
    var analyticsURL: String
    /// `REPORTS_TOKEN`, which the reports pages send to analytics; nil outside demo mode when unset.
    var reportsToken: String?

    init(environment: Environment = Environment()) throws {
        // Outside demo mode both are required only while no owner exists (checked at start-up).
        let email = try? environment.secret("ADMIN_EMAIL", demoValue: "admin@example.edu")
        let password = try? environment.secret("ADMIN_PASSWORD", demoValue: "itour-demo")
        if (email == nil) != (password == nil) {
            throw ConfigurationError(name: "ADMIN_EMAIL / ADMIN_PASSWORD", message: "must be set together")
        }
        if let email, let password {
            guard password.count >= 8 else { throw ConfigurationError(name: "ADMIN_PASSWORD", message: "must be at least 8 characters") }
            bootstrapOwner = (email.lowercased(), password)
        } else {
            bootstrapOwner = nil
        }
        secureCookies = environment.bool("ADMIN_COOKIE_SECURE")
        sessionLifetime = .seconds(try environment.int("ADMIN_SESSION_HOURS", default: 12) * 3_600)
        let cost = try environment.int("ADMIN_BCRYPT_COST", default: 12)
        guard (4...16).contains(cost) else { throw ConfigurationError(name: "ADMIN_BCRYPT_COST", message: "must be between 4 and 16") }
        bcryptCost = UInt8(cost)
        commandTimeout = .seconds(try environment.int("ADMIN_COMMAND_TIMEOUT_SECONDS", default: 8))
        failuresPerAccount = try environment.int("ADMIN_LOGIN_FAILURES_PER_ACCOUNT", default: 5)
        failuresPerAddress = try environment.int("ADMIN_LOGIN_FAILURES_PER_ADDRESS", default: 30)
        loginFirstDelay = try environment.int("ADMIN_LOGIN_DELAY_SECONDS", default: 10)
        loginMaximumDelay = try environment.int("ADMIN_LOGIN_MAX_DELAY_SECONDS", default: 60)
        guard loginFirstDelay >= 1, loginMaximumDelay >= loginFirstDelay, loginMaximumDelay <= 15 * 60 else {
            throw ConfigurationError(name: "ADMIN_LOGIN_DELAY_SECONDS / ADMIN_LOGIN_MAX_DELAY_SECONDS",
                                     message: "must be at least 1, the maximum not below the first, and at most 900")
        }
        analyticsURL = environment.string("ANALYTICS_URL", default: "http://127.0.0.1:8083")
        reportsToken = try? environment.secret("REPORTS_TOKEN", demoValue: "itour-demo-token")
    }
}
