import Dispatch
import Foundation
import Metrics
import Shared
import Synchronization

/// The feed's in-memory view of published content, fed by `catalog.events`.
///
/// `apply` takes each event in (newest version per entity wins, deletes stick) and notes which
/// entities it touched; `publish` re-renders just those and whatever shows them (a POI's tours, a
/// tour's stops, the lists), updates the indexes, and swaps in a new immutable `FeedSnapshot`.
/// Readers only ever take the current snapshot.
///
/// Visibility: a tour is visible when published; a POI when at least one published tour stops there
/// (POIs have no status of their own, and a POI only on draft tours is not yet meant for visitors).
final class CatalogProjection: Sendable {
    private let state = Mutex(State())
    private let published: Mutex<FeedSnapshot>
    private let changes: AsyncStream<Void>.Continuation
    /// Wakes the publisher after `apply` changed something.
    let changeSignals: AsyncStream<Void>

    private let tourGauge = Gauge(label: "itour_feed_projection_entities", dimensions: [("kind", "tours")], help: CatalogProjection.entitiesHelp)
    private let poiGauge = Gauge(label: "itour_feed_projection_entities", dimensions: [("kind", "pois")], help: CatalogProjection.entitiesHelp)
    private static let entitiesHelp = "Tours and POIs the feed serves, by kind."
    private let bytesGauge = Gauge(label: "itour_feed_projection_rendered_bytes", help: "Bytes of the feed's stored responses, as last published.")
    private let publishGauge = Gauge(label: "itour_feed_projection_last_publish_seconds", help: "Time the last publish of the feed's projection took.")

    init() {
        (changeSignals, changes) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        published = Mutex(State().makeSnapshot())
    }

    /// The content readers see.
    var snapshot: FeedSnapshot { published.withLock { $0 } }

    /// Whether changes are waiting for `publish`.
    var hasPendingChanges: Bool { state.withLock { !$0.dirtyTours.isEmpty || !$0.dirtyPois.isEmpty } }

    /// Takes an event in if it is newer than what is held; returns whether it changed anything.
    /// Visible after the next `publish`.
    @discardableResult
    func apply(_ event: CatalogEvent) -> Bool {
        let changed = state.withLock { $0.apply(event) }
        if changed { changes.yield() }
        return changed
    }

    /// Renders what changed since the last call and makes it visible; returns the new snapshot.
    @discardableResult
    func publish() -> FeedSnapshot {
        let started = ContinuousClock.now
        let (snapshot, renderedBytes, changed) = state.withLock { state -> (FeedSnapshot, Int, Bool) in
            guard state.hasChanges else { return (self.snapshot, state.renderedBytes, false) }
            state.rebuildChanged()
            return (state.makeSnapshot(), state.renderedBytes, true)
        }
        guard changed else { return snapshot }
        published.withLock { $0 = snapshot }
        tourGauge.record(snapshot.tours.count)
        poiGauge.record(snapshot.pois.count)
        bytesGauge.record(renderedBytes)
        let elapsed = ContinuousClock.now - started
        publishGauge.record(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        return snapshot
    }
}

/// The projection's writable state: every live entity (any status), what changed since the last
/// publication, and the rendered resources and indexes it keeps up to date incrementally.
private struct State {
    var tours: [UUID: TourState] = [:]
    var pois: [UUID: PoiState] = [:]
    /// Version of each entity seen, including deleted ones, so an older event never undoes a newer one.
    var versions: [UUID: Int] = [:]
    /// Tours (any status) stopping at each POI, known or not yet.
    var toursByPoi: [UUID: Set<UUID>] = [:]

    var dirtyTours: Set<UUID> = []
    var dirtyPois: Set<UUID> = []
    var isFirstPublication = true

    var tourResources: [UUID: TourResources] = [:]
    var poiResources: [UUID: PoiResources] = [:]
    var poiSlots = SlotTable<PoiListing>()
    var tourSlots = SlotTable<TourListing>()
    var spatialIndex = SpatialIndex()
    var poiTextIndex = TextIndex()
    var tourTextIndex = TextIndex()
    var tourList: RenderedResource = Self.render(ContentJSON.tourList([]), MediaTypes.json)
    var legacyTourList: RenderedResource = Self.render(LegacyXML.tours([]), MediaTypes.xml)
    var legacyTourIds: [String: UUID] = [:]
    var renderedBytes = 0
    var generation = 0

    var hasChanges: Bool { isFirstPublication || !dirtyTours.isEmpty || !dirtyPois.isEmpty }

    // MARK: applying events

    mutating func apply(_ event: CatalogEvent) -> Bool {
        guard let id = event.entityId, let version = event.version else { return false }
        if let seen = versions[id], seen >= version { return false }
        switch event.kind {
        case .tourChanged:
            guard var tour = event.tour else { return false }
            tour.id = id
            replaceTour(id, with: tour)
        case .tourDeleted:
            replaceTour(id, with: nil)
        case .poiChanged:
            guard var poi = event.poi else { return false }
            poi.id = id
            pois[id] = poi
            markPoiChanged(id)
        case .poiDeleted:
            pois[id] = nil
            markPoiChanged(id)
        case .snapshotMarker:
            return false
        }
        versions[id] = version
        return true
    }

