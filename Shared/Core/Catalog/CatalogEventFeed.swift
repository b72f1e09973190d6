import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// Feeds a service's projection from `catalog.events`: it reads every partition from the current end,
/// asks catalog for a snapshot, and reports itself loaded once the snapshot's marker has arrived on
/// every partition (a snapshot catalog sends for several readers names each of their requests). Used by the feed, the
/// admin site and analytics.
public final class CatalogEventFeed: Service, Sendable {
    /// Takes the tour and POI events of one message: one event, or a snapshot chunk's entities in one call (a city's
    /// snapshot is a hundred thousand of them). When a call throws, its events are given again one at a time, so only
    /// the failing ones are dead-lettered: handling an event twice must change no more than handling it once, as
    /// applying by version does. (A handler that stores events one by one and fails midway, its store gone, sees the
    /// stored ones fail again alone: a dead letter is an event that may not have been handled.)
    public typealias Handler = @Sendable ([CatalogEvent]) async throws -> Void
    public typealias CategoryHandler = @Sendable (Envelope<CategoryEvent>) async throws -> Void

    private let configuration: KafkaConfiguration
    private let startup: StartupBarrier
    private let consumer = Mutex<KafkaConsumer?>(nil)
    private let commands: CatalogCommandClient
    private let handler: Handler
    private let categoryHandler: CategoryHandler?
    /// By record kind (`calendar`, `person`, `page`, `featured`, `media`).
    private let recordHandlers: [String: CatalogRecordHandler]
    private let logger: Logger
    /// The snapshot this feed waits for: one at start, a new one whenever the log may have lost content.
    private let snapshotId = Mutex(UUID.random())
    private let markersSeen = Mutex<Set<Int32>>([])
    /// The last request whose snapshot arrived whole.
    private let answered = Mutex<UUID?>(nil)
    /// Requests asked before the current one since the log last moved (each asked again under a new id): a snapshot
    /// answering any of them still loads the feed, so one slower than `snapshotPatience` is not waited for in vain.
    private let askedBefore = Mutex<Set<UUID>>([])
    /// How long a request may go unanswered before it is asked again under a new id (catalog sets aside what it
    /// cannot answer: unsigned requests over their rate, or a request lost with the broker's log).
    private let snapshotPatience: Duration
    private let snapshotRequests = AsyncStream<UUID>.makeStream(bufferingPolicy: .bufferingNewest(1))
    private let loaded = Flag(false)
    private let source: String
    private let deadLetters: DeadLetterSink
    private let onSnapshotLoaded: (@Sendable () -> Void)?

    /// `startup` opens once the topics exist. `onSnapshotLoaded` is called each time a snapshot has arrived whole, after
    /// its events were handled: the first, and each one asked for after the log may have lost content.
    public init(configuration: KafkaConfiguration, startup: StartupBarrier, commands: CatalogCommandClient, deadLetters: DeadLetterSink,
                source: String, logger: Logger, handler: @escaping Handler, categoryHandler: CategoryHandler? = nil,
                recordHandlers: [CatalogRecordHandler] = [], onSnapshotLoaded: (@Sendable () -> Void)? = nil,
                snapshotPatience: Duration = .seconds(120)) {
        self.onSnapshotLoaded = onSnapshotLoaded
        self.snapshotPatience = snapshotPatience
        self.configuration = configuration
        self.startup = startup
        self.commands = commands
        self.handler = handler
        self.categoryHandler = categoryHandler
        self.recordHandlers = Dictionary(recordHandlers.map { ($0.kind, $0) }, uniquingKeysWith: { first, _ in first })
        self.logger = logger
        self.source = source
        self.deadLetters = deadLetters
    }

    /// True once a full snapshot has been applied.
    public var isLoaded: Bool { loaded.value }
    /// What it has handled, for its LagWatch (DESIGN.md "Readiness and degraded consumers").
    public let progress = ConsumerProgress()

    /// Records consumer lag per partition (before a metrics scrape).
    public func recordLag() async {
        await consumer.withLock({ $0 })?.recordLag(consumerName: "\(source)-catalog-events")
    }

    public func run() async throws {
        try await startup.wait()
        // Ask for the snapshot only after the consumer's start offsets are fixed, so nothing is missed.
        let consumer = try await KafkaConsumer.open(configuration: configuration,
                                                    subscription: .allPartitions(topics: [configuration.topic(Topic.catalogEvents)], from: .end),
                                                    logger: logger, name: "\(source)-catalog-events",
                                                    onLogCheck: { [self] check in reloadSnapshot(after: check) })
        self.consumer.withLock { $0 = consumer }
        progress.attach(consumer)
        snapshotRequests.continuation.yield(snapshotId.withLock { $0 })
        do {
            try await cancelWhenGracefulShutdown {
                try await withThrowingDiscardingTaskGroup { group in
                    group.addTask { await self.requestSnapshots() }
                    for try await message in consumer {
                        await self.process(message)
                        self.progress.handled(message)
                    }
                    // The messages ended (shutdown, or the consumer was closed): the requester may be retrying a
                    // send that cannot succeed any more, and the group would wait for it.
                    group.cancelAll()
                }
            }
        } catch {
            await consumer.close()
            throw error
        }
        await consumer.close()
    }

