import Foundation
import Shared
import Synchronization

/// The admin's own view of the content, fed by `catalog.events` (CatalogEventFeed) and by the results of
/// its own commands (so an editor sees their change at once, before its event arrives). Every entity
/// keeps the highest version seen, so an older event never undoes a newer state, whichever came first.
final class AdminCatalogProjection: Sendable {
    /// Who made the versions this admin's own commands made (a conflict says "by you, in another tab").
    let authors = ChangeAuthors()

    struct Content: Sendable {
        var tours: [UUID: TourState] = [:]
        var pois: [UUID: PoiState] = [:]
        var categories: [UUID: CategoryState] = [:]
        var calendar: [UUID: CalendarEntryState] = [:]
        var people: [UUID: PersonState] = [:]
        var pages: [UUID: PageState] = [:]
        var featured: [UUID: FeaturedState] = [:]

        /// What staff call a record, for reports that know only its id (an import's rows): nil once it is gone.
        func name(of id: UUID) -> String? {
            if let tour = tours[id] { return tour.working.content.name }
            if let poi = pois[id] { return poi.working.name }
            if let category = categories[id] { return category.name }
            if let entry = calendar[id] { return entry.content.title }
            if let person = people[id] { return person.content.name }
            if let page = pages[id] { return page.content.title }
            if let item = featured[id] { return item.content.title ?? "Featured item" }
            return nil
        }
        var media: [UUID: MediaState] = [:]
        /// Version of each entity seen, deleted ones included.
        var versions: [UUID: Int] = [:]

        /// The published library items by their file's hash: what a POI's page shows of the files it names.
        func publishedMedia(_ sha256: String) -> MediaContent? {
            media.values.first { $0.content.sha256 == sha256 && $0.status == .published }?.content
        }

        /// The POIs (their working content) that name a library file, by name: what deleting it would strip.
        func pois(using sha256: String) -> [PoiState] {
            sortedPois.filter { MediaHash.named(in: $0.working).contains(sha256) }
        }

        /// Tours by name (all statuses).
        var sortedTours: [TourState] {
            tours.values.sorted { ($0.content.name.lowercased(), $0.id.uuidString) < ($1.content.name.lowercased(), $1.id.uuidString) }
        }

        /// The media library, newest first.
        var sortedMedia: [MediaState] {
            media.values.sorted { ($0.updatedAt, $0.id.uuidString) > ($1.updatedAt, $1.id.uuidString) }
        }

        var sortedPois: [PoiState] {
            pois.values.sorted { ($0.content.name.lowercased(), $0.id.uuidString) < ($1.content.name.lowercased(), $1.id.uuidString) }
        }

        /// Calendar entries by start, then title.
        var sortedCalendar: [CalendarEntryState] {
            calendar.values.sorted { ($0.content.startsAt, $0.content.title, $0.id.uuidString) < ($1.content.startsAt, $1.content.title, $1.id.uuidString) }
        }

        /// Categories by path, so parents come before their children.
        /// People by name, case-insensitively.
        var sortedPeople: [PersonState] {
            people.values.sorted { ($0.content.name.lowercased(), $0.id.uuidString) < ($1.content.name.lowercased(), $1.id.uuidString) }
        }

        /// Pages in their order, then by title.
        var sortedPages: [PageState] {
            pages.values.sorted { ($0.content.order, $0.content.title, $0.id.uuidString) < ($1.content.order, $1.content.title, $1.id.uuidString) }
        }

        var sortedCategories: [CategoryState] {
            categories.values.sorted { $0.path.lowercased() < $1.path.lowercased() }
        }

        /// A POI phones can see (the feed's rule, DESIGN.md): published as a place, or a stop of a published tour as published.
        func isOnPhones(_ poiId: UUID) -> Bool {
            guard let poi = pois[poiId] else { return false }
            return poi.status == .published || tours.values.contains { $0.status == .published && $0.stops.contains(poiId) }
        }

        /// POIs to choose as a place (an office, an event's place), each marked when phones cannot see it yet: the feed
        /// names only a place it shows.
        var placeOptions: [(value: String, label: String)] {
            sortedPois.map { (value: $0.id.uuidString.lowercased(), label: $0.content.name + (isOnPhones($0.id) ? "" : " (not on phones yet)")) }
        }

        /// The tours that stop at a POI, as published or in their draft.
        func tours(stoppingAt poiId: UUID) -> [TourState] {
            sortedTours.filter { $0.stops.contains(poiId) || $0.draft?.stops.contains(poiId) == true }
        }

        /// A tour's stops that exist, in walking order, as editors see them (the draft's when there is one).
        func stops(of tour: TourState) -> [PoiState] {
            tour.working.stops.compactMap { pois[$0] }
        }
    }

    private let state = Mutex(Content())

    var content: Content { state.withLock { $0 } }

    func tour(_ id: UUID) -> TourState? { state.withLock { $0.tours[id] } }
    func poi(_ id: UUID) -> PoiState? { state.withLock { $0.pois[id] } }
    func category(_ id: UUID) -> CategoryState? { state.withLock { $0.categories[id] } }

    /// Applies each `catalog.events` event that is newer than what is held.
    func apply(_ events: [CatalogEvent]) {
        for event in events { apply(event) }
    }

    /// Applies a `catalog.events` event if it is newer than what is held.
    @discardableResult
    func apply(_ event: CatalogEvent) -> Bool {
        guard let id = event.entityId, let version = event.version else { return false }
        return update(id, version) { content in
            switch event.kind {
            case .tourChanged: content.tours[id] = event.tour
            case .tourDeleted: content.tours[id] = nil
            case .poiChanged: content.pois[id] = event.poi
            case .poiDeleted: content.pois[id] = nil
            case .snapshotMarker, .snapshotChunk: break
            }
        }
    }

