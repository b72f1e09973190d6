import Foundation
import Shared
import Synchronization

/// The transaction an import's chunk of POI and tour rows runs on: what the chunk's commands will read is
/// loaded up front (one query per kind), what they write is kept in memory and written by `flush` with one
/// statement per table. The commands themselves run through the ordinary command code (`Work`), so an
/// imported row is validated, versioned, audited and published exactly as the same command sent alone.
/// Savepoints are kept in memory too: a failed row is undone without a round trip.
///
/// It serves the reads of POI and tour commands (`stagedActions`); category commands and deletes, which
/// read across the catalog, run on the real transaction.
final class StagedCatalogTransaction: CatalogTransaction {
    static let stagedActions: Set<CatalogAction> = [.createPoi, .updatePoi, .createTour, .updateTour, .setTourStops, .setTourStatus]

    private let base: any CatalogTransaction
    private let state: Mutex<State>
    /// The latest write started by `writeBehind`; each write waits for the one before.
    private let pendingWrite = Mutex<Task<Void, any Error>?>(nil)

    private struct State: Sendable {
        /// Known results: loaded, or recorded by this chunk.
        var processed: [UUID: CatalogCommandResult] = [:]
        var processedLoaded: Set<UUID> = []
        /// Known entities, in their latest state (loaded, then changed); an id looked up but absent is in `…Loaded` only.
        var pois: [UUID: Stored<PoiState>] = [:]
        var poisLoaded: Set<UUID> = []
        /// Whether POIs read only as tour stops are live: a tour row needs no more of its stops, and reading a
        /// city's POIs whole for its tours' stops was most of an import's tours.
        var livePois: [UUID: Bool] = [:]
        var livenessLoaded: Set<UUID> = []
        /// Stops of tours being published that this chunk did not read whole: their name and position suffice.
        var stopPlaces: [UUID: StopPlace] = [:]
        var stopPlacesLoaded: Set<UUID> = []
        var tours: [UUID: Stored<TourState>] = [:]
        var toursLoaded: Set<UUID> = []
        var categories: [String: CategoryState] = [:]
        var categoriesLoaded: Set<String> = []
        /// What to write, in first-change order.
        var changedPois: [UUID] = []
        var changedPoiSet: Set<UUID> = []
        var changedTours: [UUID] = []
        var changedTourSet: Set<UUID> = []
        var recorded: [UUID] = []
        var audit: [AuditRecord] = []
        var undo: [Undo] = []
        var savepoints: [(name: String, mark: Mark)] = []
    }

    private enum Undo: Sendable {
        case poi(UUID, previous: Stored<PoiState>?, firstChange: Bool)
        case tour(UUID, previous: Stored<TourState>?, firstChange: Bool)
        case processed(UUID)
    }

    private struct Mark: Sendable {
        var undo: Int
        var audit: Int
    }

    struct StagingError: Error, CustomStringConvertible {
        let operation: String
        var description: String { "\(operation) is not available to an import's POI and tour rows" }
    }

    /// Loads, with one query per kind and locking the entities, what `commands` read.
    static func load(for commands: [CatalogCommand], on base: any CatalogTransaction) async throws -> StagedCatalogTransaction {
        let staged = StagedCatalogTransaction(base: base)
        var poiIds: Set<UUID> = [], stopIds: Set<UUID> = [], tourIds: Set<UUID> = [], paths: Set<String> = []
        for command in commands {
            switch command.action {
            case .createPoi, .updatePoi: if let id = command.entityId { poiIds.insert(id) }
            default: if let id = command.entityId { tourIds.insert(id) }
            }
            stopIds.formUnion(command.stops ?? [])
            paths.formUnion((command.poi?.categories ?? []).filter { !CommandValidation.isBlank($0, newlinesAreBlank: false) })
        }
        try await staged.loadProcessed(commands.map(\.commandId))
        // Publishing a tour reads its stops' places (and whole only those with drafts); otherwise whether they are live is enough.
        let publishes = commands.contains { $0.action == .setTourStatus && $0.status == .published }
        let stopsOnly = Array(stopIds.filter { !poiIds.contains($0) })
        try await staged.loadPois(Array(poiIds))
        // A stop's place says whether it is live too: one read of the stops, not two.
        if publishes { try await staged.loadStopPlaces(stopsOnly) } else { try await staged.loadLiveness(stopsOnly) }
        try await staged.loadTours(Array(tourIds))
        try await staged.loadCategories(Array(paths))
        return staged
    }