    private mutating func replaceTour(_ id: UUID, with tour: TourState?) {
        let oldStops = tours[id]?.stops ?? []
        for stop in oldStops {
            toursByPoi[stop]?.remove(id)
            if toursByPoi[stop]?.isEmpty == true { toursByPoi[stop] = nil }
        }
        for stop in tour?.stops ?? [] { toursByPoi[stop, default: []].insert(id) }
        tours[id] = tour
        dirtyTours.insert(id)
        // The stops' tourIds, visibility and pages name this tour.
        dirtyPois.formUnion(oldStops)
        dirtyPois.formUnion(tour?.stops ?? [])
    }

    private mutating func markPoiChanged(_ id: UUID) {
        dirtyPois.insert(id)
        // Tours show their stops' names, places and categories.
        dirtyTours.formUnion(toursByPoi[id] ?? [])
    }

    // MARK: rebuilding

    mutating func rebuildChanged() {
        let changedTours = dirtyTours, changedPois = dirtyPois
        dirtyTours = []
        dirtyPois = []
        rebuildPois(changedPois)
        rebuildTours(changedTours)
        if !changedTours.isEmpty || isFirstPublication { rebuildTourLists() }
        poiTextIndex.seal()
        tourTextIndex.seal()
        isFirstPublication = false
        generation += 1
    }

    /// Published tours stopping at the POI, in list order.
    func publishedTours(at poiId: UUID) -> [TourState] {
        (toursByPoi[poiId] ?? []).compactMap { tours[$0] }.filter { $0.status == .published }.sorted(by: Self.listOrder)
    }

    static func listOrder(_ a: TourState, _ b: TourState) -> Bool {
        (a.content.name, a.id.uuidString) < (b.content.name, b.id.uuidString)
    }

    private mutating func rebuildPois(_ ids: Set<UUID>) {
        struct Work: Sendable {
            let poi: PoiState
            let tours: [TourState]
        }
        var work: [Work] = []
        for id in ids {
            let tours = pois[id] == nil ? [] : publishedTours(at: id)
            if let poi = pois[id], !tours.isEmpty {
                work.append(Work(poi: poi, tours: tours))
            } else {
                removePoi(id)
            }
        }
        let rendered = Rendering.inParallel(work) { item, compressor in
            let detail = RenderedResource(bytes: ContentJSON.poiDetail(item.poi, tourIds: item.tours.map(\.id)),
                                          contentType: MediaTypes.json, cacheControl: CachePolicy.content, compressor: compressor)
            let listing = PoiListing(id: item.poi.id, foldedCategory: TextFolding.fold(item.poi.content.category ?? ""),
                                     members: ContentJSON.poiListingMembers(item.poi))
            return (PoiResources(detail: detail, poi: item.poi, tourNames: item.tours.map(\.content.name)), listing)
        }
        for (item, (resources, listing)) in zip(work, rendered) {
            let poi = item.poi
            renderedBytes += resources.detail.byteCount - (poiResources[poi.id]?.detail.byteCount ?? 0)
            poiResources[poi.id] = resources
            let slot = poiSlots.store(listing, for: poi.id)
            spatialIndex.insert(slot: slot, at: Coordinate(latitude: poi.content.latitude, longitude: poi.content.longitude))
            poiTextIndex.insert(slot: slot, id: poi.id, name: poi.content.name, fields: [poi.content.summary] + poi.content.buildings)
        }
    }

    private mutating func removePoi(_ id: UUID) {
        if let old = poiResources.removeValue(forKey: id) { renderedBytes -= old.detail.byteCount }
        if let slot = poiSlots.remove(id) {
            spatialIndex.remove(slot: slot)
            poiTextIndex.remove(slot: slot)
        }
    }

    private mutating func rebuildTours(_ ids: Set<UUID>) {
        struct Work: Sendable {
            let tour: TourState
            let stops: [PoiState]
        }
        var work: [Work] = []
        for id in ids {
            if let tour = tours[id], tour.status == .published {
                // A stop whose POI has not arrived yet (another partition) is left out until it does.
                work.append(Work(tour: tour, stops: tour.stops.compactMap { pois[$0] }))
            } else {
                if let old = tourResources.removeValue(forKey: id) { renderedBytes -= old.detail.byteCount + old.legacyPois.byteCount }
                if let slot = tourSlots.remove(id) { tourTextIndex.remove(slot: slot) }
            }
        }
        let rendered = Rendering.inParallel(work) { item, compressor in
            let detail = RenderedResource(bytes: ContentJSON.tourDetail(item.tour, stops: item.stops),
                                          contentType: MediaTypes.json, cacheControl: CachePolicy.content, compressor: compressor)
            let legacy = RenderedResource(bytes: LegacyXML.pois(of: item.tour, stops: item.stops),
                                          contentType: MediaTypes.xml, cacheControl: CachePolicy.content, compressor: compressor)
            let listing = TourListing(id: item.tour.id, summary: ContentJSON.tourSummary(item.tour, stopCount: item.stops.count))
            return (TourResources(detail: detail, legacyPois: legacy), listing)
        }
        for (item, (resources, listing)) in zip(work, rendered) {
            let tour = item.tour
            let old = tourResources[tour.id]
            renderedBytes += resources.detail.byteCount + resources.legacyPois.byteCount
                - (old.map { $0.detail.byteCount + $0.legacyPois.byteCount } ?? 0)
            tourResources[tour.id] = resources
            let slot = tourSlots.store(listing, for: tour.id)
            tourTextIndex.insert(slot: slot, id: tour.id, name: tour.content.name, fields: [tour.content.summary])
        }
    }

