import Synchronization

/// How many different device ids one client address may bring per hour (`FEED_NEW_DEVICES_PER_HOUR_PER_CLIENT`):
/// device ids are the phone's to choose, so without a cap one address mints "unique devices" by the thousand a
/// second. A device id already seen from the address this hour is always let through; a new one past the cap is
/// refused per event. Windows are whole hours per address; ids are kept as 64-bit hashes (a collision only lets one
/// more device through).
final class NewDeviceLimiter: Sendable {
    private struct Window {
        var start: Double
        var devices: Set<UInt64>
    }

    private struct State {
        var windows: [String: Window] = [:]
        var prunedAt: Double = 0
    }

    let devicesPerHour: Int
    private let state = Mutex(State())
    /// Above this many addresses, windows that have ended are dropped, at most once a minute (a walk of them all).
    private let pruneThreshold = 10_000

    /// `devicesPerHour` 0: no cap.
    init(devicesPerHour: Int) {
        self.devicesPerHour = devicesPerHour
    }

    var isLimiting: Bool { devicesPerHour > 0 }

    /// Whether an event of `deviceId` from `client` may pass; a device let through is remembered for the hour.
    func admits(_ deviceId: String, client: String, now: Double = EventRateLimiter.now()) -> Bool {
        guard isLimiting else { return true }
        let hash = UInt64(bitPattern: Int64(deviceId.hashValue))
        return state.withLock { state in
            var window = state.windows[client].flatMap { now - $0.start < 3_600 ? $0 : nil } ?? Window(start: now, devices: [])
            defer {
                state.windows[client] = window
                if state.windows.count > pruneThreshold, now - state.prunedAt > 60 {
                    state.windows = state.windows.filter { now - $0.value.start < 3_600 }
                    state.prunedAt = now
                }
            }
            if window.devices.contains(hash) { return true }
            guard window.devices.count < devicesPerHour else { return false }
            window.devices.insert(hash)
            return true
        }
    }
}