    private init(base: any CatalogTransaction) {
        self.base = base
        state = Mutex(State())
    }

    private func loadProcessed(_ ids: [UUID]) async throws {
        try await load(ids, marking: \.processedLoaded, into: \.processed) { try await base.processedResults(of: $0) }
    }

    private func loadPois(_ ids: [UUID]) async throws {
        try await load(ids, marking: \.poisLoaded, into: \.pois) { try await base.pois($0) }
    }

    private func loadLiveness(_ ids: [UUID]) async throws {
        try await load(ids, marking: \.livenessLoaded, into: \.livePois) { ids in
            Dictionary(uniqueKeysWithValues: try await base.livePoiIds(ids).map { ($0, true) })
        }
    }

    private func loadStopPlaces(_ ids: [UUID]) async throws {
        try await load(ids, marking: \.stopPlacesLoaded, into: \.stopPlaces) { try await base.stopPlaces($0) }
    }

    private func loadTours(_ ids: [UUID]) async throws {
        try await load(ids, marking: \.toursLoaded, into: \.tours) { try await base.tours($0) }
    }

    private func loadCategories(_ paths: [String]) async throws {
        try await load(paths, marking: \.categoriesLoaded, into: \.categories) { try await base.categories(paths: $0) }
    }

    /// Reads through `fetch` the keys not looked up before; what this chunk changed meanwhile wins over what is read.
    private func load<Key: Hashable & Sendable, Value: Sendable>(_ keys: [Key], marking looked: WritableKeyPath<State, Set<Key>>,
                                                                into known: WritableKeyPath<State, [Key: Value]>,
                                                                fetch: ([Key]) async throws -> [Key: Value]) async throws {
        // Checked key by key: `Set.subtracting` walks the whole of the other set, and this runs for every read.
        let wanted = state.withLock { state in
            var seen = Set<Key>()
            return keys.filter { !state[keyPath: looked].contains($0) && seen.insert($0).inserted }
        }
        guard !wanted.isEmpty else { return }
        let found = try await fetch(wanted)
        state.withLock { state in
            state[keyPath: looked].formUnion(wanted)
            state[keyPath: known].merge(found) { current, _ in current }
        }
    }

    /// Starts writing what the rows so far changed, and `outbox` (their events, in order), after any write before
    /// it, and goes on without waiting: Postgres stores one part of an import while catalog works out the next.
    /// Between rows only (no savepoint open), since what is written cannot be undone in memory; a failed import
    /// is undone by the real transaction's savepoint.
    func writeBehind(outbox: [OutboxEntry] = []) {
        var taken = takeChanges()
        taken.outbox = outbox
        let changes = taken
        guard !changes.isEmpty else { return }
        pendingWrite.withLock { pending in
            let previous = pending
            pending = Task { [base] in
                try await previous?.value
                try await base.write(changes)
            }
        }
    }

    /// Writes what the chunk changed, and `outbox`, and waits for every write of it.
    func flush(outbox: [OutboxEntry] = []) async throws {
        writeBehind(outbox: outbox)
        let pending = pendingWrite.withLock { pending in
            defer { pending = nil }
            return pending
        }
        try await pending?.value
    }

    /// Waits for the writes in flight: before a failed import's transaction ends, so no write is left to run
    /// after it. Returns a write's error: the cause, where the failure that ended the import (a later read
    /// refused by the aborted transaction) only follows from it.
    func settle() async -> (any Error)? {
        do {
            try await pendingWrite.withLock { $0 }?.value
            return nil
        } catch {
            return error
        }
    }

    private func takeChanges() -> CatalogChanges {
        state.withLock { state -> CatalogChanges in
            precondition(state.savepoints.isEmpty, "flush inside a savepoint")
            let changes = CatalogChanges(pois: state.changedPois.compactMap { state.pois[$0] },
                                         tours: state.changedTours.compactMap { state.tours[$0] },
                                         processed: state.recorded.compactMap { state.processed[$0] }, audit: state.audit)
            state.changedPois = []
            state.changedPoiSet = []
            state.changedTours = []
            state.changedTourSet = []
            state.recorded = []
            state.audit = []
            state.undo = []
            return changes
        }
    }

