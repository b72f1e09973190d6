import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import Shared
import Testing

/// The real Postgres and broker that `make test` starts (scripts/test.sh), and helpers that keep tests
/// apart on them: a topic prefix and a database per test.
public enum TestServices {
    public static var brokers: String {
        ProcessInfo.processInfo.environment["ITOUR_TEST_KAFKA_BROKERS"] ?? "127.0.0.1:9094"
    }

    public static var postgresPort: Int {
        Int(ProcessInfo.processInfo.environment["ITOUR_TEST_POSTGRES_PORT"] ?? "") ?? 5434
    }

    /// `ITOUR_TEST_LOG_LEVEL` (warning): how much the services under test log.
    static let testLogLevel = ProcessInfo.processInfo.environment["ITOUR_TEST_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .warning

    public static let logger: Logger = {
        LoggingSetup.bootstrap(format: .text, level: testLogLevel)
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        return logger
    }()

    /// A short unique name part, for topics, groups and databases.
    public static func uniqueName(_ prefix: String) -> String {
        "\(prefix)_\(UUID().uuidString.prefix(8).lowercased())"
    }

    /// Kafka settings whose topics carry a fresh prefix, so tests never see each other's messages.
    public static func kafka(clientId: String = "test", deliveryTimeoutMilliseconds: Int = 10_000) -> KafkaConfiguration {
        var configuration = KafkaConfiguration(brokers: brokers, clientId: clientId)
        configuration.topicPrefix = uniqueName("t") + "."
        configuration.deliveryTimeoutMilliseconds = deliveryTimeoutMilliseconds
        configuration.commandSignature = commandSignature
        return configuration
    }

    /// The command key of the tests' catalogs and command clients (the services read CATALOG_COMMAND_KEY).
    public static let commandKey = "itour-test-command-key"
    public static let commandSignature = try! CommandSignature(key: commandKey)

    /// Creates an empty database for one test and returns its settings.
    public static func freshDatabase() async throws -> DatabaseSettings {
        let name = uniqueName("test")
        let admin = DatabaseSettings(port: postgresPort, database: "itour", maximumConnections: 1)
        _ = try await withPostgres(admin) { client in
            // Database names cannot be bound; `name` is generated here from hex digits.
            try await client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: logger)
        }
        return DatabaseSettings(port: postgresPort, database: name, maximumConnections: 5)
    }

    /// Runs `body` with a running client, then shuts the client down.
    public static func withPostgres<T: Sendable>(_ settings: DatabaseSettings, _ body: @Sendable (PostgresClient) async throws -> T) async throws -> T {
        let client = settings.makeClient(logger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            return try await body(client)
        }
    }

    /// Service settings for running a whole service in a test, on this test's database and topics.
    public static func serviceSettings(name: String, database: DatabaseSettings, kafka: KafkaConfiguration, port: Int = 0) throws -> ServiceSettings {
        var settings = try ServiceSettings(serviceName: name, defaultPort: port, environment: Environment([:]))
        settings.database = database
        var kafka = kafka
        kafka.clientId = "itour-\(name)"
        settings.kafka = kafka
        settings.logFormat = .text
        settings.logLevel = testLogLevel
        return settings
    }

    /// Runs services in a group until `body` returns, then shuts them down gracefully.
    public static func withServices<T: Sendable>(_ services: [any Service], _ body: @Sendable () async throws -> T) async throws -> T {
        let group = ServiceGroup(configuration: .init(services: services.map { .init(service: $0) }, logger: logger))
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            do {
                let result = try await body()
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
                return result
            } catch {
                await group.triggerGracefulShutdown()
                try? await tasks.waitForAll()
                throw error
            }
        }
    }

    /// Polls `condition` until it is true or `timeout` passes.
    public static func eventually(timeout: Duration = .seconds(15), interval: Duration = .milliseconds(50),
                                  _ condition: @Sendable () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try await Task.sleep(for: interval)
        }
        return try await condition()
    }

    /// The letters on a test's `dead-letters` topic, once `count` arrived or 20 s passed.
    public static func deadLetters(_ configuration: KafkaConfiguration, count: Int) async throws -> [Envelope<DeadLetterSink.Letter>] {
        let consumer = try await KafkaConsumer.open(configuration: configuration,
                                                    subscription: .allPartitions(topics: [configuration.topic(Topic.deadLetters)], from: .beginning),
                                                    logger: logger)
        var letters: [Envelope<DeadLetterSink.Letter>] = []
        let deadline = ContinuousClock.now + .seconds(20)
        while letters.count < count && ContinuousClock.now < deadline {
            for message in try await consumer.poll(maxMessages: 100, timeout: .milliseconds(200)) {
                letters.append(try EnvelopeDecoder.decode(DeadLetterSink.Letter.self, from: message.value))
            }
        }
        await consumer.close()
        return letters
    }
}

extension Trait where Self == TimeLimitTrait {
    /// On every suite that runs services: a test still running after 10 minutes (a full run takes about 4) fails with its
    /// name, and is cancelled; it stops if what it waits for honours cancellation. Without it, a hung test held the run
    /// until CI gave up on it, without a word on which test it was.
    public static var stopsIfHung: Self { .timeLimit(.minutes(10)) }
}

extension CatalogCommandClient {
    /// `execute` with room for a full parallel test run on two cores, where catalog can take longer than the
    /// 10 s an admin page waits; a wrong or missing answer still fails, only later.
    public func executeInTest(_ command: CatalogCommand) async throws -> CatalogCommandResult {
        try await execute(command, timeout: .seconds(45))
    }
}

/// A test's precondition that failed, thrown (and so recorded) where `try #require` cannot be used: in a local function
/// inside a closure, swift-testing's macro expands to code the compiler warns about ("no calls to throwing functions").
public struct TestFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
