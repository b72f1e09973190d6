import HummingbirdTesting

extension TestServices {
    public struct NotReady: Error, CustomStringConvertible {
        public let service: String
        public var description: String { "\(service) never became ready" }
    }

    /// Waits for the service under test to answer `/ready` with 200, polling every 200 ms; throws `NotReady` after `timeout`.
    public static func waitUntilReady(_ client: some TestClientProtocol, _ service: String, timeout: Duration = .seconds(45)) async throws {
        let ready = try await eventually(timeout: timeout, interval: .milliseconds(200)) {
            try await client.execute(uri: "/ready", method: .get).status == .ok
        }
        if !ready { throw NotReady(service: service) }
    }
}