    /// Sends each snapshot request until catalog took it (the latest one only, if several wait), and asks again under a
    /// new id while none answers it within `snapshotPatience`.
    private func requestSnapshots() async {
        for await first in snapshotRequests.stream {
            var id = first
            while !Task.isCancelled, snapshotId.withLock({ $0 }) == id {
                do {
                    // Shared: catalog may answer it with the snapshot it sends for other readers' requests of the moment, whose
                    // markers then name this request in `answers` (DESIGN.md "One snapshot for many readers").
                    try await commands.send(CatalogCommand(commandId: id, action: .snapshot, actor: source, chunkedSnapshot: true,
                                                           sharedSnapshot: true))
                    logger.info("asked catalog for a snapshot", metadata: ["snapshot": "\(id)"])
                } catch {
                    logger.warning("snapshot request failed; retrying", metadata: ["error": "\(error)"])
                    try? await Task.sleep(for: .seconds(2))
                    continue
                }
                guard let again = await unanswered(id) else { break }
                logger.warning("no snapshot answered the request; asking again", metadata: [
                    "snapshot": "\(id)", "again": "\(again)", "waited_s": "\(snapshotPatience.components.seconds)",
                ])
                id = again
            }
        }
    }

    /// Waits up to `snapshotPatience` for request `id`'s snapshot. Still unanswered and still the one waited for, it is
    /// replaced by a new request id, returned; nil when answered, replaced meanwhile, or cancelled.
    private func unanswered(_ id: UUID) async -> UUID? {
        let deadline = ContinuousClock.now + snapshotPatience
        while ContinuousClock.now < deadline {
            if Task.isCancelled || answered.withLock({ $0 }) == id || snapshotId.withLock({ $0 }) != id { return nil }
            try? await Task.sleep(for: .milliseconds(200))
        }
        let again = UUID.random()
        let replaced = snapshotId.withLock { current in
            guard current == id, answered.withLock({ $0 }) != id else { return false }
            current = again
            return true
        }
        guard replaced else { return nil }
        askedBefore.withLock { _ = $0.insert(id) }
        return again
    }

    /// The log this feed reads may have lost content (it was replaced under the consumer's positions, or
    /// every broker was down and a memory-only one may have come back empty): ask for a new snapshot,
    /// after the consumer's positions were fixed, so what the snapshot publishes is read. The projection
    /// stays loaded meanwhile; a snapshot's events change only what changed.
    private func reloadSnapshot(after check: KafkaConsumer.LogCheck) {
        let id = UUID.random()
        snapshotId.withLock { $0 = id }
        markersSeen.withLock { $0 = [] }
        askedBefore.withLock { $0 = [] }
        logger.warning("catalog.events may have lost content; asking catalog for a new snapshot", metadata: [
            "moved": "\(check.moves.map(\.description))", "afterBrokerLoss": "\(check.afterBrokerLoss)", "snapshot": "\(id)",
        ])
        snapshotRequests.continuation.yield(id)
    }

    private func process(_ message: KafkaMessage) async {
        let envelope: Envelope<CatalogEvent>
        switch Result(catching: { () throws(EnvelopeError) in try CatalogEventCodec.read(message.value) }) {
        case .success(.catalog(let read)):
            envelope = read
        case .success(.other(let type)) where CategoryEvent.isCategoryEvent(type: type):
            // Category events (CatalogCategories.swift) go to the category handler; consumers without one skip them.
            guard let categoryHandler else { return }
            await running("category event") {
                try await categoryHandler(try EnvelopeDecoder.decode(CategoryEvent.self, from: message.value))
            } setAside: { error in await self.deadLetters.send(message, reason: "category event: \(error)") }
            return
        case .success(.other(let type)) where CatalogRecordHandler.isRecordEvent(type: type):
            // Record events (CatalogRecords.swift) likewise, to the handler of their kind.
            guard let handler = recordHandlers[CatalogRecordHandler.kind(of: type)] else { return }
            await running("\(handler.kind) event") { try await handler.handle(message.value) } setAside: { error in
                await self.deadLetters.send(message, reason: "\(handler.kind) event: \(error)")
            }
            return
        case .success(.other(let type)):
            await deadLetters.send(message, reason: EnvelopeError.unexpectedType(type).description)
            return
        case .failure(let error):
            // A chunk with a bad entity: the others are handled, the bad one dead-lettered alone.
            if let chunk = CatalogEventCodec.readChunkByEntity(message.value) {
                var events: [CatalogEvent] = []
                for entity in chunk.entities {
                    switch entity {
                    case .success(let event): events.append(event)
                    case .failure(let unread):
                        await deadLetters.send(message, part: ("an entity of a snapshot chunk", unread.json), reason: "unreadable entity: \(unread.reason)")
                    }
                }
                await handle(events, of: chunk.envelope, message)
            } else {
                await deadLetters.send(message, reason: error.description)
            }
            return
        }
        let event = envelope.data
        switch event.kind {
        case .snapshotMarker:
            // Its own snapshot's, or one that answers its request together with others'.
            let current = snapshotId.withLock { $0 }
            guard event.answers(current) || askedBefore.withLock({ $0.contains(where: event.answers) }),
                  let partitionCount = event.partitionCount, let partition = event.partition else { return }
            let (complete, completedNow) = markersSeen.withLock { seen in
                let before = seen.count >= partitionCount
                seen.insert(partition)
                return (seen.count >= partitionCount, !before && seen.count >= partitionCount)
            }
            if complete && !loaded.set() {
                logger.info("catalog projection loaded", metadata: ["snapshot": "\(snapshotId.withLock { $0 })"])
            }
            if completedNow {
                let id = snapshotId.withLock { $0 }
                answered.withLock { $0 = id }
                onSnapshotLoaded?()
            }
        case .snapshotChunk:
            await handle(event.entityEvents, of: envelope, message)
        default:
            await running("catalog event") { try await self.handler([event]) } setAside: { error in
                await self.deadLetters.send(message, reason: "handler failed: \(error)")
            }
        }
    }

