public struct TimeoutError: Error, CustomStringConvertible {
    public let duration: Duration
    public var description: String { "timed out after \(duration)" }
}

/// Runs `operation`, throwing `TimeoutError` if it has not finished within `duration`.
public func withTimeout<T: Sendable>(_ duration: Duration, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: duration)
            throw TimeoutError(duration: duration)
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}

extension Duration {
    /// The duration in seconds, as logs and gauges give durations.
    public var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
