import Foundation
import Logging
import Shared

/// Applies one command inside one transaction: at most once (by commandId), validated, with optimistic
/// concurrency, writing the entity, its `catalog.events` event, the command's result and an audit record.
struct CatalogCommandHandler: Sendable {
    let repository: any CatalogRepository
    let topics: KafkaConfiguration
    /// Partition count of `catalog.events`, for the snapshot's per-partition markers.
    let eventPartitions: @Sendable () async throws -> Int
    /// Sends a snapshot's chunks straight to `catalog.events` (see `Work.snapshot`).
    let producer: KafkaProducer
    let logger: Logger
    let snapshotCache = SnapshotCache()

    /// Most entities in one snapshot chunk, and the most bytes its message may have (a chunk over it is halved;
    /// brokers refuse messages over 1 MB by default).
    static let snapshotChunkEntities = 256
    static let snapshotChunkBytes = 512 * 1024

    /// Handles a command; returns its result (the stored one when the command was seen before).
    @discardableResult
    func handle(_ command: CatalogCommand, requestId: String? = nil, now: Date = Date()) async throws -> CatalogCommandResult {
        try await snapshotCache.handlingCommand { try await handleNow(command, requestId: requestId, now: now) }
    }

    private func handleNow(_ command: CatalogCommand, requestId: String?, now: Date) async throws -> CatalogCommandResult {
        // Whole milliseconds: what JSON and Postgres both keep exactly, so a stored result equals the returned one.
        let now = Date(timeIntervalSince1970: (now.timeIntervalSince1970 * 1_000).rounded() / 1_000)
        if command.action == .history || command.action == .recentlyDeleted { return try await history(command, requestId: requestId, now: now) }
        let partitions = command.action == .snapshot ? try await eventPartitions() : 0
        let result = try await repository.withTransaction { transaction in
            try await transaction.lock(CommandLock.locks(for: command))
            if var previous = try await transaction.processedResult(of: command.commandId) {
                // Applied before: change nothing, but answer again, since the sender may be waiting for it, saying
                // it is a repeat (the admin shows "already saved").
                previous.repeated = true
                try await transaction.appendOutbox([try resultEntry(previous, requestId: requestId)])
                return previous
            }
            let directSends = DirectSends(producer: producer)
            var work = Work(command: command, transaction: transaction, topics: topics, requestId: requestId, now: now, directSends: directSends)
            work.snapshotCache = snapshotCache
            // Round-tripped through JSON, so the first answer is byte for byte the one a redelivery gets. Not an import's:
            // its rows hold only text, ids and outcomes, which read back as written (CatalogEventCodecTests), and decoding
            // a thousand rows' result again was a large part of an import's work (docs/BENCHMARKS.md, "Catalog's import").
            let applied = try await work.apply(eventPartitions: partitions)
            let result = command.action == .importBatch
                ? applied : try JSONCoding.decoder.decode(CatalogCommandResult.self, from: Data(CatalogEventCodec.text(applied).utf8))
            // Before the commit, so a failure leaves the command to be redelivered and applied again.
            try await directSends.delivered()
            try await transaction.recordProcessed(result)
            work.outbox.append(try resultEntry(result, requestId: requestId))
            try await transaction.appendOutbox(work.outbox)
            return result
        }
        if result.outcome == .applied && command.action != .snapshot { snapshotCache.noteChange() }
        return result
    }

    /// Answers several `catalog.snapshot` requests with one snapshot (DESIGN.md "One snapshot for many readers"): its
    /// `snapshotId` is the first new request's id and its markers name every new request in `answers`. Each request is
    /// recorded and answered on its own; one seen before is answered again as a repeat and left out. Returns the
    /// results, the repeats' first (a request given twice is answered once).
    @discardableResult
    func handleSnapshot(answering requests: [(command: CatalogCommand, requestId: String?)], now: Date = Date()) async throws -> [CatalogCommandResult] {
        var seen = Set<UUID>()
        let requests = requests.filter { $0.command.action == .snapshot && seen.insert($0.command.commandId).inserted }
        if requests.count <= 1, let only = requests.first { return [try await handle(only.command, requestId: only.requestId, now: now)] }
        guard !requests.isEmpty else { return [] }
        return try await snapshotCache.handlingCommand { try await snapshotNow(answering: requests, now: now) }
    }