    /// Runs a handler (DESIGN.md "When a message fails"): again while the database is briefly unwell; on any other
    /// failure `setAside` gets the error; nothing while stopping (the next start reads the message again).
    private func running(_ what: String, _ body: () async throws -> Void,
                         setAside: (any Error) async -> Void) async {
        do {
            try await DatabaseFailure.retryingTransient(logger: logger, what, body)
        } catch {
            if error is CancellationError || Task.isCancelled { return }
            await setAside(error)
        }
    }

    /// A snapshot chunk's entities, handled in one call; when it fails, one at a time, each failing one dead-lettered
    /// alone in an envelope like the chunk's (a whole chunk, escaped, could exceed a message's size).
    private func handle(_ events: [CatalogEvent], of chunk: Envelope<CatalogEvent>, _ message: KafkaMessage) async {
        guard !events.isEmpty else { return }
        do {
            try await DatabaseFailure.retryingTransient(logger: logger, "snapshot chunk") { try await handler(events) }
            return
        } catch {
            // Stopping: the next start asks for a snapshot again.
            if error is CancellationError || Task.isCancelled { return }
            guard events.count > 1 else { return await deadLetter(events[0], of: chunk, message, error) }
            logger.warning("a snapshot chunk's entities failed together; handling them one at a time", metadata: [
                "entities": "\(events.count)", "error": "\(error)",
            ])
        }
        for event in events {
            await running("snapshot chunk entity") { try await self.handler([event]) } setAside: { error in
                await self.deadLetter(event, of: chunk, message, error)
            }
        }
    }

    private func deadLetter(_ event: CatalogEvent, of chunk: Envelope<CatalogEvent>, _ message: KafkaMessage, _ error: any Error) async {
        let envelope = Envelope(id: chunk.id, type: event.kind.rawValue, schemaVersion: chunk.schemaVersion,
                                occurredAt: chunk.occurredAt, source: chunk.source, data: event)
        await deadLetters.send(message, part: ("entity \(event.entityId?.uuidString.lowercased() ?? "?")", CatalogEventCodec.write(envelope)),
                               reason: "handler failed: \(error)")
    }
}

/// What a consumer of `catalog.events` does with one kind of record's events (CatalogRecords.swift).
public struct CatalogRecordHandler: Sendable {
    /// Every kind of record catalog publishes: a consumer skips those it has no handler for.
    public static let kinds = Set(CatalogRecordKinds.all.map { $0.recordKind })

    let kind: String
    let handle: @Sendable ([UInt8]) async throws -> Void

    public static func of<Content: CatalogRecordContent>(_: Content.Type,
                                                         _ handler: @escaping @Sendable (Envelope<CatalogRecordEvent<Content>>) async throws -> Void) -> Self {
        Self(kind: Content.recordKind) { bytes in try await handler(try CatalogEventCodec.readRecordEvent(Content.self, from: bytes)) }
    }

    /// A handler for every kind in `kinds` (all of `CatalogRecordKinds.all` unless told), each calling the consumer's one
    /// generic method.
    public static func every(_ consumer: some CatalogRecordConsumer, of kinds: [any CatalogRecordContent.Type] = CatalogRecordKinds.all) -> [Self] {
        kinds.map { kind in of(kind, consumer) }
    }

    private static func of<Content: CatalogRecordContent>(_: Content.Type, _ consumer: some CatalogRecordConsumer) -> Self {
        of(Content.self) { envelope in try await consumer.handle(envelope) }
    }

    static func kind(of type: String) -> String { String(type.prefix { $0 != "." }) }

    static func isRecordEvent(type: String) -> Bool { kinds.contains(kind(of: type)) && (type.hasSuffix(".changed") || type.hasSuffix(".deleted")) }
}
