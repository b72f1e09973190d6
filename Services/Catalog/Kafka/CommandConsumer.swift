import Foundation
import Logging
import Metrics
import PostgresNIO
import ServiceLifecycle
import Shared
import Synchronization

/// Reads `catalog.commands` in the catalog consumer group and hands each command to the handler.
/// Offsets are committed after the commands' transactions committed; a redelivered command is
/// recognised by its id and changes nothing.
///
/// The group consumer is made in `run`, after start-up created the topics: a consumer that joins its group
/// before its topic exists gets no partitions until librdkafka's next metadata refresh (minutes later).
final class CommandConsumer: Service, Sendable {
    private let makeConsumer: @Sendable () async throws -> KafkaConsumer
    private let consumer = Mutex<KafkaConsumer?>(nil)
    /// What it has handled, for its LagWatch.
    let progress = ConsumerProgress()
    let handler: CatalogCommandHandler
    let relay: OutboxRelay
    let deadLetters: DeadLetterSink
    let logger: Logger
    /// What a command's `signature` header must prove (DESIGN.md "Signed commands").
    let signature: CommandSignature
    private let handled = Counter(label: "itour_commands_handled_total", help: "Catalog commands read from catalog.commands and handled.")
    private let unsignedSnapshots = UnsignedSnapshotAllowance()
    private let unsigned = Counter(label: "itour_commands_unsigned_total",
                                   help: "Messages on catalog.commands without a valid signature, set aside in dead-letters and not applied.")

    /// How long a shared snapshot request waits for others to answer with it (DESIGN.md "One snapshot for many readers");
    /// zero: each request is answered alone.
    let snapshotWindow: Duration
    static let defaultSnapshotWindow: Duration = .seconds(1)
    /// Most requests one snapshot answers (its markers list them all).
    static let snapshotGroupLimit = 256

    init(signature: CommandSignature, makeConsumer: @escaping @Sendable () async throws -> KafkaConsumer, handler: CatalogCommandHandler,
         relay: OutboxRelay, deadLetters: DeadLetterSink, logger: Logger, snapshotWindow: Duration = CommandConsumer.defaultSnapshotWindow) {
        self.snapshotWindow = snapshotWindow
        self.signature = signature
        self.makeConsumer = makeConsumer
        self.handler = handler
        self.relay = relay
        self.deadLetters = deadLetters
        self.logger = logger
    }

    /// Records the group consumer's lag (before a metrics scrape).
    func recordLag(consumerName: String) async {
        await consumer.withLock({ $0 })?.recordLag(consumerName: consumerName)
    }

    func run() async throws {
        let consumer = try await makeConsumer()
        self.consumer.withLock { $0 = consumer }
        progress.attach(consumer)
        do {
            try await cancelWhenGracefulShutdown {
                var offsets: [KafkaTopicPartition: Int64] = [:]
                // Shared snapshot requests waiting to be answered by one snapshot; while any wait, offsets are not
                // committed (a catalog stopped meanwhile leaves them to be read again).
                var group: SnapshotGroup?
                while !Task.isCancelled {
                    let wait = group.map { max(.milliseconds(1), min(.milliseconds(500), $0.deadline - .now)) } ?? .milliseconds(500)
                    let messages = try await consumer.poll(maxMessages: 100, timeout: wait)
                    // A poll's commands after its first are each read while the one before it is handled: an import's is a
                    // megabyte of JSON (about 10 ms). One ahead only: a poll's hundred import commands read at once would
                    // hold several hundred megabytes.
                    var next = messages.first.map(Self.reading)
                    for (index, message) in messages.enumerated() {
                        let command = await next!.value
                        if index + 1 < messages.count { next = Self.reading(messages[index + 1]) }
                        if let request = try await self.process(message, command: command) {
                            if group == nil { group = SnapshotGroup(deadline: .now + self.snapshotWindow) }
                            group!.requests.append(request)
                            if group!.requests.count >= Self.snapshotGroupLimit {
                                try await self.answer(group!)
                                group = nil
                            }
                        }
                        // Each command's answer goes out while the next is handled: a sender keeping a few
                        // commands in flight (an import) sends its next as soon as it hears of one.
                        self.relay.notify()
                        self.progress.handled(message)
                        offsets[message.topicPartition] = message.offset + 1
                    }
                    if let waiting = group, waiting.deadline <= .now {
                        try await self.answer(waiting)
                        group = nil
                        self.relay.notify()
                    }
                    guard group == nil, !offsets.isEmpty else { continue }
                    // Only partitions still this member's: offsets gathered over a window may include one a rebalance gave
                    // to another catalog since, which may have committed further (moved back, its commands would be read again).
                    let owned = Set(consumer.assignment)
                    do {
                        try await consumer.commit(offsets: offsets.filter { owned.contains($0.key) })
                    } catch let error as KafkaError {
                        // The group forgot this member (a broker that came back empty, a topic made again):
                        // the commands are applied; uncommitted, they are redelivered and change nothing.
                        self.logger.warning("committing command offsets failed; they will be redelivered", metadata: ["error": "\(error)"])
                    }
                    offsets = [:]
                }
            }
        } catch is CancellationError {
            // Shutdown while a command was being retried: it is uncommitted and will be redelivered.
        }
        await consumer.close()
    }

