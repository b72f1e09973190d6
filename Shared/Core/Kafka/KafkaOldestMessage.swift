import Foundation

/// When the oldest message a topic still holds was sent: what a consumer reading the topic from its start (stored
/// positions lost or outside the log) would get again, whatever the topic's configured retention says (a broker may
/// keep messages past it). Reads the first message of each partition through a client of its own that joins no group.
public final class KafkaOldestMessage: Sendable {
    private let configuration: KafkaConfiguration
    private let offsets: KafkaOffsetQuery

    public init(configuration: KafkaConfiguration) throws {
        self.configuration = configuration
        offsets = try KafkaOffsetQuery(configuration: configuration)
    }

    /// The oldest timestamp among the first messages of `topic`'s partitions (its full name); nil when it holds none.
    /// Throws when the broker does not answer or a partition holding messages did not give its first one in time.
    public func sent(topic: String, timeout: Duration = .seconds(10)) async throws -> Date? {
        let starts = try await offsets.watermarks(topic: topic, timeout: timeout).filter { $0.value.high > $0.value.low }.mapValues(\.low)
        guard !starts.isEmpty else { return nil }
        var properties = configuration.consumerProperties(groupId: nil)
        properties["client.id"] = configuration.clientId + "-oldest"
        // One message a partition is wanted: librdkafka would otherwise prefetch up to 64 MB a consumer (and a partition's
        // 1 MB a fetch) of a week's tracking events, every hour, on every replica.
        properties["queued.max.messages.kbytes"] = "1024"
        properties["fetch.message.max.bytes"] = "65536"
        let client = try RDKafkaClient(role: .consumer, properties: properties)
        let found = try await client.run { try $0.firstTimestamps(topic: topic, starts: starts, timeoutMilliseconds: timeout.milliseconds) }
        return found.values.min().map { Date(timeIntervalSince1970: Double($0) / 1_000) }
    }
}