    // MARK: reads (an id not loaded up front is read through, e.g. a create without an entityId)

    func lock(_ locks: [CommandLock]) async throws {
        try await base.lock(locks)
    }

    func processedResult(of commandId: UUID) async throws -> CatalogCommandResult? {
        try await loadProcessed([commandId])
        return state.withLock { $0.processed[commandId] }
    }

    func poi(_ id: UUID) async throws -> Stored<PoiState>? {
        try await loadPois([id])
        return state.withLock { $0.pois[id] }
    }

    func tour(_ id: UUID) async throws -> Stored<TourState>? {
        try await loadTours([id])
        return state.withLock { $0.tours[id] }
    }

    /// A POI this chunk read or changed is live as it now stands; any other as the database has it.
    func livePoiIds(_ ids: [UUID]) async throws -> Set<UUID> {
        let unknown = state.withLock { state in
            ids.filter { !state.poisLoaded.contains($0) && state.pois[$0] == nil && !state.stopPlacesLoaded.contains($0) }
        }
        try await loadLiveness(unknown)
        return state.withLock { state in
            Set(ids.filter { id in state.pois[id].map { !$0.isDeleted } ?? state.stopPlaces[id].map { !$0.isDeleted } ?? state.livePois[id] ?? false })
        }
    }

    func category(path: String) async throws -> CategoryState? {
        try await loadCategories([path])
        return state.withLock { $0.categories[path] }
    }

    func processedResults(of commandIds: [UUID]) async throws -> [UUID: CatalogCommandResult] {
        try await loadProcessed(commandIds)
        let wanted = Set(commandIds)
        return state.withLock { state in state.processed.filter { wanted.contains($0.key) } }
    }

    func pois(_ ids: [UUID]) async throws -> [UUID: Stored<PoiState>] {
        try await loadPois(ids)
        return state.withLock { state in Dictionary(uniqueKeysWithValues: Set(ids).compactMap { id in state.pois[id].map { (id, $0) } }) }
    }

    /// A POI this chunk read or changed stands as it now is; any other as the database has it.
    func stopPlaces(_ ids: [UUID]) async throws -> [UUID: StopPlace] {
        let unknown = state.withLock { state in ids.filter { !state.poisLoaded.contains($0) && state.pois[$0] == nil } }
        try await loadStopPlaces(unknown)
        return state.withLock { state in
            Dictionary(Set(ids).compactMap { id in (state.pois[id].map(StopPlace.init) ?? state.stopPlaces[id]).map { (id, $0) } },
                       uniquingKeysWith: { first, _ in first })
        }
    }

    func tours(_ ids: [UUID]) async throws -> [UUID: Stored<TourState>] {
        try await loadTours(ids)
        return state.withLock { state in Dictionary(uniqueKeysWithValues: Set(ids).compactMap { id in state.tours[id].map { (id, $0) } }) }
    }

    func categories(paths: [String]) async throws -> [String: CategoryState] {
        try await loadCategories(paths)
        let wanted = Set(paths)
        return state.withLock { state in state.categories.filter { wanted.contains($0.key) } }
    }

    // MARK: writes, kept until `flush`

    func recordProcessed(_ result: CatalogCommandResult) async throws {
        state.withLock { state in
            state.processed[result.commandId] = result
            state.recorded.append(result.commandId)
            state.undo.append(.processed(result.commandId))
        }
    }

    func savePoi(_ poi: PoiState, deleted: Bool) async throws {
        state.withLock { state in
            let firstChange = state.changedPoiSet.insert(poi.id).inserted
            state.undo.append(.poi(poi.id, previous: state.pois[poi.id], firstChange: firstChange))
            if firstChange { state.changedPois.append(poi.id) }
            state.pois[poi.id] = Stored(state: poi, isDeleted: deleted)
        }
    }

    func saveTour(_ tour: TourState, deleted: Bool) async throws {
        state.withLock { state in
            let firstChange = state.changedTourSet.insert(tour.id).inserted
            state.undo.append(.tour(tour.id, previous: state.tours[tour.id], firstChange: firstChange))
            if firstChange { state.changedTours.append(tour.id) }
            state.tours[tour.id] = Stored(state: tour, isDeleted: deleted)
        }
    }

