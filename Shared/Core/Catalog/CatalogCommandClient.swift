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
        var headers = requestId.map { [(MessageHeader.requestId, Array($0.utf8))] } ?? []
        let value = CatalogEventCodec.write(envelope)
        if let signature = configuration.commandSignature { headers.append(signature.header(for: value)) }
        try await producer.send(KafkaOutgoingMessage(topic: producer.configuration.topic(Topic.catalogCommands),
                                                     key: command.key, value: value, headers: headers))
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
                var unusable = false
                let arrived: Result<CatalogCommandResult, any Error>? = pending.withLock { pending in
                    // A result kept as it came is decoded now, under the lock: a rare case (a fast catalog), of one result.
                    // One keyed by this command that holds another's is a wrong message, not this command's answer.
                    if let early = pending.takeEarly(commandId) {
                        if let result = early.decoded, result.commandId == commandId { return .success(result) }
                        unusable = true
                    }
                    // Checked under the lock: a cancellation after this finds the waiter and resumes it.
                    if Task.isCancelled { return .failure(CancellationError()) }
                    pending.waiting[commandId, default: [:]][ticket] = continuation
                    return nil
                }
                if unusable { logger.warning("undecodable command result, or another command's", metadata: ["commandId": "\(commandId)"]) }
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
            pending.keep(.decoded(result), for: result.commandId)
            return []
        }
        for waiter in waiters { waiter.resume(returning: result) }
    }

    /// Hands a result message to the waiters of `commandId` (its key), decoded; with none, keeps it as it came.
    /// Every client reads every result, and most are other clients' (an import's are a megabyte each): decoding
    /// only those someone takes was a tenth of the feed's CPU while a city was imported.
    func deliver(message: [UInt8], commandId: UUID) {
        let kept = pending.withLock { pending in
            guard pending.waiting[commandId] == nil else { return false }
            pending.keep(.encoded(message), for: commandId)
            return true
        }
        if !kept { deliver(decoding: message) }
    }

    /// Decodes a result message and hands it on; an undecodable one is logged and dropped.
    private func deliver(decoding message: [UInt8]) {
        guard let result = EarlyResult.encoded(message).decoded else {
            logger.warning("undecodable command result", metadata: ["bytes": "\(message.count)"])
            return
        }
        deliver(result)
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
                // Catalog keys each result by its command id; a result without one is read to find it.
                if let key = message.key, let commandId = key.withUnsafeBytes({ UUID(bytes: $0) }) {
                    self.deliver(message: message.value, commandId: commandId)
                } else {
                    self.deliver(decoding: message.value)
                }
            }
        }
        await results.close()
    }
}

/// The results not yet taken and the callers waiting, in one value under one lock.
private struct PendingResults {
    /// Most results kept for a caller still to come, and most bytes of them: every client reads every answer,
    /// and an import's is about a megabyte.
    static let earlyLimit = 10_000
    static let earlyByteLimit = 32 << 20
    /// Per command, its waiters by ticket (the same command may be awaited twice, e.g. when resent).
    var waiting: [UUID: [Int: CheckedContinuation<CatalogCommandResult, any Error>]] = [:]
    /// Results that arrived before their sender started waiting, kept briefly, each with its arrival's serial.
    private var early: [UUID: (result: EarlyResult, serial: Int)] = [:]
    /// Arrivals, oldest first from `arrivalsStart`; one whose serial is no longer its command's was taken or replaced.
    private var arrivals: [(commandId: UUID, serial: Int)] = []
    private var arrivalsStart = 0
    private var earlyBytes = 0
    private var nextSerial = 0
    private var nextTicket = 0

    /// Keeps a result nobody waits for yet. Those nobody will wait for (another client's, or a waiter that timed out)
    /// must not pile up: past either limit the oldest go.
    mutating func keep(_ result: EarlyResult, for commandId: UUID) {
        _ = takeEarly(commandId)
        nextSerial += 1
        early[commandId] = (result, nextSerial)
        earlyBytes += result.byteCount
        arrivals.append((commandId, nextSerial))
        while early.count > Self.earlyLimit || earlyBytes > Self.earlyByteLimit, arrivalsStart < arrivals.count {
            let oldest = arrivals[arrivalsStart]
            arrivalsStart += 1
            if early[oldest.commandId]?.serial == oldest.serial { _ = takeEarly(oldest.commandId) }
        }
        // Taken results leave their arrivals behind: dropped once they outnumber the kept ones.
        if arrivals.count - arrivalsStart > 2 * early.count + 1_024 {
            arrivals = arrivals[arrivalsStart...].filter { early[$0.commandId]?.serial == $0.serial }
            arrivalsStart = 0
        }
    }

    /// The result kept for `commandId`, taken out.
    mutating func takeEarly(_ commandId: UUID) -> EarlyResult? {
        guard let kept = early.removeValue(forKey: commandId) else { return nil }
        earlyBytes -= kept.result.byteCount
        return kept.result
    }

    mutating func takeTicket() -> Int {
        defer { nextTicket += 1 }
        return nextTicket
    }
}

/// A result that arrived before anyone waited for it: as it came from the topic, or decoded (a test's).
enum EarlyResult: Sendable {
    case encoded([UInt8])
    case decoded(CatalogCommandResult)

    /// What it holds, about: a decoded result (only when its caller left while it was decoded) counted as a kilobyte.
    var byteCount: Int {
        switch self {
        case .encoded(let message): message.count
        case .decoded: 1_024
        }
    }

    var decoded: CatalogCommandResult? {
        switch self {
        case .decoded(let result): result
        case .encoded(let message): try? EnvelopeDecoder.decode(CatalogCommandResult.self, from: message).data
        }
    }
}