    /// Reads a message's command off the caller's path.
    private static func reading(_ message: KafkaMessage) -> Task<Result<Envelope<CatalogCommand>, EnvelopeError>, Never> {
        Task {
            do throws(EnvelopeError) { return .success(try CatalogEventCodec.readCommand(message.value)) } catch { return .failure(error) }
        }
    }

    /// Handles one message, read as `command`. Bad messages are dead-lettered; a command the database refuses for its content is
    /// refused (DatabaseFailure); any other failure is retried, never skipped. A snapshot request that can share its
    /// snapshot is returned instead, for the caller's group (`answer`).
    private func process(_ message: KafkaMessage, command: Result<Envelope<CatalogCommand>, EnvelopeError>) async throws -> SnapshotRequest? {
        let envelope: Envelope<CatalogCommand>
        switch command {
        case .success(let read): envelope = read
        case .failure(let error):
            await deadLetters.send(message, reason: error.description)
            return nil
        }
        guard envelope.type == envelope.data.action.rawValue else {
            await deadLetters.send(message, reason: "envelope type \(envelope.type) does not match action \(envelope.data.action.rawValue)")
            return nil
        }
        // Anyone who reaches the broker can write this topic: only a key holder's commands, and the actor they name, are
        // applied. A snapshot request changes nothing, and the feed and analytics, which hold no key, send them: unsigned
        // ones are let through at a bounded rate, as each republishes the whole catalog.
        let signed = signature.isValid(message.header(MessageHeader.signature), for: message.value)
        let request = envelope.data
        if snapshotWindow > .zero, request.action == .snapshot, request.chunkedSnapshot == true, request.sharedSnapshot == true {
            // Its allowance is taken by the snapshot that answers it, once for all the requests it answers.
            return SnapshotRequest(command: request, requestId: message.header(MessageHeader.requestId), message: message, signed: signed)
        }
        if !signed {
            let reason: String? = request.action != .snapshot ? "unsigned: no valid signature for this command (CATALOG_COMMAND_KEY)"
                : unsignedSnapshots.take() ? nil : Self.overRate
            if let reason {
                await setAside(message, request, reason: reason)
                return nil
            }
        }
        var failures = FailurePolicy()
        while true {
            do {
                let started = ContinuousClock.now
                let result = try await handler.handle(envelope.data, requestId: message.header(MessageHeader.requestId))
                let elapsed = ContinuousClock.now - started
                handled.increment()
                logger.info("command handled", metadata: [
                    "commandId": "\(envelope.data.commandId)", "action": "\(envelope.data.action.rawValue)",
                    "outcome": "\(result.outcome.rawValue)", "request_id": "\(message.header(MessageHeader.requestId) ?? "-")",
                    "seconds": "\(String(format: "%.3f", elapsed.seconds))",
                ])
                return nil
            } catch {
                switch try failures.verdict(error) {
                case .refuse(let reason):
                    // The same command would fail the same way forever and hold up its partition: refuse it instead.
                    logger.error("command refused", metadata: ["commandId": "\(envelope.data.commandId)", "error": "\(String(reflecting: error))"])
                    await refuse(envelope.data, requestId: message.header(MessageHeader.requestId), message: message, reason: reason)
                    return nil
                case .retry(let delay):
                    logger.error("command failed; retrying", metadata: [
                        "commandId": "\(envelope.data.commandId)", "error": "\(String(reflecting: error))", "attempt": "\(failures.attempt)"])
                    try await Task.sleep(for: delay)
                }
            }
        }
    }
}

extension CommandConsumer {
    /// How often an error that is not the database's is tried before the command is refused (about 3 s of backoff).
    static let programErrorAttempts = 5

    /// An error as the refusal names it: a transaction's wrapper looked through.
    static func describe(_ error: any Error) -> String {
        "\((error as? PostgresTransactionError)?.closureError ?? error)"
    }

    static let overRate = "unsigned: snapshot requests without a signature are over their rate (\(UnsignedSnapshotAllowance.burst), then one per \(UnsignedSnapshotAllowance.interval))"

    /// A snapshot request that takes a snapshot answering others too (`sharedSnapshot`).
    struct SnapshotRequest: Sendable {
        let command: CatalogCommand
        let requestId: String?
        let message: KafkaMessage
        let signed: Bool
    }

    /// Shared snapshot requests gathered until `deadline`, to be answered by one snapshot.
    struct SnapshotGroup: Sendable {
        let deadline: ContinuousClock.Instant
        var requests: [SnapshotRequest] = []
    }

