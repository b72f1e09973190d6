/// The suite's topics (DESIGN.md "Topics") with the partition counts and policies the services create
/// them with (TopicGuard); no deployment creates them separately. Replication is the broker's default.
public enum Topic {
    public static let catalogCommands = "catalog.commands"
    public static let catalogCommandResults = "catalog.command-results"
    public static let catalogEvents = "catalog.events"
    public static let trackingEvents = "tracking.events"
    public static let deadLetters = "dead-letters"
    /// A week to replay analytics from; analytics keeps event ids as long as this (and a margin) needs (RetentionPolicy).
    public static let trackingRetentionMilliseconds: Int64 = 604_800_000

    public static let all: [KafkaTopicSpec] = [
        KafkaTopicSpec(name: catalogCommands, partitions: 4),
        KafkaTopicSpec(name: catalogCommandResults, partitions: 4),
        KafkaTopicSpec(name: catalogEvents, partitions: 4, config: ["cleanup.policy": "compact"]),
        // A week to replay analytics from; dead letters kept a month for someone to look at them.
        KafkaTopicSpec(name: trackingEvents, partitions: 12, config: ["retention.ms": String(trackingRetentionMilliseconds)]),
        KafkaTopicSpec(name: deadLetters, partitions: 1, config: ["retention.ms": "2592000000"]),
    ]
}

/// Kafka header names the suite sets.
public enum MessageHeader {
    /// The request id of the HTTP request that caused the message; follows a command through the topics.
    public static let requestId = "request-id"
    /// A command's HMAC-SHA-256 over its value, lower-case hex (CommandSignature).
    public static let signature = "signature"
}
