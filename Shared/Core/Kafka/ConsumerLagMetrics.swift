import Metrics

extension KafkaConsumer {
    /// Records this consumer's lag per partition as `itour_consumer_lag{consumer,topic,partition}`;
    /// called before a metrics scrape, so the figure is fresh when read.
    public func recordLag(consumerName: String) async {
        guard let lags = try? await lag() else { return }
        for (partition, lag) in lags {
            Gauge(label: "itour_consumer_lag", dimensions: [
                ("consumer", consumerName), ("topic", partition.topic), ("partition", String(partition.partition)),
            ], help: "Messages behind the end of each assigned partition, as the consumer last saw it, by consumer, topic and partition.").record(lag)
        }
    }
}
