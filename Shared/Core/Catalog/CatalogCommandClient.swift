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
    let listening = StartupBarrier()
    private let source: String
    private let logger: Logger
    private let pending = Mutex(PendingResults())
    /// Called just before a waiter registers, with its command id; only tests set it, to deliver a result there.
    private let beforeRegistering: (@Sendable (UUID) -> Void)?

    /// `startup` opens once the topics exist.
    public convenience init(producer: KafkaProducer, configuration: KafkaConfiguration, startup: StartupBarrier, source: String, logger: Logger) {
        self.init(producer: producer, configuration: configuration, startup: startup, source: source, logger: logger, beforeRegistering: nil)
    }

    init(producer: KafkaProducer, configuration: KafkaConfiguration, startup: StartupBarrier, source: String, logger: Logger,
         beforeRegistering: (@Sendable (UUID) -> Void)?) {
        self.producer = producer
        self.configuration = configuration
        self.startup = startup
        self.source = source
        self.logger = logger
        self.beforeRegistering = beforeRegistering
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
                                                     key: command.key, value: CatalogEventCodec.write(envelope), headers: headers))
    }

    /// Waits for the result of a command sent earlier.
    public func result(of commandId: UUID, timeout: Duration) async throws -> CatalogCommandResult {
        try await withThrowingTaskGroup(of: CatalogCommandResult.self) { group in
            group.addTask { try await self.awaitResult(of: commandId) }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw CommandError.noAnswer(timeout)
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }

    /// Takes the result if it already arrived, or registers to be resumed with it, in one step under the
    /// lock that `deliver` takes too: a result cannot slip between "not arrived yet" and "waiting".
    /// Cancellation (the timeout) takes the waiter out and throws.
    private func awaitResult(of commandId: UUID) async throws -> CatalogCommandResult {
        beforeRegistering?(commandId)
        // Taken before the continuation exists, so the cancellation handler knows which waiter is this one.
        let ticket = pending.withLock { $0.takeTicket() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let arrived: Result<CatalogCommandResult, any Error>? = pending.withLock { pending in
                    if let result = pending.early.removeValue(forKey: commandId) { return .success(result) }
                    // Checked under the lock: a cancellation after this finds the waiter and resumes it.
                    if Task.isCancelled { return .failure(CancellationError()) }
                    pending.waiting[commandId, default: [:]][ticket] = continuation
                    return nil
                }
                if let arrived { continuation.resume(with: arrived) }
            }
        } onCancel: {
            let waiter = pending.withLock { pending -> CheckedContinuation<CatalogCommandResult, any Error>? in
                let waiter = pending.waiting[commandId]?.removeValue(forKey: ticket)
                if pending.waiting[commandId]?.isEmpty == true { pending.waiting[commandId] = nil }
                return waiter
            }
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// Hands a result to its waiters, or keeps it for a waiter still to come (a fast catalog).
    func deliver(_ result: CatalogCommandResult) {
        let waiters = pending.withLock { pending in
            if let waiters = pending.waiting.removeValue(forKey: result.commandId) { return Array(waiters.values) }
            // Results nobody waits for (another client's, or a waiter that timed out) must not pile up.
            if pending.early.count >= PendingResults.earlyLimit { pending.early.removeAll() }
            pending.early[result.commandId] = result
            return []
        }
        for waiter in waiters { waiter.resume(returning: result) }
    }

    public func run() async throws {
        let results: KafkaConsumer
        do {
            try await startup.wait()
            results = try await KafkaConsumer.open(configuration: configuration,
                                                   subscription: .allPartitions(topics: [configuration.topic(Topic.catalogCommandResults)], from: .end),
                                                   logger: logger)
        } catch {
            // Senders wait for this consumer: they get its error, not a wait for an answer nobody could read.
            listening.fail(error)
            throw error
        }
        listening.open()
        try await cancelWhenGracefulShutdown {
            for try await message in results {
                guard let envelope = try? EnvelopeDecoder.decode(CatalogCommandResult.self, from: message.value) else {
                    self.logger.warning("undecodable command result", metadata: ["offset": "\(message.offset)"])
                    continue
                }
                self.deliver(envelope.data)
            }
        }
        await results.close()
    }
}

/// The results not yet taken and the callers waiting, in one value under one lock.
private struct PendingResults {
    static let earlyLimit = 10_000
    /// Per command, its waiters by ticket (the same command may be awaited twice, e.g. when resent).
    var waiting: [UUID: [Int: CheckedContinuation<CatalogCommandResult, any Error>]] = [:]
    /// Results that arrived before their sender started waiting, kept briefly.
    var early: [UUID: CatalogCommandResult] = [:]
    private var nextTicket = 0

    mutating func takeTicket() -> Int {
        defer { nextTicket += 1 }
        return nextTicket
    }
}