    private func snapshotNow(answering requests: [(command: CatalogCommand, requestId: String?)], now: Date) async throws -> [CatalogCommandResult] {
        let now = Date(timeIntervalSince1970: (now.timeIntervalSince1970 * 1_000).rounded() / 1_000)
        let partitions = try await eventPartitions()
        return try await repository.withTransaction { transaction in
            // Each request's id, as `handleNow` takes it (a request handled by two catalogs at a hand-over), in one order
            // for every group, so two groups sharing requests never wait for each other in a circle.
            try await transaction.lock(requests.flatMap { CommandLock.locks(for: $0.command) }.sorted { $0.key < $1.key })
            var results: [CatalogCommandResult] = [], repeats: [OutboxEntry] = []
            var fresh: [(command: CatalogCommand, requestId: String?)] = []
            for request in requests {
                if var previous = try await transaction.processedResult(of: request.command.commandId) {
                    previous.repeated = true
                    repeats.append(try resultEntry(previous, requestId: request.requestId))
                    results.append(previous)
                } else {
                    fresh.append(request)
                }
            }
            guard let first = fresh.first else {
                try await transaction.appendOutbox(repeats)
                return results
            }
            let directSends = DirectSends(producer: producer)
            var work = Work(command: first.command, transaction: transaction, topics: topics, requestId: first.requestId, now: now,
                            directSends: directSends)
            work.snapshotCache = snapshotCache
            work.answers = fresh.count > 1 ? fresh.map(\.command.commandId) : nil
            let applied = try await work.apply(eventPartitions: partitions)
            try await directSends.delivered()
            for request in fresh {
                var answer = applied
                answer.commandId = request.command.commandId
                let result = try JSONCoding.decoder.decode(CatalogCommandResult.self, from: Data(CatalogEventCodec.text(answer).utf8))
                try await transaction.recordProcessed(result)
                work.outbox.append(try resultEntry(result, requestId: request.requestId))
                results.append(result)
            }
            try await transaction.appendOutbox(repeats + work.outbox)
            return results
        }
    }

    /// Brings the snapshot cache up to date (`SnapshotCacheWarmer`); returns how many buckets it encoded.
    @discardableResult
    func warmSnapshotCache() async throws -> Int {
        try await repository.withTransaction { transaction in
            try await snapshotCache.poiPayloads(in: transaction) { Work.chunkPayloads(pois: $0, snapshotId: nil) }.encodedBuckets
        }
    }
}

extension CatalogCommandHandler {
    /// Most audit rows one history answer carries, and about the most bytes of states (a result is one message).
    static let historyEntries = 100
    static let historyBytes = 400 * 1024

    /// Answers `catalog.history` (the entity's audit rows, newest first, as states) and `catalog.recently-deleted`
    /// (the deletes of the last `CatalogRetention.restorableDays` days not undone, each with the state it deleted). Reads: nothing is
    /// recorded, so asking again reads again.
    func history(_ command: CatalogCommand, requestId: String?, now: Date) async throws -> CatalogCommandResult {
        try await repository.withTransaction { transaction in
            var result = CatalogCommandResult(commandId: command.commandId, action: command.action, outcome: .applied, entityId: command.entityId)
            let rows: [AuditRow]? = if command.action == .recentlyDeleted {
                try await transaction.recentDeletes(since: now.addingTimeInterval(-Double(CatalogRetention.restorableDays) * 86_400),
                                                    limit: Self.historyEntries)
            } else if let id = command.entityId {
                try await transaction.auditTrail(of: id, limit: Self.historyEntries)
            } else {
                nil
            }
            if let rows {
                var entries: [CatalogHistoryEntry] = []
                var bytes = 0
                for row in rows {
                    bytes += row.after?.utf8.count ?? 0
                    if bytes > Self.historyBytes, !entries.isEmpty { break }
                    var entry = CatalogHistoryEntry(at: row.at, actor: row.actor, action: CatalogAction(rawValue: row.action) ?? .importBatch)
                    if let after = row.after.map({ Data($0.utf8) }) {
                        // A tour's state has stops and a status; a POI's has neither.
                        entry.tour = try? JSONCoding.decoder.decode(TourState.self, from: after)
                        if entry.tour == nil { entry.poi = try? JSONCoding.decoder.decode(PoiState.self, from: after) }
                    }
                    entries.append(entry)
                }
                result.history = entries
            } else {
                result.outcome = .rejected
                result.errors = [FieldError(field: "entityId", message: "entityId is required")]
            }
            try await transaction.appendOutbox([try resultEntry(result, requestId: requestId)])
            return result
        }
    }

