import Foundation
import Shared

/// What the command handler needs from storage. Every call of one command runs inside one
/// transaction (`withTransaction`), so the change, its outbox events, its result and its audit
/// record commit together or not at all.
protocol CatalogRepository: Sendable {
    func withTransaction<T: Sendable>(_ body: @Sendable (any CatalogTransaction) async throws -> T) async throws -> T
    /// Outbox rows not yet published, oldest first.
    func outboxBacklog() async throws -> Int
    /// Live tours whose pending schedule is due at `now` (DESIGN.md, "Scheduled publishing"), earliest first.
    func toursDue(at now: Date) async throws -> [(id: UUID, version: Int, by: String)]
}

/// A stored entity and whether it is a tombstone (deleted; its id stays taken, its version keeps counting).
struct Stored<State: Sendable>: Sendable {
    var state: State
    var isDeleted: Bool
}

protocol CatalogTransaction: Sendable {
    /// Takes these advisory locks, in order, until the transaction ends (`CommandLock`).
    func lock(_ locks: [CommandLock]) async throws

    /// The result recorded for a command already applied, if any.
    func processedResult(of commandId: UUID) async throws -> CatalogCommandResult?
    func recordProcessed(_ result: CatalogCommandResult) async throws

    /// The tour, locked for update until the transaction ends.
    func tour(_ id: UUID) async throws -> Stored<TourState>?
    func poi(_ id: UUID) async throws -> Stored<PoiState>?
    func saveTour(_ tour: TourState, deleted: Bool) async throws
    func savePoi(_ poi: PoiState, deleted: Bool) async throws
    /// Of `ids`, those naming POIs that exist and are not deleted.
    func livePoiIds(_ ids: [UUID]) async throws -> Set<UUID>
    /// Live tours having `poiId` as a stop.
    /// The live tours that stop at a POI, published or in their draft.
    func toursWithStop(_ poiId: UUID) async throws -> [UUID]
    func liveTours() async throws -> [TourState]
    func livePois() async throws -> [PoiState]
    /// Live POIs in 256 buckets by a hash of the id: how many in each, and a fingerprint that changes whenever
    /// a POI in the bucket is created, changed or deleted (a sum of hashes of id and version).
    func livePoiBuckets() async throws -> [Int: (count: Int, fingerprint: String)]
    /// Live POIs of those buckets, by bucket, each bucket's by id.
    func livePois(inBuckets buckets: [Int]) async throws -> [Int: [PoiState]]

    /// The category, locked for update until the transaction ends.
    func category(_ id: UUID) async throws -> Stored<CategoryState>?
    /// The live category with this path, compared without regard to case.
    func category(path: String) async throws -> CategoryState?
    func saveCategory(_ category: CategoryState, deleted: Bool) async throws
    /// Live categories whose path starts with `path` + "/", shallowest first.
    func descendantCategories(of path: String) async throws -> [CategoryState]
    /// Live POIs whose category is `path` or lies under it, locked for update.
    func poisInCategory(_ path: String) async throws -> [PoiState]
    /// Every live category, parents before children.
    func liveCategories() async throws -> [CategoryState]

    /// A catalog record (a calendar entry, a person), locked for update until the transaction ends.
    func record<Content: StoredRecord>(_: Content.Type, _ id: UUID) async throws -> Stored<CatalogRecordState<Content>>?
    func saveRecord<Content: StoredRecord>(_ record: CatalogRecordState<Content>, deleted: Bool) async throws
    /// Every live record of a kind, by id.
    func liveRecords<Content: StoredRecord>(_: Content.Type) async throws -> [CatalogRecordState<Content>]
    /// The live media items with these hashes (any status), by hash: what a POI's pictures, links and narration name.
    func liveMedia(sha256s: [String]) async throws -> [String: MediaState]

    /// Savepoints, so one row of an import can be undone without undoing the rest.
    func savepoint(_ name: String) async throws
    func rollback(toSavepoint name: String) async throws
    func release(savepoint name: String) async throws

