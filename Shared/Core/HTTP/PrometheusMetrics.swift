import HTTPTypes
import Metrics
import Prometheus
import Synchronization

/// The process-wide Prometheus registry behind swift-metrics; bootstrapped once, by Prometheus's naming
/// conventions (`ConventionalPrometheusFactory`).
public enum MetricsSetup {
    public static let registry = PrometheusCollectorRegistry()
    private static let done = Mutex(false)

    public static func bootstrap(serviceName: String) {
        done.withLock { done in
            guard !done else { return }
            done = true
            MetricsSystem.bootstrap(ConventionalPrometheusFactory(registry: registry))
            Metrics.Gauge(label: "itour_build_info", dimensions: [("service", serviceName), ("version", BuildInfo.version)],
                  help: "Always 1; its labels say which service and version this process runs.").record(1)
        }
    }
}

/// Each metric's HELP text by its swift-metrics label. swift-metrics has no place for one, so our
/// metrics give theirs where they are declared (`Counter(label:dimensions:help:)` and the like, below),
/// and Hummingbird's come from here.
public enum MetricHelp {
    private static let texts = Mutex<[String: String]>([:])

    /// What Hummingbird's `MetricsMiddleware` records (and `RouteRequestMetrics` for requests answered
    /// beside the router).
    static let hummingbird: [String: String] = [
        "hb.requests": "HTTP requests answered, by route, method and status.",
        "hb.request.errors": "HTTP requests whose handler threw (answered with a problem), by route, method and status (error_type).",
        "http.server.request.duration": "Time from a request's head to the end of its answer, by route, method and status; failed requests are not timed.",
        "http.server.active_requests": "HTTP requests being answered now, by method.",
    ]

    /// Keeps the first text given for a label: the registry refuses a second, different HELP for a name.
    public static func describe(_ label: String, _ help: String) {
        texts.withLock { texts in
            if texts[label] == nil { texts[label] = help }
        }
    }

    /// The text for a label, or "" (no HELP line, which `tests/ops/test_metrics_lint.py` reports).
    public static func text(for label: String) -> String {
        texts.withLock { $0[label] } ?? hummingbird[label] ?? ""
    }
}

extension Metrics.Counter {
    /// A counter and its HELP text. Name it `…_total` (the factory adds the suffix when missing).
    public convenience init(label: String, dimensions: [(String, String)] = [], help: String) {
        MetricHelp.describe(label, help)
        self.init(label: label, dimensions: dimensions)
    }
}

extension Metrics.Gauge {
    /// A gauge and its HELP text.
    public convenience init(label: String, dimensions: [(String, String)] = [], help: String) {
        MetricHelp.describe(label, help)
        self.init(label: label, dimensions: dimensions)
    }
}

extension Metrics.Meter {
    /// A meter (a gauge on `/metrics`) and its HELP text.
    public convenience init(label: String, dimensions: [(String, String)] = [], help: String) {
        MetricHelp.describe(label, help)
        self.init(label: label, dimensions: dimensions)
    }
}

extension Metrics.Timer {
    /// A timer (a histogram of seconds on `/metrics`) and its HELP text. Name it `…_seconds` (the factory
    /// adds the suffix when missing).
    public convenience init(label: String, dimensions: [(String, String)] = [], help: String) {
        MetricHelp.describe(label, help)
        self.init(label: label, dimensions: dimensions, preferredDisplayUnit: .seconds)
    }
}

/// swift-metrics onto a Prometheus registry by Prometheus's conventions, which swift-prometheus's own
/// `PrometheusMetricsFactory` leaves to its users: a counter's name ends in `_total` and a timer's in
/// `_seconds` (Hummingbird's `hb.requests` becomes `hb_requests_total`, `http.server.request.duration`
/// becomes `http_server_request_duration_seconds`), every metric has its HELP line (`MetricHelp`; that
/// factory passes none), and durations are bucketed from 100 µs, since a feed GET takes about 1 ms and the
/// default buckets start at 5 ms.
public struct ConventionalPrometheusFactory: MetricsFactory {
    public let registry: PrometheusCollectorRegistry
    /// For what this type does not change: removing metrics, and the buckets of value histograms.
    private let prometheus: PrometheusMetricsFactory

