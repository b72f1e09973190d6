import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// Sends commands to catalog over `catalog.commands` and waits for each one's answer on
/// `catalog.command-results`. Used by the admin site and the import tools; run it as a `Service`.
public final class CatalogCommandClient: Service, Sendable {
    private let producer: KafkaProducer
    private let configuration: KafkaConfiguration
    private let startup: StartupBarrier
    /// Opens once the results consumer is reading, so no result can be missed.
    private let listening = StartupBarrier()
    private let source: String
    private let logger: Logger
    private let waiting = Mutex<[UUID: CheckedContinuation<CatalogCommandResult, any Error>]>([:])
    /// Results that arrived before their sender started waiting (a fast catalog), kept briefly.
    private let early = Mutex<[UUID: CatalogCommandResult]>([:])

    /// `startup` opens once the topics exist.
    public init(producer: KafkaProducer, configuration: KafkaConfiguration, startup: StartupBarrier, source: String, logger: Logger) {
        self.producer = producer
        self.configuration = configuration
        self.startup = startup
        self.source = source
        self.logger = logger
    }

    public enum CommandError: Error, CustomStringConvertible {
        case noAnswer(Duration)
        public var description: String {
            switch self {
            case .noAnswer(let timeout): "catalog did not answer within \(timeout); it may be down. The command was sent and will be applied when catalog is back."
            }
        }
    }

    /// Sends the command and waits up to `timeout` for its result.
    public func execute(_ command: CatalogCommand, requestId: String? = nil, timeout: Duration = .seconds(10)) async throws -> CatalogCommandResult {
        try await send(command, requestId: requestId)
        return try await result(of: command.commandId, timeout: timeout)
    }

    /// Sends the command; returns once the broker acknowledged it.
    public func send(_ command: CatalogCommand, requestId: String? = nil) async throws {
        try await listening.wait()
        let envelope = Envelope(type: command.action.rawValue, source: source, data: command)
        let headers = requestId.map { [(MessageHeader.requestId, Array($0.utf8))] } ?? []
        try await producer.send(KafkaOutgoingMessage(topic: producer.configuration.topic(Topic.catalogCommands),
                                                     key: command.key, value: try envelope.encoded(), headers: headers))
    }

    /// Waits for the result of a command sent earlier.
    public func result(of commandId: UUID, timeout: Duration) async throws -> CatalogCommandResult {
        try await withThrowingTaskGroup(of: CatalogCommandResult.self) { group in
            group.addTask {
                try await withCheckedThrowingContinuation { continuation in
                    if let result = self.early.withLock({ $0.removeValue(forKey: commandId) }) {
                        continuation.resume(returning: result)
                    } else {
                        self.waiting.withLock { $0[commandId] = continuation }
                    }
                }
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw CommandError.noAnswer(timeout)
            }
            defer {
                group.cancelAll()
                if let continuation = waiting.withLock({ $0.removeValue(forKey: commandId) }) {
                    continuation.resume(throwing: CommandError.noAnswer(timeout))
                }
            }
            return try await group.next()!
        }
    }

    public func run() async throws {
        try await startup.wait()
        let results = try KafkaConsumer(configuration: configuration,
                                        subscription: .allPartitions(topics: [configuration.topic(Topic.catalogCommandResults)], from: .end),
                                        logger: logger)
        listening.open()
        try await cancelWhenGracefulShutdown {
            for try await message in results {
                guard let envelope = try? EnvelopeDecoder.decode(CatalogCommandResult.self, from: message.value) else {
                    self.logger.warning("undecodable command result", metadata: ["offset": "\(message.offset)"])
                    continue
                }
                let result = envelope.data
                if let continuation = self.waiting.withLock({ $0.removeValue(forKey: result.commandId) }) {
                    continuation.resume(returning: result)
                } else {
                    self.early.withLock { early in
                        if early.count > 10_000 { early.removeAll() }
                        early[result.commandId] = result
                    }
                }
            }
        }
        await results.close()
    }
}
