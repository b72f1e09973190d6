import Foundation

/// Configuration values from environment variables, with typed reads and clear errors.
public struct Environment: Sendable {
    public let values: [String: String]

    public init(_ values: [String: String] = ProcessInfo.processInfo.environment) {
        self.values = values
    }

    public func optionalString(_ name: String) -> String? {
        guard let value = values[name], !value.isEmpty else { return nil }
        return value
    }

    public func string(_ name: String, default defaultValue: String) -> String {
        optionalString(name) ?? defaultValue
    }

    public func int(_ name: String, default defaultValue: Int) throws -> Int {
        guard let text = optionalString(name) else { return defaultValue }
        guard let value = Int(text) else { throw ConfigurationError(name: name, message: "must be an integer, got \"\(text)\"") }
        return value
    }

    public func bool(_ name: String, default defaultValue: Bool = false) -> Bool {
        guard let text = optionalString(name)?.lowercased() else { return defaultValue }
        return ["1", "true", "yes", "on"].contains(text)
    }

    /// A secret: from the environment, or the demo value in demo mode, else a configuration error.
    public func secret(_ name: String, demoValue: String) throws -> String {
        if let value = optionalString(name) { return value }
        if bool("ITOUR_DEMO") { return demoValue }
        throw ConfigurationError(name: name, message: "is required outside demo mode (ITOUR_DEMO=1)")
    }
}

public struct ConfigurationError: Error, CustomStringConvertible {
    public let name: String
    public let message: String

    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }
    public var description: String { "configuration: \(name) \(message)" }
}

/// What every service reads from its environment: where it listens, Postgres, the broker, logs.
public struct ServiceSettings: Sendable {
    public var serviceName: String
    public var httpHost: String
    public var httpPort: Int
    public var database: DatabaseSettings
    public var kafka: KafkaConfiguration
    public var logLevel: String
    public var logFormat: String
    /// `HTTP_IDLE_TIMEOUT_SECONDS` (30): how long a connection may stay open with no request part
    /// arriving and nothing being answered; a request head sent only in part counts as nothing arriving.
    public var httpIdleTimeoutSeconds: Int

    public init(serviceName: String, defaultPort: Int, environment: Environment = Environment()) throws {
        self.serviceName = serviceName
        httpHost = environment.string("HTTP_HOST", default: "127.0.0.1")
        httpPort = try environment.int("HTTP_PORT", default: defaultPort)
        database = try DatabaseSettings(environment: environment)
        kafka = KafkaConfiguration(brokers: environment.string("KAFKA_BROKERS", default: "127.0.0.1:9092"),
                                   clientId: "itour-\(serviceName)")
        kafka.topicPrefix = environment.string("KAFKA_TOPIC_PREFIX", default: "")
        kafka.deliveryTimeoutMilliseconds = try environment.int("KAFKA_DELIVERY_TIMEOUT_MS", default: 10_000)
        kafka.lingerMilliseconds = try environment.int("KAFKA_LINGER_MS", default: kafka.lingerMilliseconds)
        logLevel = environment.string("LOG_LEVEL", default: "info")
        logFormat = environment.string("LOG_FORMAT", default: "json")
        httpIdleTimeoutSeconds = try environment.int("HTTP_IDLE_TIMEOUT_SECONDS", default: 30)
        guard httpIdleTimeoutSeconds > 0 else { throw ConfigurationError(name: "HTTP_IDLE_TIMEOUT_SECONDS", message: "must be 1 or more") }
    }
}

/// The build's version, shown on /health and in metrics.
public enum BuildInfo {
    public static let version = ProcessInfo.processInfo.environment["ITOUR_VERSION"] ?? "0.1.0"
    public static let startedAt = Date()
}