    /// Answers a command the database cannot store as rejected, recording it so a redelivery gets the same answer.
    func refuse(_ command: CatalogCommand, reason: String, requestId: String?) async throws {
        let result = CatalogCommandResult(commandId: command.commandId, action: command.action, outcome: .rejected, entityId: command.entityId,
                                          message: reason)
        try await repository.withTransaction { transaction in
            try await transaction.lock(CommandLock.locks(for: command))
            guard try await transaction.processedResult(of: command.commandId) == nil else { return }
            try await transaction.recordProcessed(result)
            try await transaction.appendOutbox([try resultEntry(result, requestId: requestId)])
        }
    }

    /// The outbox row that answers a command on `catalog.command-results`.
    func resultEntry(_ result: CatalogCommandResult, requestId: String?) throws -> OutboxEntry {
        let envelope = Envelope(type: "command.\(result.outcome.rawValue)", source: "catalog", data: result)
        return OutboxEntry(topic: topics.topic(Topic.catalogCommandResults), key: result.commandId.uuidString.lowercased(),
                           partition: nil, payload: String(decoding: CatalogEventCodec.write(envelope), as: UTF8.self), requestId: requestId)
    }
}

/// The state of one command's application: what it writes to the outbox as it goes.
struct Work {
    let command: CatalogCommand
    let transaction: any CatalogTransaction
    let topics: KafkaConfiguration
    let requestId: String?
    let now: Date
    var outbox: [OutboxEntry] = []
    /// Sends messages before the transaction commits, not through the outbox: a snapshot's chunks and records.
    let directSends: DirectSends
    /// Catalog's snapshot chunks, reused by the next snapshot; nil: encode every chunk afresh.
    var snapshotCache: SnapshotCache?
    /// A snapshot answering several requests: their ids, for its markers (`CatalogCommandHandler.handleSnapshot`).
    var answers: [UUID]?
    /// Stops whose drafts a tour's publish published, for the result (so the admin shows them at once).
    var publishedStops: [PoiState] = []
    /// A row of an import: publishing skips the accessibility check, whose fields the import formats do not carry
    /// (DESIGN.md, "Accessibility and stops").
    var isImportRow = false

    init(command: CatalogCommand, transaction: any CatalogTransaction, topics: KafkaConfiguration, requestId: String?, now: Date,
         directSends: DirectSends) {
        self.command = command
        self.directSends = directSends
        self.transaction = transaction
        self.topics = topics
        self.requestId = requestId
        self.now = now
    }

    func envelope<T: Codable & Sendable>(type: String, _ data: T) throws -> String {
        String(decoding: try Envelope(type: type, source: "catalog", data: data).encoded(), as: UTF8.self)
    }

    mutating func publish(_ event: CatalogEvent, partition: Int32? = nil) {
        outbox.append(OutboxEntry(topic: topics.topic(Topic.catalogEvents), key: event.entityId?.uuidString.lowercased(),
                                  partition: partition, payload: Self.payload(event), requestId: requestId))
    }

    /// A `catalog.events` message, written by its codec.
    static func payload(_ event: CatalogEvent) -> String {
        String(decoding: CatalogEventCodec.write(Envelope(type: event.kind.rawValue, source: "catalog", data: event)), as: UTF8.self)
    }

    /// The messages of snapshot chunks holding these entities: as few chunks of at most
    /// `snapshotChunkEntities` as will do, of even size.
    static func chunkPayloads(pois: [PoiState] = [], tours: [TourState] = [], snapshotId: UUID?) -> [[UInt8]] {
        func groups<T>(_ entities: [T]) -> [ArraySlice<T>] {
            guard !entities.isEmpty else { return [] }
            let count = (entities.count + CatalogCommandHandler.snapshotChunkEntities - 1) / CatalogCommandHandler.snapshotChunkEntities
            return (0..<count).map { entities[entities.count * $0 / count..<entities.count * ($0 + 1) / count] }
        }
        return groups(pois).flatMap { chunkPayloads(.snapshotChunk(pois: Array($0), snapshotId: snapshotId)) }
            + groups(tours).flatMap { chunkPayloads(.snapshotChunk(tours: Array($0), snapshotId: snapshotId)) }
    }

