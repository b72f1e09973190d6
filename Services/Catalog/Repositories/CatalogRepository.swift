import Foundation
import Shared

/// What the command handler needs from storage. Every call of one command runs inside one
/// transaction (`withTransaction`), so the change, its outbox events, its result and its audit
/// record commit together or not at all.
protocol CatalogRepository: Sendable {
    func withTransaction<T: Sendable>(_ body: @Sendable (any CatalogTransaction) async throws -> T) async throws -> T
    /// Outbox rows not yet published, oldest first.
    func outboxBacklog() async throws -> Int
}

/// A stored entity and whether it is a tombstone (deleted; its id stays taken, its version keeps counting).
struct Stored<State: Sendable>: Sendable {
    var state: State
    var isDeleted: Bool
}

protocol CatalogTransaction: Sendable {
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
    func toursWithStop(_ poiId: UUID) async throws -> [UUID]
    func liveTours() async throws -> [TourState]
    func livePois() async throws -> [PoiState]

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

    /// Savepoints, so one row of an import can be undone without undoing the rest.
    func savepoint(_ name: String) async throws
    func rollback(toSavepoint name: String) async throws
    func release(savepoint name: String) async throws

    func appendOutbox(_ entries: [OutboxEntry]) async throws
    func audit(commandId: UUID, actor: String, action: CatalogAction, entityId: UUID?, before: String?, after: String?) async throws
}

/// One message to publish after the transaction commits.
struct OutboxEntry: Sendable {
    var topic: String
    var key: String?
    var partition: Int32?
    var payload: String
    var requestId: String?
}
