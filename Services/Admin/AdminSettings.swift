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
    /// The map's tiles and where the admin finds Leaflet (`ADMIN_MAP_TILES_URL`, `ADMIN_MAP_ATTRIBUTION`, `ADMIN_LEAFLET_DIR`).
    var map: MapSettings
    /// `FEED_PUBLIC_URL`: where phones reach the feed, for the links the printed QR codes hold.
    var feedPublicURL: String
    /// `MEDIA_MAX_BYTES`: the largest file the media library takes.
    var mediaMaxBytes: Int
    /// `MEDIA_MAX_PIXELS`: the largest picture, width × height, the media library takes (read from the file's header).
    var mediaMaxPixels = AdminSettings.defaultMediaMaxPixels
    static let defaultMediaMaxPixels = 64_000_000
    /// The host names the site answers for (`ADMIN_PUBLIC_URL`'s, and the loopback names in demo mode); 421 for others.
    var allowedHosts: AllowedHosts
    /// `TRUSTED_PROXIES`: whose `X-Forwarded-For` names the client the log-in throttle counts by.
    var trustedProxies: TrustedProxies
    /// `ADMIN_IMPORT_LEASE_SECONDS` (30) and `ADMIN_IMPORT_HEARTBEAT_SECONDS` (5): how long an import stays claimed by
    /// the admin running it without a renewal, and how often each admin renews its own and fails expired ones (issue 44).
    var importLease: Duration = .seconds(30)
    var importHeartbeat: Duration = .seconds(5)
    /// `SITE_TIME_ZONE`: every time staff read or type (history, schedules, status, imports) is in it, named.
    var clock = SiteClock.utc
    /// `SITE_LANGUAGE`, `SITE_LANGUAGES`: the languages the forms translate into (DESIGN.md "Languages").
    var languages = SiteLanguages.english

    /// The variables `init(environment:)` reads.
    static let variables: [ConfigVariable] = [
        .adminEmail, .adminPassword, .adminCookieSecure, .adminSessionHours, .adminBcryptCost, .adminCommandTimeoutSeconds,
        .adminLoginFailuresPerAccount, .adminLoginFailuresPerAddress, .adminLoginDelaySeconds, .adminLoginMaxDelaySeconds,
        .analyticsURL, .reportsToken, .demo, .adminMapTilesURL, .adminMapAttribution, .adminLeafletDirectory, .feedPublicURL,
        .mediaMaxBytes, .mediaMaxPixels, .adminPublicURL, .adminImportLeaseSeconds, .adminImportHeartbeatSeconds,
        .siteTimeZone, .siteLanguage, .siteLanguages,
    ] + TrustedProxies.variables

    init(environment: Environment = Environment()) throws {
        // Outside demo mode both are needed only while no owner exists (checked at start-up); a deployment sets them.
        let email = try? environment.required(.adminEmail)
        let password = try? environment.required(.adminPassword)
        if (email == nil) != (password == nil) {
            throw ConfigurationError(name: "ADMIN_EMAIL / ADMIN_PASSWORD", message: "must be set together")
        }
        if let email, let password {
            guard password.count >= 8 else { throw ConfigurationError(name: "ADMIN_PASSWORD", message: "must be at least 8 characters") }
            bootstrapOwner = (email.lowercased(), password)
        } else {
            bootstrapOwner = nil
        }
        secureCookies = try environment.bool(.adminCookieSecure)
        sessionLifetime = .seconds(try environment.int(.adminSessionHours) * 3_600)
        let cost = try environment.int(.adminBcryptCost)
        guard (4...16).contains(cost) else { throw ConfigurationError(name: "ADMIN_BCRYPT_COST", message: "must be between 4 and 16") }
        bcryptCost = UInt8(cost)
        commandTimeout = .seconds(try environment.int(.adminCommandTimeoutSeconds))
        failuresPerAccount = try environment.int(.adminLoginFailuresPerAccount)
        failuresPerAddress = try environment.int(.adminLoginFailuresPerAddress)
        loginFirstDelay = try environment.int(.adminLoginDelaySeconds)
        loginMaximumDelay = try environment.int(.adminLoginMaxDelaySeconds)
        guard loginFirstDelay >= 1, loginMaximumDelay >= loginFirstDelay, loginMaximumDelay <= 15 * 60 else {
            throw ConfigurationError(name: "ADMIN_LOGIN_DELAY_SECONDS / ADMIN_LOGIN_MAX_DELAY_SECONDS",
                                     message: "must be at least 1, the maximum not below the first, and at most 900")
        }
        analyticsURL = environment.string(.analyticsURL)
        // Without it the reports pages say reports are not configured; the rest of the site works.
        reportsToken = try? environment.required(.reportsToken)
        var tiles = environment.string(.adminMapTilesURL)
        if tiles == "none" { tiles = "" }
        guard tiles.isEmpty || (tiles.hasPrefix("https://") || tiles.hasPrefix("http://")) && tiles.contains("{z}") else {
            throw ConfigurationError(name: "ADMIN_MAP_TILES_URL", message: "must be none (no tiles) or an http(s) URL template with {z}, {x} and {y}")
        }
        map = MapSettings(tilesURL: tiles, attribution: environment.string(.adminMapAttribution),
                          leafletDirectory: environment.string(.adminLeafletDirectory))
        guard let feedPublicURL = QRLink.publicURL(environment.string(.feedPublicURL)) else {
            throw ConfigurationError(name: "FEED_PUBLIC_URL",
                                     message: "must be an http(s) address of at most \(QRLink.maximumPublicURLBytes) bytes such as https://tours.example.edu")
        }
        self.feedPublicURL = feedPublicURL
        mediaMaxBytes = try environment.int(.mediaMaxBytes)
        guard (1_024...(1 << 30)).contains(mediaMaxBytes) else {
            throw ConfigurationError(name: "MEDIA_MAX_BYTES", message: "must be between 1024 and 1073741824 (1 GiB)")
        }
        mediaMaxPixels = try environment.int(.mediaMaxPixels, in: 1_000_000...1_000_000_000, unit: "pixels")
        let publicURL = try environment.required(.adminPublicURL)
        guard let hosts = AllowedHosts(publicURL: publicURL, demo: try environment.bool(.demo)) else {
            throw ConfigurationError(name: "ADMIN_PUBLIC_URL", message: "must be the http(s) address staff reach the admin at, such as https://admin.tours.example.edu")
        }
        allowedHosts = hosts
        trustedProxies = try TrustedProxies(environment: environment)
        let lease = try environment.int(.adminImportLeaseSeconds, in: 2...3_600, unit: "seconds")
        let heartbeat = try environment.int(.adminImportHeartbeatSeconds, in: 1...1_800, unit: "seconds")
        // A claim must outlive a late renewal or two, or a busy admin would lose imports it is still running.
        guard lease >= 2 * heartbeat else {
            throw ConfigurationError(name: "ADMIN_IMPORT_LEASE_SECONDS / ADMIN_IMPORT_HEARTBEAT_SECONDS",
                                     message: "the lease must be at least twice the heartbeat, got \(lease) and \(heartbeat)")
        }
        (importLease, importHeartbeat) = (.seconds(lease), .seconds(heartbeat))
        clock = SiteClock(timeZone: try environment.siteTimeZone())
        languages = try environment.siteLanguages()
    }
}

