import Foundation

/// A topic and one of its partitions.
public struct KafkaTopicPartition: Hashable, Sendable, CustomStringConvertible {
    public let topic: String
    public let partition: Int32

    public init(topic: String, partition: Int32) {
        self.topic = topic
        self.partition = partition
    }

    public var description: String { "\(topic)[\(partition)]" }
}

/// A topic's id (KIP-516): a topic deleted and made again under the same name gets a new one.
public struct KafkaTopicId: Hashable, Sendable, CustomStringConvertible {
    public let most: Int64
    public let least: Int64

    public var description: String {
        String(UInt64(bitPattern: most), radix: 16) + "-" + String(UInt64(bitPattern: least), radix: 16)
    }
}

/// A message to produce. `key` picks the partition (same key, same partition, so per-key order holds)
/// unless `partition` names one. Key and value may be slices of one buffer that many messages share
/// (the feed writes a batch of events into one): librdkafka reads them where they are, unchanged, until
/// the delivery report.
public struct KafkaOutgoingMessage: Sendable {
    public var topic: String
    public var key: ArraySlice<UInt8>?
    public var value: ArraySlice<UInt8>
    public var partition: Int32?
    public var headers: [(String, [UInt8])]

    public init(topic: String, key: String?, value: [UInt8], partition: Int32? = nil, headers: [(String, [UInt8])] = []) {
        self.init(topic: topic, key: key.map { ArraySlice($0.utf8) }, value: value[...], partition: partition, headers: headers)
    }

    public init(topic: String, key: ArraySlice<UInt8>?, value: ArraySlice<UInt8>, partition: Int32? = nil, headers: [(String, [UInt8])] = []) {
        self.topic = topic
        self.key = key
        self.value = value
        self.partition = partition
        self.headers = headers
    }
}

/// Where the broker stored an acknowledged message.
public struct KafkaDeliveryReport: Sendable, Equatable {
    public let topic: String
    public let partition: Int32
    public let offset: Int64
}

/// A message read by a `KafkaConsumer`.
public struct KafkaMessage: Sendable {
    public let topic: String
    public let partition: Int32
    public let offset: Int64
    public let key: [UInt8]?
    public let value: [UInt8]
    public let headers: [String: [UInt8]]

    public var topicPartition: KafkaTopicPartition { KafkaTopicPartition(topic: topic, partition: partition) }
    public var keyString: String? { key.map { String(decoding: $0, as: UTF8.self) } }

    public func header(_ name: String) -> String? { headers[name].map { String(decoding: $0, as: UTF8.self) } }
}
