import Shared

/// The feed's own settings, beyond what every service reads (`ServiceSettings`).
struct FeedSettings: Sendable {
    /// `FEED_EVENTS_PER_MINUTE_PER_DEVICE`: events one device may send per minute (0 = no limit).
    var eventsPerMinutePerDevice: Int

    init(eventsPerMinutePerDevice: Int) {
        self.eventsPerMinutePerDevice = eventsPerMinutePerDevice
    }

    init(environment: Environment = Environment()) throws {
        eventsPerMinutePerDevice = try environment.int("FEED_EVENTS_PER_MINUTE_PER_DEVICE", default: 600)
        guard eventsPerMinutePerDevice >= 0 else {
            throw FeedSettingsError(description: "configuration: FEED_EVENTS_PER_MINUTE_PER_DEVICE must be 0 (no limit) or more")
        }
    }
}

struct FeedSettingsError: Error, CustomStringConvertible {
    let description: String
}
