import Foundation
import Logging
import Metrics
import PostgresNIO
import ServiceLifecycle
import Shared
import Synchronization

/// Reads `catalog.commands` in the catalog consumer group and hands each command to the handler: a partition's
/// commands one after another, different partitions' at once (`PartitionLanes`). Offsets are committed after the
/// commands' transactions committed; a redelivered command is recognised by its id and changes nothing.
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
    private let handled = Counter(label: "itour_commands_handled_total", help: "Catalog commands read from catalog.commands and handled.")

    /// Commands handled at once: partition `p`'s go to lane `p % lanes`.
    let lanes: Int

    init(makeConsumer: @escaping @Sendable () async throws -> KafkaConsumer, handler: CatalogCommandHandler, relay: OutboxRelay,
         deadLetters: DeadLetterSink, lanes: Int = 4, logger: Logger) {
        self.makeConsumer = makeConsumer
        self.lanes = max(1, lanes)
        self.handler = handler
        self.relay = relay
        self.deadLetters = deadLetters
        self.logger = logger
    }

    /// Records the group consumer's lag (before a metrics scrape).
    func recordLag(consumerName: String) async {
        await consumer.withLock({ $0 })?.recordLag(consumerName: consumerName)
    }

    /// Most commands read but not yet handled, over all partitions: polling waits below it.
    static let maximumInFlight = 200

    /// Handles each partition's commands in order, and the partitions' side by side: commands of different aggregates
    /// (and imports, keyed by their own ids) do not wait for one another, so catalog's work and Postgres's overlap.
    /// What two commands of different partitions both touch, their transactions' row locks order, as they order
    /// commands of other catalog instances.
    func run() async throws {
        let consumer = try await makeConsumer()
        self.consumer.withLock { $0 = consumer }
        progress.attach(consumer)
        let lanes = PartitionLanes(count: lanes)
        do {
            try await cancelWhenGracefulShutdown {
                try await withThrowingDiscardingTaskGroup { group in
                    defer { lanes.finish() }
                    var handledSignals = lanes.handledSignals.makeAsyncIterator()
                    while !Task.isCancelled {
                        while lanes.inFlight >= Self.maximumInFlight, !Task.isCancelled { await handledSignals.next() }
                        let messages = try await consumer.poll(maxMessages: 100, timeout: .milliseconds(500))
                        for message in messages {
                            if let lane = lanes.enqueue(message) {
                                group.addTask { try await self.handle(lane, lanes: lanes) }
                            }
                        }
                        await self.commit(lanes.takeHandledOffsets(), on: consumer)
                    }
                }
            }
        } catch is CancellationError {
            // Shutdown while a command was being retried: it is uncommitted and will be redelivered.
        }
        await commit(lanes.takeHandledOffsets(), on: consumer)
        await consumer.close()
    }

    /// One lane's commands, in order, until the lanes finish (shutdown).
    private func handle(_ lane: AsyncStream<KafkaMessage>, lanes: PartitionLanes) async throws {
        for await message in lane {
            if Task.isCancelled { return }
            try await process(message)
            // Each command's answer goes out while the next is handled: a sender keeping a few
            // commands in flight (an import) sends its next as soon as it hears of one.
            relay.notify()
            progress.handled(message)
            lanes.handled(message)
        }
    }

    private func commit(_ offsets: [KafkaTopicPartition: Int64], on consumer: KafkaConsumer) async {
        do {
            try await consumer.commit(offsets: offsets)
        } catch {
            // The group forgot this member (a broker that came back empty, a topic made again):
            // the commands are applied; uncommitted, they are redelivered and change nothing.
            logger.warning("committing command offsets failed; they will be redelivered", metadata: ["error": "\(error)"])
        }
    }

    /// Data exceptions (class 22) and integrity violations (class 23) fail again on every retry; connection
    /// losses and the like do not, and are retried.
    static func deterministicError(_ error: any Error) -> PSQLError? {
        let psql = (error as? PSQLError) ?? ((error as? PostgresTransactionError)?.closureError as? PSQLError)
        guard let psql, let state = psql.serverInfo?[.sqlState], state.hasPrefix("22") || state.hasPrefix("23") else { return nil }
        return psql
    }

    /// Handles one message. Bad messages are dead-lettered; a database failure is retried, never skipped.
    private func process(_ message: KafkaMessage) async throws {
        let envelope: Envelope<CatalogCommand>
        do {
            envelope = try CatalogEventCodec.readCommand(message.value)
        } catch {
            await deadLetters.send(message, reason: error.description)
            return
        }
        guard envelope.type == envelope.data.action.rawValue else {
            await deadLetters.send(message, reason: "envelope type \(envelope.type) does not match action \(envelope.data.action.rawValue)")
            return
        }
        var attempt = 0
        var refusedOnce = false
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
                return
            } catch let failure where Self.deterministicError(failure) != nil {
                let error = Self.deterministicError(failure)!
                // A key another partition's command wrote a moment before (two imports of one category, one row) fails
                // once and is found on a second try; a command that fails the same way twice fails for its own reasons.
                if error.serverInfo?[.sqlState]?.hasPrefix("23") == true, !refusedOnce {
                    refusedOnce = true
                    continue
                }
                // The same command would fail the same way forever and hold up its partition: refuse it instead.
                logger.error("command refused by the database", metadata: ["commandId": "\(envelope.data.commandId)", "error": "\(String(reflecting: error))"])
                let reason = "catalog could not store this command (\(error.serverInfo?[.message] ?? "database error"))"
                if (try? await handler.refuse(envelope.data, reason: reason, requestId: message.header(MessageHeader.requestId))) == nil {
                    await deadLetters.send(message, reason: reason)
                }
                return
            } catch {
                attempt += 1
                logger.error("command failed; retrying", metadata: ["commandId": "\(envelope.data.commandId)", "error": "\(String(reflecting: error))", "attempt": "\(attempt)"])
                if Task.isCancelled { throw CancellationError() }
                try await Task.sleep(for: .milliseconds(min(5_000, 100 * (1 << min(attempt, 6)))))
            }
        }
    }
}