    /// A snapshot chunk's message, or two or more when it is too large: halved until each fits.
    static func chunkPayloads(_ chunk: CatalogEvent) -> [[UInt8]] {
        let payload = CatalogEventCodec.write(Envelope(type: chunk.kind.rawValue, source: "catalog", data: chunk))
        let pois = chunk.pois ?? [], tours = chunk.tours ?? []
        guard payload.count > CatalogCommandHandler.snapshotChunkBytes, pois.count + tours.count > 1 else { return [payload] }
        let half = (pois.count + tours.count) / 2, toursInFirst = max(0, half - pois.count)
        let halves = [
            CatalogEvent.snapshotChunk(pois: Array(pois.prefix(half)), tours: Array(tours.prefix(toursInFirst)), snapshotId: chunk.snapshotId),
            CatalogEvent.snapshotChunk(pois: Array(pois.dropFirst(half)), tours: Array(tours.dropFirst(toursInFirst)), snapshotId: chunk.snapshotId),
        ]
        return halves.flatMap(chunkPayloads)
    }

    mutating func publish(_ event: CategoryEvent) throws {
        outbox.append(OutboxEntry(topic: topics.topic(Topic.catalogEvents), key: event.entityId.uuidString.lowercased(),
                                  partition: nil, payload: try envelope(type: event.kind.rawValue, event), requestId: requestId))
    }

    func rejected(_ errors: [FieldError], message: String? = nil) -> CatalogCommandResult {
        CatalogCommandResult(commandId: command.commandId, action: command.action, outcome: .rejected,
                             entityId: command.entityId, errors: errors, message: message ?? errors.first?.message)
    }

    func missing(_ field: String, _ message: String) -> CatalogCommandResult { rejected([FieldError(field: field, message: message)]) }

    mutating func apply(eventPartitions: Int) async throws -> CatalogCommandResult {
        do {
            return try await applyAction(eventPartitions: eventPartitions)
        } catch let refusal as Refusal {
            return refusal.result
        }
    }

    private mutating func applyAction(eventPartitions: Int) async throws -> CatalogCommandResult {
        switch command.action {
        case .createTour: return try await createTour()
        case .updateTour, .setTourStatus, .setTourStops: return try await changeTour()
        case .deleteTour: return try await deleteTour()
        case .createPoi: return try await createPoi()
        case .updatePoi: return try await updatePoi()
        case .deletePoi: return try await deletePoi()
        case .snapshot: return try await snapshot(partitions: eventPartitions)
        case .createCategory: return try await createCategory()
        case .renameCategory: return try await renameCategory()
        case .deleteCategory: return try await deleteCategory()
        case .importBatch: return try await importBatch()
        case .revertTour: return try await revertTour()
        case .revertPoi: return try await revertPoi()
        case .discardTourDraft: return try await discardTourDraft()
        case .publishPoi, .discardPoiDraft: return try await changePoiDraft()
        case .setPoiStatus: return try await setPoiStatus()
        // Every `<recordKind>.<verb>` of CatalogRecordKinds (RecordCommands.swift).
        case .createCalendarEntry, .updateCalendarEntry, .setCalendarEntryStatus, .deleteCalendarEntry,
             .createPerson, .updatePerson, .setPersonStatus, .deletePerson, .createPage, .updatePage, .setPageStatus, .deletePage,
             .createFeatured, .updateFeatured, .setFeaturedStatus, .deleteFeatured, .createMedia, .updateMedia, .setMediaStatus, .deleteMedia:
            return try await applyRecordCommand()
        case .scheduleTour: return try await scheduleTour()
        case .applyTourSchedule: return try await applyTourSchedule()
        case .history, .recentlyDeleted: return missing("action", "\(command.action.rawValue) is answered apart")
        }
    }

    // MARK: what every kind's commands use (tours: TourCommands.swift, POIs: PoiCommands.swift, records:
    // RecordCommands.swift, categories: CategoryCommands.swift, imports: ImportBatch.swift, snapshot: SnapshotCommand.swift)