    /// `GET /v1/tours` and `tours.xml`: every published tour, by name. In `tours.xml` a tour goes by its
    /// legacy number unless an earlier tour in the list already has that number.
    private mutating func rebuildTourLists() {
        let listed = tourResources.keys.compactMap { tours[$0] }.sorted(by: Self.listOrder)
        let summaries = listed.compactMap { tourSlots.value(for: $0.id)?.summary }
        var legacyIds: [String: UUID] = [:]
        var legacyEntries: [(legacyId: String, tour: TourState)] = []
        for tour in listed {
            var id = LegacyXML.tourId(tour)
            if legacyIds[id] != nil { id = tour.id.uuidString }
            legacyIds[id] = tour.id
            legacyEntries.append((id, tour))
        }
        renderedBytes -= tourList.byteCount + legacyTourList.byteCount
        tourList = Self.render(ContentJSON.tourList(summaries), MediaTypes.json)
        legacyTourList = Self.render(LegacyXML.tours(legacyEntries), MediaTypes.xml)
        renderedBytes += tourList.byteCount + legacyTourList.byteCount
        legacyTourIds = legacyIds
    }

    static func render(_ bytes: [UInt8], _ contentType: String) -> RenderedResource {
        RenderedResource(bytes: bytes, contentType: contentType, cacheControl: CachePolicy.content, compressor: GzipCompressor())
    }

    func makeSnapshot() -> FeedSnapshot {
        FeedSnapshot(tourList: tourList, legacyTourList: legacyTourList, tours: tourResources, pois: poiResources,
                     legacyTourIds: legacyTourIds, poiListings: poiSlots.values, tourListings: tourSlots.values,
                     spatialIndex: spatialIndex, poiTextIndex: poiTextIndex, tourTextIndex: tourTextIndex, generation: generation)
    }
}

/// Index slots for entities: small integers the indexes store instead of UUIDs, reused after removal.
struct SlotTable<Value: Sendable>: Sendable {
    private(set) var values: [Value?] = []
    private var slots: [UUID: Int32] = [:]
    private var free: [Int32] = []

    /// Stores the value under the entity's slot (a new one if it has none); returns the slot.
    mutating func store(_ value: Value, for id: UUID) -> Int32 {
        if let slot = slots[id] {
            values[Int(slot)] = value
            return slot
        }
        let slot: Int32
        if let reused = free.popLast() {
            slot = reused
            values[Int(slot)] = value
        } else {
            slot = Int32(values.count)
            values.append(value)
        }
        slots[id] = slot
        return slot
    }

    mutating func remove(_ id: UUID) -> Int32? {
        guard let slot = slots.removeValue(forKey: id) else { return nil }
        values[Int(slot)] = nil
        free.append(slot)
        return slot
    }

    func value(for id: UUID) -> Value? {
        slots[id].flatMap { values[Int($0)] }
    }
}

/// Renders many items on all cores when there are enough of them to be worth it (a snapshot load
/// renders the whole catalog at once), each worker with its own gzip stream.
enum Rendering {
    static func inParallel<Item: Sendable, Output: Sendable>(_ items: [Item],
                                                             _ render: @Sendable (Item, GzipCompressor) -> Output) -> [Output] {
        guard items.count >= 256 else {
            let compressor = GzipCompressor()
            return items.map { render($0, compressor) }
        }
        let chunkCount = min(items.count / 64, ProcessInfo.processInfo.activeProcessorCount * 4)
        let results = UnsafeMutableBufferPointer<Output?>.allocate(capacity: items.count)
        results.initialize(repeating: nil)
        defer {
            _ = results.deinitialize()
            results.deallocate()
        }
        nonisolated(unsafe) let shared = results
        DispatchQueue.concurrentPerform(iterations: chunkCount) { chunk in
            let compressor = GzipCompressor()
            // Each chunk writes only its own indices of `shared`.
            for index in stride(from: chunk, to: items.count, by: chunkCount) {
                shared[index] = render(items[index], compressor)
            }
        }
        // Every index was written above.
        return results.map { $0! }
    }
}
