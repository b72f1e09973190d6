import Metrics
import Prometheus
import Shared
import Testing

@Suite("Metrics by Prometheus's conventions")
struct MetricsConventionTests {
    @Test("counters end in _total and timers in _seconds, each once; every metric has its HELP; durations are bucketed from 100 µs")
    func conventions() {
        let registry = PrometheusCollectorRegistry()
        let factory = ConventionalPrometheusFactory(registry: registry)
        Metrics.Counter(label: "hb.requests", dimensions: [("http.route", "/x")], factory: factory).increment()
        MetricHelp.describe("itour_test_things", "Things seen.")
        Metrics.Counter(label: "itour_test_things", factory: factory).increment()
        MetricHelp.describe("itour_test_done_total", "Things done.")
        // A second, different text for the same label is ignored: the registry would stop the process on it.
        MetricHelp.describe("itour_test_done_total", "Something else.")
        Metrics.Counter(label: "itour_test_done_total", factory: factory).increment()
        MetricHelp.describe("itour.test.wait", "Time waited.")
        Metrics.Timer(label: "itour.test.wait", factory: factory).recordMicroseconds(150)
        MetricHelp.describe("itour_test_level", "The level.")
        Metrics.Gauge(label: "itour_test_level", factory: factory).record(2)
        let text = registry.emitToString()

        #expect(text.contains("# TYPE hb_requests_total counter"))
        #expect(text.contains("# HELP hb_requests_total HTTP requests answered"))
        #expect(text.contains("hb_requests_total{http_route=\"/x\"} 1"))
        #expect(text.contains("# HELP itour_test_things_total Things seen.\n# TYPE itour_test_things_total counter"))
        #expect(text.contains("# HELP itour_test_done_total Things done.\n"))
        #expect(!text.contains("_total_total"))
        #expect(text.contains("# HELP itour_test_wait_seconds Time waited.\n# TYPE itour_test_wait_seconds histogram"))
        #expect(text.contains("itour_test_wait_seconds_bucket{le=\"0.0001\"} 0"))
        #expect(text.contains("itour_test_wait_seconds_bucket{le=\"0.00025\"} 1"))
        #expect(text.contains("# HELP itour_test_level The level.\n# TYPE itour_test_level gauge"))
    }

    @Test("a label becomes a Prometheus name: characters a name may not have become underscores")
    func names() {
        #expect(ConventionalPrometheusFactory.name("http.server.request.duration", suffix: "_seconds") == "http_server_request_duration_seconds")
        #expect(ConventionalPrometheusFactory.name("itour_batch_duration_seconds", suffix: "_seconds") == "itour_batch_duration_seconds")
        #expect(ConventionalPrometheusFactory.name("9-lives") == "__lives")
        #expect(ConventionalPrometheusFactory.durationBuckets.first == .microseconds(100))
    }
}
