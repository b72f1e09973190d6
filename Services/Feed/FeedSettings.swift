import Foundation
import Shared

/// The feed's own settings, beyond what every service reads (`ServiceSettings`).
struct FeedSettings: Sendable {
    /// `FEED_EVENTS_PER_MINUTE_PER_DEVICE`: events one device may send per minute (0 = no limit).
    var eventsPerMinutePerDevice: Int
    /// `FEED_EVENTS_PER_MINUTE_PER_CLIENT`: events one client address may send per minute, whatever device
    /// ids they carry (0 = no limit). Every batch counts as at least one.
    var eventsPerMinutePerClient: Int

    /// `SITE_TIME_ZONE` and `SITE_PUBLIC_HOLIDAYS`: where `openNow` is decided.
    var site: FeedSite

    /// `FEED_MEDIA_CACHE_BYTES`: how many bytes of media files the feed keeps in memory.
    var mediaCacheBytes = FeedSettings.defaultMediaCacheBytes
    static let defaultMediaCacheBytes = 256 * 1_024 * 1_024

    static let defaultEventsPerMinutePerClient = 60_000

    /// `TRUSTED_PROXIES`: the proxies whose `X-Forwarded-For` names the client the rate limits count by.
    var trustedProxies = TrustedProxies.none
    /// `FEED_MAX_CONNECTIONS_PER_CLIENT`: open connections one TCP peer may hold (0 = no limit); a trusted proxy's
    /// connections are not counted (behind an ingress every connection comes from it).
    var maxConnectionsPerClient = FeedSettings.defaultMaxConnectionsPerClient
    static let defaultMaxConnectionsPerClient = 256
    /// `FEED_NEW_DEVICES_PER_HOUR_PER_CLIENT`: different device ids one client address may bring an hour (0 = no cap).
    var newDevicesPerHourPerClient = FeedSettings.defaultNewDevicesPerHourPerClient
    static let defaultNewDevicesPerHourPerClient = 2_000

    init(eventsPerMinutePerDevice: Int, eventsPerMinutePerClient: Int = FeedSettings.defaultEventsPerMinutePerClient, site: FeedSite = FeedSite()) {
        self.eventsPerMinutePerDevice = eventsPerMinutePerDevice
        self.eventsPerMinutePerClient = eventsPerMinutePerClient
        self.site = site
    }

    /// The variables `init(environment:)` reads.
    static let variables: [ConfigVariable] = [.feedEventsPerMinutePerDevice, .feedEventsPerMinutePerClient, .siteTimeZone, .sitePublicHolidays, .siteLanguage, .siteLanguages,
                                              .feedPublicURL, .feedMediaCacheBytes, .feedMaxConnectionsPerClient, .feedNewDevicesPerHourPerClient] + TrustedProxies.variables

    init(environment: Environment = Environment()) throws {
        eventsPerMinutePerDevice = try environment.int(.feedEventsPerMinutePerDevice)
        guard eventsPerMinutePerDevice >= 0 else {
            throw FeedSettingsError(description: "configuration: FEED_EVENTS_PER_MINUTE_PER_DEVICE must be 0 (no limit) or more")
        }
        eventsPerMinutePerClient = try environment.int(.feedEventsPerMinutePerClient)
        guard eventsPerMinutePerClient >= 0 else {
            throw FeedSettingsError(description: "configuration: FEED_EVENTS_PER_MINUTE_PER_CLIENT must be 0 (no limit) or more")
        }
        trustedProxies = try TrustedProxies(environment: environment)
        maxConnectionsPerClient = try environment.int(.feedMaxConnectionsPerClient, in: 0...1_000_000, unit: "connections")
        newDevicesPerHourPerClient = try environment.int(.feedNewDevicesPerHourPerClient, in: 0...10_000_000, unit: "device ids")
        let timeZone = try environment.siteTimeZone()
        var holidays: Set<String> = []
        for text in environment.string(.sitePublicHolidays).split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) })
        where !text.isEmpty {
            guard FeedSite.isDate(text) else {
                throw FeedSettingsError(description: "configuration: SITE_PUBLIC_HOLIDAYS must be dates YYYY-MM-DD separated by commas; \"\(text)\" is not one")
            }
            holidays.insert(text)
        }
        mediaCacheBytes = try environment.int(.feedMediaCacheBytes)
        guard mediaCacheBytes >= 0 else {
            throw FeedSettingsError(description: "configuration: FEED_MEDIA_CACHE_BYTES must be 0 (keep no media in memory) or more")
        }
        let publicURL = environment.string(.feedPublicURL)
        guard let base = QRLink.publicURL(publicURL) else {
            throw FeedSettingsError(description: "configuration: FEED_PUBLIC_URL must be an http(s) address of at most \(QRLink.maximumPublicURLBytes) bytes such as https://tours.example.edu, got \"\(publicURL)\"")
        }
        site = FeedSite(timeZone: timeZone, publicHolidays: holidays, publicURL: base, languages: try environment.siteLanguages())
    }
}

/// Where the feed decides whether a place is open (DESIGN.md, "Opening hours, prices and access"): one IANA zone
/// per deployment, and its public holidays.
struct FeedSite: Sendable {
    var timeZone = TimeZone(identifier: "UTC")!
    /// `YYYY-MM-DD`.
    var publicHolidays: Set<String> = []
    /// `FEED_PUBLIC_URL`: where phones reach the feed, for the links in QR codes; no trailing slash.
    var publicURL = FeedSite.defaultPublicURL
    /// `SITE_LANGUAGE` and `SITE_LANGUAGES`: the languages the feed answers in (DESIGN.md "Languages").
    var languages = SiteLanguages.english

    static let defaultPublicURL = "http://localhost:8080"

    static func isDate(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]), (1...12).contains(month) else { return false }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        guard let date = calendar.date(from: DateComponents(year: year, month: month, day: day)) else { return false }
        return calendar.component(.day, from: date) == day
    }
}

extension ConfigVariable {
    static let feedEventsPerMinutePerDevice = optional(
        "FEED_EVENTS_PER_MINUTE_PER_DEVICE", default: "600", "events one device may send per minute to POST /v1/events, per feed replica (0: no limit)")
    static let feedMediaCacheBytes = optional(
        "FEED_MEDIA_CACHE_BYTES", default: String(FeedSettings.defaultMediaCacheBytes),
        "bytes of media library files the feed keeps in memory, least recently used given up first")
    static let feedEventsPerMinutePerClient = optional(
        "FEED_EVENTS_PER_MINUTE_PER_CLIENT", default: String(FeedSettings.defaultEventsPerMinutePerClient),
        "events one client address may send per minute, whatever device ids they carry, per feed replica (0: no limit)")
    static let feedMaxConnectionsPerClient = optional(
        "FEED_MAX_CONNECTIONS_PER_CLIENT", default: String(FeedSettings.defaultMaxConnectionsPerClient),
        "open connections one address may hold on a feed replica; more are answered 503 and closed (0: no limit; a trusted proxy's are not counted)")
    static let feedNewDevicesPerHourPerClient = optional(
        "FEED_NEW_DEVICES_PER_HOUR_PER_CLIENT", default: String(FeedSettings.defaultNewDevicesPerHourPerClient),
        "different device ids one client address may send events for in an hour, per feed replica; events of more are rejected (0: no cap)")
}

extension ConfigVariable {
    static let sitePublicHolidays = optional("SITE_PUBLIC_HOLIDAYS", default: "", "the site's public holidays, YYYY-MM-DD separated by commas (opening hours' PH)")
}

struct FeedSettingsError: Error, CustomStringConvertible {
    let description: String
}