/// The command consumer's lanes: a stream of messages per lane (partition `p` on lane `p % count`), handled by one task
/// each, and what they handled.
final class PartitionLanes: Sendable {
    private struct State {
        var lanes: [Int32: AsyncStream<KafkaMessage>.Continuation] = [:]
        var inFlight = 0
        var handled: [KafkaTopicPartition: Int64] = [:]
    }

    private let state = Mutex(State())
    private let count: Int32
    private let signal = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))

    init(count: Int) {
        self.count = Int32(max(1, count))
    }

    /// Fires after each handled message: the poll loop waits on it while too many are in flight.
    var handledSignals: AsyncStream<Void> { signal.stream }

    var inFlight: Int { state.withLock { $0.inFlight } }

    /// Queues `message` on its partition's lane; returns the lane's stream when the lane is new (start a task on it).
    func enqueue(_ message: KafkaMessage) -> AsyncStream<KafkaMessage>? {
        state.withLock { state in
            state.inFlight += 1
            let number = message.topicPartition.partition % count
            if let lane = state.lanes[number] {
                lane.yield(message)
                return nil
            }
            let (stream, lane) = AsyncStream.makeStream(of: KafkaMessage.self)
            state.lanes[number] = lane
            lane.yield(message)
            return stream
        }
    }

    func handled(_ message: KafkaMessage) {
        state.withLock { state in
            state.inFlight -= 1
            state.handled[message.topicPartition] = message.offset + 1
        }
        signal.continuation.yield()
    }

    /// The next offset of each partition handled since the last call: what to commit.
    func takeHandledOffsets() -> [KafkaTopicPartition: Int64] {
        state.withLock { state in
            defer { state.handled = [:] }
            return state.handled
        }
    }

    /// Ends every lane: each task returns once it has handled what its lane held.
    func finish() {
        let lanes = state.withLock { state in
            defer { state.lanes = [:] }
            return Array(state.lanes.values)
        }
        for lane in lanes { lane.finish() }
        signal.continuation.finish()
    }
}