extension ConfigVariable {
    static let adminEmail = required("ADMIN_EMAIL", demoValue: "admin@example.edu", secret: false,
                                     "e-mail of the first owner, made at start while the site has no owner")
    static let adminPassword = required("ADMIN_PASSWORD", demoValue: "itour-demo", secret: true,
                                        "password of the first owner (8 characters or more)")
    static let adminPublicURL = required(
        "ADMIN_PUBLIC_URL", demoValue: "http://localhost:8081", secret: false,
        "the address staff reach the admin at: it answers only for this host name (and, in demo mode, localhost, 127.0.0.1 and [::1]); 421 otherwise")
    static let mediaMaxPixels = optional(
        "MEDIA_MAX_PIXELS", default: String(AdminSettings.defaultMediaMaxPixels),
        "the largest picture, width × height in pixels, the media library takes (read from the file's header before it is decoded)")
    static let mediaMaxBytes = optional("MEDIA_MAX_BYTES", default: String(50 << 20), "the largest file the media library takes, in bytes")
    static let adminCookieSecure = optional("ADMIN_COOKIE_SECURE", default: "0", "1 when served over HTTPS: session cookies get Secure")
    static let adminSessionHours = optional("ADMIN_SESSION_HOURS", default: "12", "a session's lifetime in hours")
    static let adminBcryptCost = optional("ADMIN_BCRYPT_COST", default: "12", "log2 rounds of bcrypt for passwords, 4 to 16")
    static let adminCommandTimeoutSeconds = optional(
        "ADMIN_COMMAND_TIMEOUT_SECONDS", default: "8", "how long a page waits for catalog's answer before saying it may be down")
    static let adminLoginFailuresPerAccount = optional(
        "ADMIN_LOGIN_FAILURES_PER_ACCOUNT", default: "5", "failed log-ins allowed per account before waiting is imposed")
    static let adminLoginFailuresPerAddress = optional(
        "ADMIN_LOGIN_FAILURES_PER_ADDRESS", default: "30", "failed log-ins allowed per client address before waiting is imposed")
    static let adminLoginDelaySeconds = optional(
        "ADMIN_LOGIN_DELAY_SECONDS", default: "10", "the first wait once a log-in limit is reached, doubling with each further failure")
    static let adminLoginMaxDelaySeconds = optional("ADMIN_LOGIN_MAX_DELAY_SECONDS", default: "60", "the longest such wait, at most 900")
    static let adminMapTilesURL = optional("ADMIN_MAP_TILES_URL", default: "https://tile.openstreetmap.org/{z}/{x}/{y}.png",
                                           "the admin map's tile URL template; none for pins and routes without tiles")
    static let adminMapAttribution = optional("ADMIN_MAP_ATTRIBUTION", default: "© OpenStreetMap contributors",
                                              "the credit the tile provider asks for, shown on the map")
    static let adminImportLeaseSeconds = optional(
        "ADMIN_IMPORT_LEASE_SECONDS", default: "30",
        "how long an import stays claimed by the admin running it without a renewal; once expired any admin fails it as interrupted")
    static let adminImportHeartbeatSeconds = optional(
        "ADMIN_IMPORT_HEARTBEAT_SECONDS", default: "5",
        "how often each admin renews its imports' claims and fails expired ones; at most half the lease")
    static let adminLeafletDirectory = optional("ADMIN_LEAFLET_DIR", default: "/usr/share/javascript/leaflet",
                                                "where Leaflet is installed (Debian's libjs-leaflet); the admin serves it itself")
}

/// The admin map (Leaflet, served by the admin so the content security policy stays self-only).
struct MapSettings: Sendable {
    /// Tile URL template; empty (`ADMIN_MAP_TILES_URL=none`): no tiles, pins and routes only.
    var tilesURL: String
    var attribution: String
    var leafletDirectory: String
}