    func appendOutbox(_ entries: [OutboxEntry]) async throws
    func audit(commandId: UUID, actor: String, action: CatalogAction, entityId: UUID?, before: String?, after: String?) async throws
    /// An entity's audit rows, newest first, at most `limit`.
    func auditTrail(of id: UUID, limit: Int) async throws -> [AuditRow]
    /// Tours' and POIs' deletes since `since` that are still their entity's last change, newest first, each with the
    /// state it deleted as `after`.
    func recentDeletes(since: Date, limit: Int) async throws -> [AuditRow]
    /// The state (JSON text) an entity had at `version`, from the audit row of the change that made it.
    func auditedState(of id: UUID, version: Int) async throws -> String?

    // Set-based reads and writes: an import's chunk loads what its commands read and writes what they
    // changed with one statement each (`StagedCatalogTransaction`).

    /// The recorded results of those of `commandIds` applied before.
    func processedResults(of commandIds: [UUID]) async throws -> [UUID: CatalogCommandResult]
    /// The POIs among `ids` that exist (tombstones too), locked for update until the transaction ends.
    func pois(_ ids: [UUID]) async throws -> [UUID: Stored<PoiState>]
    /// The tours among `ids` that exist (tombstones too), locked for update until the transaction ends.
    func tours(_ ids: [UUID]) async throws -> [UUID: Stored<TourState>]
    /// Where each of the POIs among `ids` that exist stands as a tour's stop (its working name and position), locked
    /// against changes (not for update) until the transaction ends: what publishing a tour reads of its stops, which in
    /// a city are a hundred a tour, so that no draft is saved between the check and the publication.
    func stopPlaces(_ ids: [UUID]) async throws -> [UUID: StopPlace]
    /// For each of `paths` that names a live category (without regard to case), that category, keyed by the path as given.
    func categories(paths: [String]) async throws -> [String: CategoryState]
    /// Writes `changes`: one statement per table, whatever their number.
    func write(_ changes: CatalogChanges) async throws
}

/// Changes made in memory, to be written together (`CatalogTransaction.write`). Each entity appears once,
/// in its last state.
struct CatalogChanges: Sendable {
    var pois: [Stored<PoiState>] = []
    var tours: [Stored<TourState>] = []
    var processed: [CatalogCommandResult] = []
    var audit: [AuditRecord] = []
    /// Outbox rows, written after the rest, in this order.
    var outbox: [OutboxEntry] = []

    var isEmpty: Bool { pois.isEmpty && tours.isEmpty && processed.isEmpty && audit.isEmpty && outbox.isEmpty }
}

/// One row of the audit log: who changed what, with the states before and after as JSON.
struct AuditRecord: Sendable {
    var commandId: UUID
    var actor: String
    var action: CatalogAction
    var entityId: UUID?
    var before: String?
    var after: String?
}

/// One message to publish after the transaction commits.
struct OutboxEntry: Sendable {
    var topic: String
    var key: String?
    var partition: Int32?
    var payload: String
    var requestId: String?

    struct EntityKey: Hashable {
        let topic: String
        let key: String
    }

    /// What a later entry with the same key replaces (on a compacted topic such as `catalog.events`); nil for one sent
    /// to a chosen partition without a key.
    var entityKey: EntityKey? { key.map { EntityKey(topic: topic, key: $0) } }
}

/// One row of `catalog.audit_log`: when, who, which command, and the entity's state after it (nil: deleted).
struct AuditRow: Sendable {
    var at: Date
    var actor: String
    var action: String
    var after: String?
}

/// A tour stop as publishing reads it: the POI's working name and position (its draft's, if it has one).
struct StopPlace: Sendable, Equatable {
    let name: String
    let latitude: Double
    let longitude: Double
    let hasDraft: Bool
    let isDeleted: Bool
}

extension StopPlace {
    init(_ stored: Stored<PoiState>) {
        let working = stored.state.working
        self.init(name: working.name, latitude: working.latitude, longitude: working.longitude,
                  hasDraft: stored.state.draft != nil, isDeleted: stored.isDeleted)
    }
}
