import Foundation

/// One environment variable a program reads, declared once: `Environment` reads only through these, each
/// program lists the ones it reads (`CatalogProgram.variables`, …), and `<program> config --json` prints that
/// list for operators and for the test that checks compose and Kubernetes against it.
public struct ConfigVariable: Sendable, Hashable {
    public let name: String
    /// One line for operators: what it sets.
    public let description: String
    /// Must be set outside demo mode (`ITOUR_DEMO=1`); in demo mode `demoValue` stands in.
    public let isRequired: Bool
    /// A credential: goes in a Secret, never in a ConfigMap or a log.
    public let isSecret: Bool
    /// The value when unset, as text; nil when there is none (required, or optional without a default).
    public let defaultValue: String?
    /// What demo mode uses for a required variable that is unset.
    public let demoValue: String?

    /// A variable a program works without: `defaultValue` when unset (nil: nothing, e.g. no Postgres password).
    public static func optional(_ name: String, default defaultValue: String?, secret: Bool = false, _ description: String) -> ConfigVariable {
        ConfigVariable(name: name, description: description, isRequired: false, isSecret: secret, defaultValue: defaultValue, demoValue: nil)
    }

    /// A variable a deployment must set; demo mode uses `demoValue` instead.
    public static func required(_ name: String, demoValue: String, secret: Bool, _ description: String) -> ConfigVariable {
        ConfigVariable(name: name, description: description, isRequired: true, isSecret: secret, defaultValue: nil, demoValue: demoValue)
    }
}

// MARK: - Shared variables

extension ConfigVariable {
    public static func httpPort(_ port: Int) -> ConfigVariable {
        .optional("HTTP_PORT", default: String(port), "port to listen on")
    }
    public static let httpHost = optional("HTTP_HOST", default: "127.0.0.1", "address to listen on (0.0.0.0 in containers)")
    public static let httpIdleTimeoutSeconds = optional(
        "HTTP_IDLE_TIMEOUT_SECONDS", default: "30",
        "seconds a connection may stay open with nothing arriving and nothing being answered")

    public static let postgresHost = optional("POSTGRES_HOST", default: "127.0.0.1", "Postgres host")
    public static let postgresPort = optional("POSTGRES_PORT", default: "5433", "Postgres port")
    public static let postgresUser = optional("POSTGRES_USER", default: "itour", "Postgres user")
    public static let postgresPassword = optional("POSTGRES_PASSWORD", default: nil, secret: true, "Postgres password (none when unset)")
    public static let postgresDatabase = optional("POSTGRES_DB", default: "itour", "Postgres database")
    public static let postgresMaxConnections = optional(
        "POSTGRES_MAX_CONNECTIONS", default: "10",
        "Postgres connections this process may open (its pool; the feed opens at most 4); every replica has its own")

    public static let kafkaBrokers = optional("KAFKA_BROKERS", default: "127.0.0.1:9092", "broker bootstrap servers, host:port[,host:port]")
    public static let kafkaTopicPrefix = optional(
        "KAFKA_TOPIC_PREFIX", default: "", "prefix of every topic and consumer group (isolates deployments sharing a broker)")
    public static let kafkaDeliveryTimeoutMilliseconds = optional(
        "KAFKA_DELIVERY_TIMEOUT_MS", default: "10000", "how long a produce may wait for the broker's acknowledgement; more than KAFKA_LINGER_MS, at most 2147483647")
    public static let kafkaLingerMilliseconds = optional("KAFKA_LINGER_MS", default: "2", "how long the producer waits to fill a batch, 0 to 900000")
    public static let kafkaFetchWaitMilliseconds = optional(
        "KAFKA_FETCH_WAIT_MS", default: "20", "how long the broker may hold a consumer's fetch that found nothing new")
    public static let consumerStallSeconds = optional(
        "CONSUMER_STALL_SECONDS", default: "30", "how long a consumer's lag may stay without shrinking before /ready says degraded")

    public static let logLevel = optional(
        "LOG_LEVEL", default: "info", "trace, debug, info, notice, warning (or warn), error or critical")
    public static let logFormat = optional("LOG_FORMAT", default: "json", "json (one object per line) or text")

    public static let version = optional("ITOUR_VERSION", default: "0.1.0", "the build's version, shown on /health, in metrics and by --version")
    public static let demo = optional(
        "ITOUR_DEMO", default: "0", "1: demo mode, where the demo value stands in for each required variable that is unset")

    /// Where each service answers: the admin's status and reports pages, and the benchmarks.
    public static let catalogURL = optional("CATALOG_URL", default: "http://127.0.0.1:8082", "where catalog answers (status page)")
    public static let feedURL = optional("FEED_URL", default: "http://127.0.0.1:8080", "where the feed answers")
    public static let analyticsURL = optional("ANALYTICS_URL", default: "http://127.0.0.1:8083", "where analytics answers (reports)")

    /// Prometheus scrapes with it (`authorization: {credentials: …}`); the admin's System Status sends it.
    public static let metricsToken = optional(
        "METRICS_TOKEN", default: nil, secret: true, "when set, GET /metrics needs Authorization: Bearer <this token>; unset: /metrics is open")

    /// The Reports API's bearer token: analytics checks it, the admin's reports pages send it.
    public static let reportsToken = required("REPORTS_TOKEN", demoValue: "itour-demo-token", secret: true,
                                              "bearer token of analytics' Reports API")
}

// MARK: - For operators

extension ConfigVariable {
    /// `config --json`: `[{"name", "required", "secret", "default", "description"}]`, in declaration order.
    public static func json(_ variables: [ConfigVariable]) -> String {
        let objects: [[String: Any]] = variables.map { variable in
            ["name": variable.name, "required": variable.isRequired, "secret": variable.isSecret,
             "default": variable.defaultValue ?? NSNull(), "description": variable.description]
        }
        let data = (try? JSONSerialization.data(withJSONObject: objects, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])) ?? Data("[]".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// The list as aligned text, for `--help` and `config`.
    public static func table(_ variables: [ConfigVariable]) -> String {
        let width = variables.map(\.name.count).max() ?? 0
        return variables.map { variable in
            var notes: [String] = []
            if variable.isRequired { notes.append("required outside demo mode") }
            if variable.isSecret { notes.append("secret") }
            if let value = variable.defaultValue, !value.isEmpty { notes.append("default \(value)") }
            let padded = variable.name.padding(toLength: width, withPad: " ", startingAt: 0)
            return "  \(padded)  \(variable.description)" + (notes.isEmpty ? "" : " (\(notes.joined(separator: "; ")))")
        }.joined(separator: "\n")
    }

    /// Each name once, first declaration kept: a variable read by two parts of a program (the stall window by
    /// every lag watch and by analytics' ingest) is listed once.
    public static func unique(_ variables: [ConfigVariable]) -> [ConfigVariable] {
        var seen = Set<String>()
        return variables.filter { seen.insert($0.name).inserted }
    }
}
