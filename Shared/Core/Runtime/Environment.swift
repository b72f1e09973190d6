import Foundation
import Logging
import Synchronization

/// Configuration values from environment variables, with typed reads and clear errors. Every read names a
/// `ConfigVariable`, so a program's list of variables (`config --json`) is the list of what it reads.
public struct Environment: Sendable {
    public let values: [String: String]
    /// Reads from the process's own environment are checked against the program's declared list (`declare`);
    /// tests pass their values in and are not.
    private let isProcessEnvironment: Bool

    public init() {
        values = ProcessInfo.processInfo.environment
        isProcessEnvironment = true
    }

    public init(_ values: [String: String]) {
        self.values = values
        isProcessEnvironment = false
    }

    private static let declared = Mutex<Set<String>?>(nil)

    /// The variables this program reads, set once by its command before anything reads one. A read of any
    /// other is a variable missing from the program's list: a debug build stops on it (the Python tests run
    /// every service from a debug build), so the list cannot fall behind the code.
    public static func declare(_ variables: [ConfigVariable]) {
        declared.withLock { $0 = Set(variables.map(\.name)) }
    }

    /// The variable's value when set and not empty, else its default (nil when it has none).
    public func optionalString(_ variable: ConfigVariable) -> String? {
        if isProcessEnvironment, let declared = Self.declared.withLock({ $0 }) {
            assert(declared.contains(variable.name), "\(variable.name) is read but missing from this program's list of variables")
        }
        guard let value = values[variable.name], !value.isEmpty else { return variable.defaultValue }
        return value
    }

    /// A variable with a default (`ConfigVariable.optional(_:default:…)` with a value).
    public func string(_ variable: ConfigVariable) -> String {
        optionalString(variable) ?? ""
    }

    public func int(_ variable: ConfigVariable) throws -> Int {
        guard let text = optionalString(variable) else { preconditionFailure("\(variable.name) is read as an integer but has no default") }
        guard let value = Int(text) else {
            throw ConfigurationError(name: variable.name, message: "must be an integer, got \"\(text)\"")
        }
        return value
    }

    /// An integer that must lie in `range`, refused naming the variable and the range otherwise.
    public func int(_ variable: ConfigVariable, in range: ClosedRange<Int>, unit: String) throws -> Int {
        let value = try int(variable)
        guard range.contains(value) else {
            throw ConfigurationError(name: variable.name, message: "must be \(range.lowerBound) to \(range.upperBound) \(unit), got \(value)")
        }
        return value
    }

    /// 1/true/yes/on or 0/false/no/off; anything else is refused rather than taken as off.
    public func bool(_ variable: ConfigVariable) throws -> Bool {
        let text = (optionalString(variable) ?? "0").lowercased()
        if ["1", "true", "yes", "on"].contains(text) { return true }
        if ["0", "false", "no", "off"].contains(text) { return false }
        throw ConfigurationError(name: variable.name, message: "must be 1, true, yes, on or 0, false, no, off; got \"\(text)\"")
    }

    /// One of `T`'s cases by raw value (or one of `aliases`); anything else is refused, naming the valid values.
    public func choice<T: RawRepresentable & CaseIterable>(_ variable: ConfigVariable, aliases: [String: T] = [:]) throws -> T
    where T.RawValue == String {
        let text = string(variable)
        if let value = T(rawValue: text) ?? aliases[text] { return value }
        let valid = T.allCases.map(\.rawValue) + aliases.keys.sorted()
        throw ConfigurationError(name: variable.name, message: "must be one of \(valid.joined(separator: ", ")); got \"\(text)\"")
    }