    private func setAside(_ message: KafkaMessage, _ command: CatalogCommand, reason: String) async {
        unsigned.increment()
        logger.error("unsigned command set aside", metadata: ["commandId": "\(command.commandId)", "action": "\(command.action.rawValue)"])
        await deadLetters.send(message, reason: reason)
    }

    /// Answers a group of shared snapshot requests with one snapshot (DESIGN.md "One snapshot for many readers"). Unless
    /// one of them is signed, the snapshot takes one unsigned snapshot allowance; with none left, the group is set aside.
    /// Retried like any command while the failure is transient; refused request by request when the database refuses it.
    func answer(_ group: SnapshotGroup) async throws {
        guard !group.requests.isEmpty else { return }
        if !group.requests.contains(where: \.signed), !unsignedSnapshots.take() {
            for request in group.requests { await setAside(request.message, request.command, reason: Self.overRate) }
            return
        }
        let requests = group.requests.map { (command: $0.command, requestId: $0.requestId) }
        var failures = FailurePolicy()
        while true {
            do {
                let started = ContinuousClock.now
                let results = try await handler.handleSnapshot(answering: requests)
                handled.increment(by: group.requests.count)
                logger.info("snapshot requests answered by one snapshot", metadata: [
                    "requests": "\(group.requests.count)", "snapshot": "\(results.first { $0.repeated != true }?.commandId.description ?? "-")",
                    "commandIds": "\(group.requests.map { $0.command.commandId.uuidString.lowercased() }.joined(separator: ","))",
                    "seconds": "\(String(format: "%.3f", (ContinuousClock.now - started).seconds))",
                ])
                return
            } catch {
                switch try failures.verdict(error) {
                case .refuse(let reason):
                    logger.error("snapshot refused", metadata: ["requests": "\(group.requests.count)", "error": "\(String(reflecting: error))"])
                    for request in group.requests { await refuse(request.command, requestId: request.requestId, message: request.message, reason: reason) }
                    return
                case .retry(let delay):
                    logger.error("snapshot failed; retrying", metadata: [
                        "requests": "\(group.requests.count)", "error": "\(String(reflecting: error))", "attempt": "\(failures.attempt)"])
                    try await Task.sleep(for: delay)
                }
            }
        }
    }

    /// Answers a command as rejected with `reason`; dead-letters it when even that cannot be stored.
    private func refuse(_ command: CatalogCommand, requestId: String?, message: KafkaMessage, reason: String) async {
        if (try? await handler.refuse(command, reason: reason, requestId: requestId)) == nil {
            await deadLetters.send(message, reason: reason)
        }
    }
}

/// How a command's failures are met (DESIGN.md, "Dead letters"): the database's transient failures (a lost connection,
/// a deadlock) and the broker's are retried until they pass; one the database refuses for its content is refused at once;
/// an error of catalog's own code, met `programErrorAttempts` times running, is refused with its reason, so one command
/// cannot hold up its partition for ever.
struct FailurePolicy {
    enum Verdict {
        case retry(after: Duration)
        case refuse(reason: String)
    }

    /// Tries so far, for the log.
    private(set) var attempt = 0
    private var programErrors = 0

    mutating func verdict(_ error: any Error) throws -> Verdict {
        if error is CancellationError || Task.isCancelled { throw CancellationError() }
        if let reason = DatabaseFailure(error).contentReason { return .refuse(reason: "catalog could not store this command (\(reason))") }
        if DatabaseFailure.isDatabaseError(error) || error is KafkaError {
            programErrors = 0
        } else {
            programErrors += 1
            if programErrors >= CommandConsumer.programErrorAttempts {
                return .refuse(reason: "catalog could not apply this command: \(CommandConsumer.describe(error))")
            }
        }
        attempt += 1
        return .retry(after: .milliseconds(min(5_000, 100 * (1 << min(attempt, 6)))))
    }
}

/// How many snapshot requests without a signature catalog answers: a burst (every feed and analytics replica asking
/// at once after the broker lost its log), then one per interval. Each answer republishes the whole catalog, so an
/// unbounded rate would let anyone who reaches the broker keep catalog and every reader busy.
final class UnsignedSnapshotAllowance: Sendable {
    static let burst = 16
    static let interval: Duration = .seconds(30)
    private let state = Mutex((tokens: Double(UnsignedSnapshotAllowance.burst), at: ContinuousClock.now))

    /// Takes one request's allowance; false when none is left.
    func take(now: ContinuousClock.Instant = .now) -> Bool {
        state.withLock { state in
            let refill = (now - state.at) / Self.interval
            state = (min(Double(Self.burst), state.tokens + refill), now)
            guard state.tokens >= 1 else { return false }
            state.tokens -= 1
            return true
        }
    }
}