    enum Reverted<State> {
        case state(State)
        case refused(CatalogCommandResult)
    }

    /// The state `revertToVersion` had, from the audit log, or the answer saying why there is none.
    func revertedState<State: Decodable>(_ type: State.Type, id: UUID) async throws -> Reverted<State> {
        guard let version = command.revertToVersion else { return .refused(missing("revertToVersion", "the version to go back to is required")) }
        guard let text = try await transaction.auditedState(of: id, version: version),
              let state = try? JSONCoding.decoder.decode(State.self, from: Data(text.utf8)) else {
            return .refused(missing("revertToVersion", "version \(version) is not in this entity's history"))
        }
        return .state(state)
    }

    /// Writes the change's audit row (the states as JSON, nil for none) and answers the command applied.
    func applied<State: AuditedState>(_ id: UUID, version: Int, before: State?, after: State?) async throws -> CatalogCommandResult {
        try await transaction.audit(commandId: command.commandId, actor: command.actor, action: command.action, entityId: id,
                                    before: try before?.auditText(), after: try after?.auditText())
        return CatalogCommandResult(commandId: command.commandId, action: command.action, outcome: .applied, entityId: id, version: version)
    }

    /// A command refused before it changed anything; `apply` answers with its result.
    struct Refusal: Error {
        let result: CatalogCommandResult
    }

    /// What every change of an existing entity starts with: the entity the command names, loaded in its transaction;
    /// else a `Refusal`: no `entityId`, no such entity (a deleted one is none, unless `allowingDeleted`: a revert restores
    /// it), or an `expectedVersion` that is not the current one (the conflict carries the current state).
    func loadForChange<State: Sendable>(_ noun: String, allowingDeleted: Bool = false, _ load: (UUID) async throws -> Stored<State>?,
                                        conflict: (State) -> CatalogCommandResult?) async throws -> Stored<State> {
        guard let id = command.entityId else { throw Refusal(result: missing("entityId", "entityId is required")) }
        guard let stored = try await load(id), allowingDeleted || !stored.isDeleted else {
            throw Refusal(result: missing("entityId", "\(noun) \(id) does not exist"))
        }
        if let conflict = conflict(stored.state) { throw Refusal(result: conflict) }
        return stored
    }

    func tourForChange(allowingDeleted: Bool = false) async throws -> Stored<TourState> {
        try await loadForChange("tour", allowingDeleted: allowingDeleted, { try await transaction.tour($0) }) { conflict(current: $0.version, tour: $0) }
    }

    func poiForChange(allowingDeleted: Bool = false) async throws -> Stored<PoiState> {
        try await loadForChange("POI", allowingDeleted: allowingDeleted, { try await transaction.poi($0) }) { conflict(current: $0.version, poi: $0) }
    }

    func categoryForChange() async throws -> Stored<CategoryState> {
        try await loadForChange("category", { try await transaction.category($0) }) { conflict(current: $0.version, category: $0) }
    }

    func recordForChange<Content: StoredRecord>(_: Content.Type) async throws -> Stored<CatalogRecordState<Content>> {
        try await loadForChange(Content.noun, { try await transaction.record(Content.self, $0) }) { recordConflict($0) }
    }

    func conflict(current: Int, tour: TourState? = nil, poi: PoiState? = nil, category: CategoryState? = nil) -> CatalogCommandResult? {
        guard let expected = command.expectedVersion, expected != current else { return nil }
        return CatalogCommandResult(commandId: command.commandId, action: command.action, outcome: .conflict, entityId: command.entityId,
                                    version: current, message: "changed by someone else: you edited version \(expected), the current version is \(current)",
                                    tour: tour, poi: poi, category: category)
    }

}

/// A state an audit row keeps, as JSON text: tours, POIs and records through their codec (an import audits
/// thousands), categories through `JSONCoding`.
protocol AuditedState {
    func auditText() throws -> String
}

extension PoiState: AuditedState {
    func auditText() -> String { CatalogEventCodec.text(self) }
}

extension TourState: AuditedState {
    func auditText() -> String { CatalogEventCodec.text(self) }
}

extension CategoryState: AuditedState {
    func auditText() throws -> String { try jsonText(self) }
}
