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

    init(environment: Environment = Environment()) throws {
        eventsPerMinutePerDevice = try environment.int("FEED_EVENTS_PER_MINUTE_PER_DEVICE", default: 600)
        guard eventsPerMinutePerDevice >= 0 else {
            throw FeedSettingsError(description: "configuration: FEED_EVENTS_PER_MINUTE_PER_DEVICE must be 0 (no limit) or more")
        }
        eventsPerMinutePerClient = try environment.int("FEED_EVENTS_PER_MINUTE_PER_CLIENT", default: Self.defaultEventsPerMinutePerClient)
        guard eventsPerMinutePerClient >= 0 else {
            throw FeedSettingsError(description: "configuration: FEED_EVENTS_PER_MINUTE_PER_CLIENT must be 0 (no limit) or more")
        }
    }
}

struct FeedSettingsError: Error, CustomStringConvertible {
    let description: String
}
