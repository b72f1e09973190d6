/// Typed configuration for the librdkafka clients; each property names the librdkafka setting it sets.
public struct KafkaConfiguration: Sendable {
    /// `bootstrap.servers`, e.g. "127.0.0.1:9092".
    public var brokers: String
    /// `client.id`, shown in broker logs.
    public var clientId: String
    /// `message.timeout.ms`: how long `send` waits for the broker's acknowledgement before failing.
    public var deliveryTimeoutMilliseconds: Int = 10_000
    /// `linger.ms`: how long the producer waits to batch messages. Small: the feed answers only after delivery.
    public var lingerMilliseconds: Int = 2
    /// `compression.codec` of produced batches. lz4: catalog's snapshot chunks and import commands are tens of megabytes
    /// of JSON, which it shrinks about fourfold for little CPU, and the broker's work grows with the bytes it stores
    /// and serves (docs/BENCHMARKS.md, "The broker"). Consumers read any codec. The feed sends its tracking events with none.
    public var compressionCodec: String = "lz4"
    /// `session.timeout.ms` and `heartbeat.interval.ms`: short, so a group's first assignment takes seconds, not tens.
    public var sessionTimeoutMilliseconds: Int = 6_000
    public var heartbeatIntervalMilliseconds: Int = 500
    /// `fetch.wait.max.ms`: how long the broker may hold a fetch with no new data. Short, because a
    /// broker that does not answer early when data arrives (tansu) otherwise adds this to every hop.
    public var fetchWaitMaxMilliseconds: Int = 20
    /// Prefix added to every topic name, so tests can share one broker without sharing topics.
    public var topicPrefix: String = ""
    /// Signs what this process sends to `catalog.commands`, and is what catalog checks commands against
    /// (CommandSignature; catalog and the admin hold it). Nil: commands go unsigned, and catalog applies only
    /// snapshot requests without a signature (the feed and analytics ask for snapshots and hold no key).
    public var commandSignature: CommandSignature?
    /// `security.protocol` with its TLS (`ssl.*`) and SASL (`sasl.*`) settings (`KAFKA_SECURITY_PROTOCOL` and the
    /// variables beside it). Every client of this configuration, producer or consumer, uses them.
    public var security: KafkaSecurity = .plaintext
    /// Extra librdkafka properties, for settings this struct does not name.
    public var additional: [String: String] = [:]

    public init(brokers: String, clientId: String) {
        self.brokers = brokers
        self.clientId = clientId
    }

    /// A topic's (or consumer group's) full name: the prefix, then the name.
    public func topic(_ name: String) -> String { topicPrefix + name }

    var common: [String: String] {
        var properties = additional.merging(security.properties) { _, security in security }
        properties["bootstrap.servers"] = brokers
        properties["client.id"] = clientId
        properties["socket.keepalive.enable"] = "true"
        properties["log.connection.close"] = "false"
        // Topics are created by the services with their partition counts (Topic.all, TopicGuard); a
        // broker's auto-create would make them with its default count when a client merely asks for one.
        properties["allow.auto.create.topics"] = "false"
        return properties
    }

    var producerProperties: [String: String] {
        var properties = common
        properties["enable.idempotence"] = "true"
        properties["acks"] = "all"
        properties["message.timeout.ms"] = String(deliveryTimeoutMilliseconds)
        properties["linger.ms"] = String(lingerMilliseconds)
        properties["compression.codec"] = compressionCodec
        return properties
    }

    func consumerProperties(groupId: String?) -> [String: String] {
        var properties = common
        // A group id is required by librdkafka even for manually assigned consumers; offsets are then never committed.
        properties["group.id"] = groupId ?? "\(clientId)-unassigned"
        properties["enable.auto.commit"] = "false"
        properties["enable.auto.offset.store"] = "false"
        properties["auto.offset.reset"] = "earliest"
        properties["session.timeout.ms"] = String(sessionTimeoutMilliseconds)
        properties["heartbeat.interval.ms"] = String(heartbeatIntervalMilliseconds)
        properties["enable.partition.eof"] = "false"
        properties["fetch.wait.max.ms"] = String(fetchWaitMaxMilliseconds)
        return properties
    }
}