    /// An import has no history or revert rows: these are read outside imports only.
    func auditTrail(of id: UUID, limit: Int) async throws -> [AuditRow] { [] }
    func recentDeletes(since: Date, limit: Int) async throws -> [AuditRow] { [] }
    func auditedState(of id: UUID, version: Int) async throws -> String? { nil }

    func audit(commandId: UUID, actor: String, action: CatalogAction, entityId: UUID?, before: String?, after: String?) async throws {
        state.withLock { $0.audit.append(AuditRecord(commandId: commandId, actor: actor, action: action, entityId: entityId, before: before, after: after)) }
    }

    func write(_ changes: CatalogChanges) async throws { throw StagingError(operation: "write") }

    func appendOutbox(_ entries: [OutboxEntry]) async throws { throw StagingError(operation: "the outbox") }

    // MARK: savepoints, in memory

    func savepoint(_ name: String) async throws {
        state.withLock { state in state.savepoints.append((name, Mark(undo: state.undo.count, audit: state.audit.count))) }
    }

    func rollback(toSavepoint name: String) async throws {
        try state.withLock { state in
            guard let index = state.savepoints.lastIndex(where: { $0.name == name }) else { throw StagingError(operation: "savepoint \(name)") }
            let mark = state.savepoints[index].mark
            state.savepoints.removeSubrange((index + 1)...)
            while state.undo.count > mark.undo {
                switch state.undo.removeLast() {
                case .poi(let id, let previous, let firstChange):
                    state.pois[id] = previous
                    if firstChange { state.changedPoiSet.remove(state.changedPois.removeLast()) }
                case .tour(let id, let previous, let firstChange):
                    state.tours[id] = previous
                    if firstChange { state.changedTourSet.remove(state.changedTours.removeLast()) }
                case .processed(let id):
                    state.processed[id] = nil
                    state.recorded.removeLast()
                }
            }
            state.audit.removeSubrange(mark.audit...)
        }
    }

    func release(savepoint name: String) async throws {
        try state.withLock { state in
            guard let index = state.savepoints.lastIndex(where: { $0.name == name }) else { throw StagingError(operation: "savepoint \(name)") }
            state.savepoints.removeSubrange(index...)
        }
    }

    // MARK: reads across the catalog: not staged

    func toursWithStop(_ poiId: UUID) async throws -> [UUID] { throw StagingError(operation: "toursWithStop") }
    func liveTours() async throws -> [TourState] { throw StagingError(operation: "liveTours") }
    func livePois() async throws -> [PoiState] { throw StagingError(operation: "livePois") }
    func livePoiBuckets() async throws -> [Int: (count: Int, fingerprint: String)] { throw StagingError(operation: "livePoiBuckets") }
    func livePois(inBuckets buckets: [Int]) async throws -> [Int: [PoiState]] { throw StagingError(operation: "livePois(inBuckets)") }
    func category(_ id: UUID) async throws -> Stored<CategoryState>? { throw StagingError(operation: "category(id)") }
    func saveCategory(_ category: CategoryState, deleted: Bool) async throws { throw StagingError(operation: "saveCategory") }
    func descendantCategories(of path: String) async throws -> [CategoryState] { throw StagingError(operation: "descendantCategories") }
    func poisInCategory(_ path: String) async throws -> [PoiState] { throw StagingError(operation: "poisInCategory") }
    func liveCategories() async throws -> [CategoryState] { throw StagingError(operation: "liveCategories") }
    func record<Content: StoredRecord>(_: Content.Type, _ id: UUID) async throws -> Stored<CatalogRecordState<Content>>? {
        throw StagingError(operation: "record")
    }
    func saveRecord<Content: StoredRecord>(_ record: CatalogRecordState<Content>, deleted: Bool) async throws { throw StagingError(operation: "saveRecord") }
    func liveRecords<Content: StoredRecord>(_: Content.Type) async throws -> [CatalogRecordState<Content>] { throw StagingError(operation: "liveRecords") }
    /// Imports never change media items, so the base transaction's answer is the chunk's.
    func liveMedia(sha256s: [String]) async throws -> [String: MediaState] { try await base.liveMedia(sha256s: sha256s) }
}
