/// The suite's topics (DESIGN.md "Topics") and the partition counts they are created with.
public enum Topic {
    public static let catalogCommands = "catalog.commands"
    public static let catalogCommandResults = "catalog.command-results"
    public static let catalogEvents = "catalog.events"
    public static let trackingEvents = "tracking.events"
    public static let deadLetters = "dead-letters"

    public static let all: [KafkaTopicSpec] = [
        KafkaTopicSpec(name: catalogCommands, partitions: 4),
        KafkaTopicSpec(name: catalogCommandResults, partitions: 4),
        KafkaTopicSpec(name: catalogEvents, partitions: 4, config: ["cleanup.policy": "compact"]),
        KafkaTopicSpec(name: trackingEvents, partitions: 12),
        KafkaTopicSpec(name: deadLetters, partitions: 1),
    ]
}

/// Kafka header names the suite sets.
public enum MessageHeader {
    /// The request id of the HTTP request that caused the message; follows a command through the topics.
    public static let requestId = "request-id"
}