    /// 100 µs to 10 s, about three to a decade.
    public static let durationBuckets: [Duration] = [
        .microseconds(100), .microseconds(250), .microseconds(500),
        .milliseconds(1), .microseconds(2_500), .milliseconds(5),
        .milliseconds(10), .milliseconds(25), .milliseconds(50),
        .milliseconds(100), .milliseconds(250), .milliseconds(500),
        .seconds(1), .milliseconds(2_500), .seconds(5), .seconds(10),
    ]

    public init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
        prometheus = PrometheusMetricsFactory(registry: registry)
    }

    /// The Prometheus name for a swift-metrics label: a character a name may not have becomes `_`, and
    /// `suffix` is added unless the name ends with it.
    public static func name(_ label: String, suffix: String = "") -> String {
        var name = String(label.enumerated().map { index, character -> Character in
            let allowed = character.isASCII && (character.isLetter || character == "_" || character == ":" || (index > 0 && character.isNumber))
            return allowed ? character : "_"
        })
        if !suffix.isEmpty && !name.hasSuffix(suffix) { name += suffix }
        return name
    }

    private func descriptor(_ label: String, suffix: String = "") -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: Self.name(label, suffix: suffix), unitName: "", helpText: MetricHelp.text(for: label))
    }

    public func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        registry.makeCounter(descriptor: descriptor(label, suffix: "_total"), labels: dimensions)
    }

    public func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        registry.makeCounter(descriptor: descriptor(label, suffix: "_total"), labels: dimensions)
    }

    public func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        guard aggregate else { return registry.makeGauge(descriptor: descriptor(label), labels: dimensions) }
        return registry.makeValueHistogram(descriptor: descriptor(label), labels: dimensions,
                                           buckets: prometheus.valueHistogramBuckets[label] ?? prometheus.defaultValueHistogramBuckets)
    }

    public func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        registry.makeGauge(descriptor: descriptor(label), labels: dimensions)
    }

    public func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        registry.makeDurationHistogram(descriptor: descriptor(label, suffix: "_seconds"), labels: dimensions, buckets: Self.durationBuckets)
    }

    public func destroyCounter(_ handler: any CounterHandler) { prometheus.destroyCounter(handler) }
    public func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) { prometheus.destroyFloatingPointCounter(handler) }
    public func destroyRecorder(_ handler: any RecorderHandler) { prometheus.destroyRecorder(handler) }
    public func destroyMeter(_ handler: any MeterHandler) { prometheus.destroyMeter(handler) }
    public func destroyTimer(_ handler: any TimerHandler) { prometheus.destroyTimer(handler) }
}

/// The request metrics Hummingbird's `MetricsMiddleware` records for one route, method and status, with its
/// labels and dimensions, for requests answered beside the router (the feed's pipeline), so both count in
/// the same series: an answer counts in `hb_requests_total` and is timed; a failure (the middleware sees a
/// thrown error) counts in `hb_requests_total` and `hb_request_errors_total` and is not timed.
public struct RouteRequestMetrics: Sendable {
    private let requests: Metrics.Counter
    private let errors: Metrics.Counter
    private let duration: Metrics.Timer

    public init(route: String, method: HTTPRequest.Method, status: HTTPResponse.Status) {
        let method = method.description, code = status.code.description
        requests = Metrics.Counter(label: "hb.requests", dimensions: [("http.route", route), ("http.request.method", method), ("http.response.status_code", code)])
        duration = Metrics.Timer(label: "http.server.request.duration",
                         dimensions: [("http.route", route), ("http.request.method", method), ("http.response.status_code", code)],
                         preferredDisplayUnit: .seconds)
        errors = Metrics.Counter(label: "hb.request.errors", dimensions: [("http.route", route), ("http.request.method", method), ("error.type", code)])
    }

    /// An answer, `nanoseconds` after its request's head arrived.
    public func answered(afterNanoseconds nanoseconds: UInt64) {
        requests.increment()
        duration.recordNanoseconds(nanoseconds)
    }

    /// A failure answered with a problem.
    public func failed() {
        requests.increment()
        errors.increment()
    }
}
