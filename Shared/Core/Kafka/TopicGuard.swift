import Logging
import Metrics
import ServiceLifecycle

/// Keeps the suite's topics in existence with their partition counts (DESIGN.md "Topics"): checks the
/// broker's metadata every `interval` and creates what is missing, e.g. after a memory-only broker came
/// back empty or an operator deleted a topic. The services' clients never let a broker auto-create a topic
/// (`allow.auto.create.topics=false`), so a topic always comes back with its own partition count.
public struct TopicGuard: Service {
    let producer: KafkaProducer
    let topics: [KafkaTopicSpec]
    let interval: Duration
    let logger: Logger

    public init(producer: KafkaProducer, topics: [KafkaTopicSpec] = Topic.all, interval: Duration = .seconds(2), logger: Logger) {
        self.producer = producer
        self.topics = topics
        self.interval = interval
        self.logger = logger
    }

    public func run() async throws {
        try? await cancelWhenGracefulShutdown {
            var reportedCounts: Set<String> = []
            while !Task.isCancelled {
                try await Task.sleep(for: interval)
                await check(reportedCounts: &reportedCounts)
            }
        }
    }

    /// One check: creates the missing topics; says once per topic when one has another partition count.
    func check(reportedCounts: inout Set<String>) async {
        let names = topics.map { producer.configuration.topic($0.name) }
        guard let counts = try? await producer.partitionCounts(topics: names, timeout: .seconds(2)) else { return }
        let missing = topics.filter { counts[producer.configuration.topic($0.name)] == nil }
        for spec in topics {
            let name = producer.configuration.topic(spec.name)
            if let count = counts[name], count != spec.partitions, reportedCounts.insert(name).inserted {
                logger.warning("topic has another partition count than the suite creates it with", metadata: [
                    "topic": "\(name)", "partitions": "\(count)", "expected": "\(spec.partitions)",
                ])
            }
        }
        guard !missing.isEmpty else { return }
        do {
            try await producer.createTopics(missing)
            Counter(label: "itour_topics_created_total", help: "Topics found missing on the broker after start-up and created again.").increment(by: missing.count)
            logger.warning("topics were missing on the broker and were created again", metadata: [
                "topics": "\(missing.map { producer.configuration.topic($0.name) })",
            ])
        } catch {
            logger.warning("could not create missing topics; trying again", metadata: ["error": "\(error)"])
        }
    }
}
