import Foundation
import Shared
import Synchronization

/// The feed's in-memory view of published content, fed by `catalog.events`. Readers take an immutable
/// `Content` value under a short lock and never wait on a writer's work.
final class CatalogProjection: Sendable {
    struct Content: Sendable {
        var tours: [UUID: TourState] = [:]
        var pois: [UUID: PoiState] = [:]
        /// Version of each entity seen, including deleted ones, so an older event never undoes a newer one.
        var versions: [UUID: Int] = [:]

        var publishedTours: [TourState] {
            tours.values.filter { $0.status == .published }.sorted { ($0.content.name, $0.id.uuidString) < ($1.content.name, $1.id.uuidString) }
        }
    }

    private let state = Mutex(Content())

    var content: Content { state.withLock { $0 } }

    /// Applies an event if it is newer than what is held; returns whether it changed anything.
    @discardableResult
    func apply(_ event: CatalogEvent) -> Bool {
        guard let id = event.entityId, let version = event.version else { return false }
        return state.withLock { content in
            if let seen = content.versions[id], seen >= version { return false }
            content.versions[id] = version
            switch event.kind {
            case .tourChanged: content.tours[id] = event.tour
            case .tourDeleted: content.tours[id] = nil
            case .poiChanged: content.pois[id] = event.poi
            case .poiDeleted: content.pois[id] = nil
            case .snapshotMarker: return false
            }
            return true
        }
    }
}
