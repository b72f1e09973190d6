import Shared

/// The feed's own settings, beyond what every service reads (`ServiceSettings`).
struct FeedSettings: Sendable {
    /// `FEED_EVENTS_PER_MINUTE_PER_DEVICE`: events one device may send per minute (0 = no limit).
    var eventsPerMinutePerDevice: Int
    /// `FEED_EVENTS_PER_MINUTE_PER_CLIENT`: events one client address may send per minute, whatever device
    /// ids they carry (0 = no limit). Every batch counts as at least one.
    var eventsPerMinutePerClient: Int

    static let defaultEventsPerMinutePerClient = 60_000

    init(eventsPerMinutePerDevice: Int, eventsPerMinutePerClient: Int = FeedSettings.defaultEventsPerMinutePerClient) {
        self.eventsPerMinutePerDevice = eventsPerMinutePerDevice
        self.eventsPerMinutePerClient = eventsPerMinutePerClient
    }

    /// The variables `init(environment:)` reads.
    static let variables: [ConfigVariable] = [.feedEventsPerMinutePerDevice, .feedEventsPerMinutePerClient]

    init(environment: Environment = Environment()) throws {
        eventsPerMinutePerDevice = try environment.int(.feedEventsPerMinutePerDevice)
        guard eventsPerMinutePerDevice >= 0 else {
            throw FeedSettingsError(description: "configuration: FEED_EVENTS_PER_MINUTE_PER_DEVICE must be 0 (no limit) or more")
        }
        eventsPerMinutePerClient = try environment.int(.feedEventsPerMinutePerClient)
        guard eventsPerMinutePerClient >= 0 else {
            throw FeedSettingsError(description: "configuration: FEED_EVENTS_PER_MINUTE_PER_CLIENT must be 0 (no limit) or more")
        }
    }
}

extension ConfigVariable {
    static let feedEventsPerMinutePerDevice = optional(
        "FEED_EVENTS_PER_MINUTE_PER_DEVICE", default: "600", "events one device may send per minute to POST /v1/events (0: no limit)")
    static let feedEventsPerMinutePerClient = optional(
        "FEED_EVENTS_PER_MINUTE_PER_CLIENT", default: String(FeedSettings.defaultEventsPerMinutePerClient),
        "events one client address may send per minute, whatever device ids they carry (0: no limit)")
}

struct FeedSettingsError: Error, CustomStringConvertible {
    let description: String
}