    /// A required variable: its value, or its demo value in demo mode, else a configuration error.
    public func required(_ variable: ConfigVariable) throws -> String {
        if let value = optionalString(variable) { return value }
        if try bool(.demo), let demoValue = variable.demoValue { return demoValue }
        throw ConfigurationError(name: variable.name, message: "is required outside demo mode (ITOUR_DEMO=1)")
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
    public var logLevel: Logger.Level
    public var logFormat: LogFormat
    /// `HTTP_IDLE_TIMEOUT_SECONDS` (30): how long a connection may stay open with no request part
    /// arriving and nothing being answered; a request head sent only in part counts as nothing arriving.
    public var httpIdleTimeoutSeconds: Int
    /// `METRICS_TOKEN`: when set, `/metrics` needs `Authorization: Bearer <token>` (and the admin's System Status sends it).
    public var metricsToken: String?

    /// The variables read here (and by every service's lag watches and build info), for a service
    /// listening on `defaultPort` (`usesPostgres: false` leaves Postgres's out). `ITOUR_DEMO`
    /// belongs to the services with required variables (`Environment.required`).
    public static func variables(defaultPort: Int, usesPostgres: Bool = true) -> [ConfigVariable] {
        [.httpHost, .httpPort(defaultPort), .httpIdleTimeoutSeconds]
            + (usesPostgres ? DatabaseSettings.variables : [])
            + [.kafkaBrokers, .kafkaTopicPrefix, .kafkaDeliveryTimeoutMilliseconds, .kafkaLingerMilliseconds, .kafkaFetchWaitMilliseconds,
               .consumerStallSeconds, .logLevel, .logFormat, .version, .metricsToken]
            + KafkaSecurity.variables
    }

    public init(serviceName: String, defaultPort: Int, usesPostgres: Bool = true, environment: Environment = Environment()) throws {
        self.serviceName = serviceName
        httpHost = environment.string(.httpHost)
        httpPort = try environment.int(.httpPort(defaultPort))
        database = usesPostgres ? try DatabaseSettings(environment: environment) : DatabaseSettings()
        kafka = KafkaConfiguration(brokers: environment.string(.kafkaBrokers), clientId: "itour-\(serviceName)")
        kafka.topicPrefix = environment.string(.kafkaTopicPrefix)
        kafka.security = try KafkaSecurity(environment: environment)
        kafka.deliveryTimeoutMilliseconds = try environment.int(.kafkaDeliveryTimeoutMilliseconds)
        // What librdkafka would refuse only when a client opens, named by the variable rather than by its property:
        // a linger past its range; a fetch wait not well under its socket timeout (60 s).
        kafka.lingerMilliseconds = try environment.int(.kafkaLingerMilliseconds, in: 0...900_000, unit: "milliseconds")
        kafka.fetchWaitMaxMilliseconds = try environment.int(.kafkaFetchWaitMilliseconds, in: 0...50_000, unit: "milliseconds")
        guard kafka.deliveryTimeoutMilliseconds > kafka.lingerMilliseconds, kafka.deliveryTimeoutMilliseconds <= Int(Int32.max) else {
            throw ConfigurationError(name: "KAFKA_DELIVERY_TIMEOUT_MS",
                                     message: "must be more than KAFKA_LINGER_MS (\(kafka.lingerMilliseconds)) and at most \(Int32.max) milliseconds, got \(kafka.deliveryTimeoutMilliseconds)")
        }
        logLevel = try environment.logLevel()
        logFormat = try environment.choice(.logFormat)
        httpIdleTimeoutSeconds = try environment.int(.httpIdleTimeoutSeconds)
        guard httpIdleTimeoutSeconds > 0 else { throw ConfigurationError(name: "HTTP_IDLE_TIMEOUT_SECONDS", message: "must be 1 or more") }
        metricsToken = environment.optionalString(.metricsToken)
    }
}

extension Environment {
    /// `LOG_LEVEL`: swift-log's levels, and `warn` for warning (the spelling many tools use).
    public func logLevel() throws -> Logger.Level {
        try choice(.logLevel, aliases: ["warn": .warning])
    }
}

/// The build's version, shown on /health, in metrics and by `--version` (`ITOUR_VERSION`).
public enum BuildInfo {
    public static let version = Environment().string(.version)
    public static let startedAt = Date()
}