    @discardableResult
    func apply(_ event: CategoryEvent) -> Bool {
        update(event.entityId, event.version) { content in
            switch event.kind {
            case .changed: content.categories[event.entityId] = event.category
            case .deleted: content.categories[event.entityId] = nil
            }
        }
    }

    /// A record's event (a calendar entry, a person), into the dictionary of its kind.
    @discardableResult
    func apply<Record: AdminHeldRecord>(_ event: CatalogRecordEvent<Record>) -> Bool {
        update(event.entityId, event.version) { content in
            switch event.kind {
            case .changed: content[keyPath: Record.held][event.entityId] = event.record
            case .deleted: content[keyPath: Record.held][event.entityId] = nil
            }
        }
    }

    /// Applies what an applied command's result says (read-your-writes); its events, arriving later, then change nothing.
    func apply(_ result: CatalogCommandResult) {
        guard result.outcome == .applied else { return }
        if let tour = result.tour { _ = update(tour.id, tour.version) { $0.tours[tour.id] = tour } }
        if let poi = result.poi { _ = update(poi.id, poi.version) { $0.pois[poi.id] = poi } }
        for poi in result.pois ?? [] { _ = update(poi.id, poi.version) { $0.pois[poi.id] = poi } }
        if let category = result.category { _ = update(category.id, category.version) { $0.categories[category.id] = category } }
        var carriesRecord = false
        for kind in AdminHeldRecords.all where apply(result, as: kind) { carriesRecord = true }
        if result.tour == nil, result.poi == nil, result.category == nil, !carriesRecord, let id = result.entityId, let version = result.version {
            // A delete: the result carries only the id and the tombstone's version.
            switch result.action {
            case .deleteTour: _ = update(id, version) { $0.tours[id] = nil }
            case .deletePoi:
                _ = update(id, version) { content in
                    content.pois[id] = nil
                    // Catalog took the POI out of its tours too; their events follow with the new versions.
                    for (tourId, var tour) in content.tours where tour.stops.contains(id) || tour.draft?.stops.contains(id) == true {
                        tour.stops.removeAll { $0 == id }
                        tour.draft?.stops.removeAll { $0 == id }
                        content.tours[tourId] = tour
                    }
                }
            case .deleteCategory: _ = update(id, version) { $0.categories[id] = nil }
            default:
                guard let (kind, verb) = result.action.recordCommand, verb == .delete, let held = kind as? any AdminHeldRecord.Type else { break }
                remove(id, version, as: held)
            }
        }
    }

    /// Whether the result carries a record of this kind; applies it if so.
    private func apply<Record: AdminHeldRecord>(_ result: CatalogCommandResult, as _: Record.Type) -> Bool {
        guard let record = result[keyPath: Record.resultState] else { return false }
        _ = update(record.id, record.version) { $0[keyPath: Record.held][record.id] = record }
        return true
    }

    private func remove<Record: AdminHeldRecord>(_ id: UUID, _ version: Int, as _: Record.Type) {
        _ = update(id, version) { $0[keyPath: Record.held][id] = nil }
    }

    private func update(_ id: UUID, _ version: Int, _ change: (inout Content) -> Void) -> Bool {
        state.withLock { content in
            if let seen = content.versions[id], seen >= version { return false }
            content.versions[id] = version
            change(&content)
            return true
        }
    }
}

extension AdminCatalogProjection: CatalogRecordConsumer {
    func handle<Record: CatalogRecordContent>(_ envelope: Envelope<CatalogRecordEvent<Record>>) async throws {
        guard let held = Record.self as? any AdminHeldRecord.Type else { return }
        applyRecordEvent(envelope.data, as: held)
    }

    /// `Held` is the event's own content type, opened from the existential: the cast cannot fail.
    private func applyRecordEvent<Held: AdminHeldRecord>(_ event: some Any, as _: Held.Type) {
        guard let event = event as? CatalogRecordEvent<Held> else { return assertionFailure("not a \(Held.recordKind) event") }
        apply(event)
    }
}

// MARK: record kinds (CatalogRecordKinds)

/// Where the admin's projection keeps one kind of catalog record, for each kind in `AdminHeldRecords.all`.
protocol AdminHeldRecord: CatalogRecordContent {
    static var held: WritableKeyPath<AdminCatalogProjection.Content, [UUID: CatalogRecordState<Self>]> { get }
}

extension CalendarEntryContent: AdminHeldRecord {
    static var held: WritableKeyPath<AdminCatalogProjection.Content, [UUID: CalendarEntryState]> { \.calendar }
}

extension PersonContent: AdminHeldRecord {
    static var held: WritableKeyPath<AdminCatalogProjection.Content, [UUID: PersonState]> { \.people }
}

extension PageContent: AdminHeldRecord {
    static var held: WritableKeyPath<AdminCatalogProjection.Content, [UUID: PageState]> { \.pages }
}

extension FeaturedContent: AdminHeldRecord {
    static var held: WritableKeyPath<AdminCatalogProjection.Content, [UUID: FeaturedState]> { \.featured }
}

extension MediaContent: AdminHeldRecord {
    static var held: WritableKeyPath<AdminCatalogProjection.Content, [UUID: MediaState]> { \.media }
}

/// The kinds of `CatalogRecordKinds.all` the admin holds: all of them (`missing` is empty; a test checks).
enum AdminHeldRecords {
    static let all: [any AdminHeldRecord.Type] = CatalogRecordKinds.all.compactMap { $0 as? any AdminHeldRecord.Type }

    static var missing: [String] {
        CatalogRecordKinds.all.filter { !($0 is any AdminHeldRecord.Type) }.map { $0.recordKind }
    }
}
