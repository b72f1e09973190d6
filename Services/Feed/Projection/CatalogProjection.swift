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
/// Two locks: `entities` (what `apply` changes) is held by `publish` only while it takes what changed;
/// `rendered` is held by `publish` while it renders, which may take seconds, so `apply` never waits
/// for a render. Publications run one at a time under `rendered` and take their changes inside it,
/// so each renders a later state than the one before and snapshots are published in order.
///
/// Visibility: a tour is visible when published; a POI when published itself or when at least one published tour
/// stops there (DESIGN.md, "Places on their own").
final class CatalogProjection: Sendable {
    private let entities = Mutex(EntityState())
    private let rendered: Mutex<RenderedState>
    private let published: Mutex<FeedSnapshot>
    private let changes: AsyncStream<Void>.Continuation
    /// Wakes the publisher after `apply` changed something.
    let changeSignals: AsyncStream<Void>
    /// Called by `publish` after it took the changes, before it renders them; only tests set it.
    private let beforeRendering: (@Sendable () -> Void)?

    private let tourGauge = Gauge(label: "itour_feed_projection_entities", dimensions: [("kind", "tours")], help: CatalogProjection.entitiesHelp)
    private let poiGauge = Gauge(label: "itour_feed_projection_entities", dimensions: [("kind", "pois")], help: CatalogProjection.entitiesHelp)
    private static let entitiesHelp = "Tours and POIs the feed serves, by kind."
    private let bytesGauge = Gauge(label: "itour_feed_projection_rendered_bytes", help: "Bytes of the tour lists the feed rendered when it last published (a tour's and a POI's responses are rendered on their first request).")
    private let publishGauge = Gauge(label: "itour_feed_projection_last_publish_seconds", help: "Time the last publish of the feed's projection took.")

    /// `feedPublicURL` is where phones reach the feed: the address media entries give. `languages`: those it answers in.
    init(feedPublicURL: String = FeedSite.defaultPublicURL, languages: SiteLanguages = .english, beforeRendering: (@Sendable () -> Void)? = nil) {
        entities.withLock { $0.feedPublicURL = feedPublicURL }
        rendered = Mutex(RenderedState(languages: languages))
        (changeSignals, changes) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        published = Mutex(RenderedState(languages: languages).makeSnapshot())
        self.beforeRendering = beforeRendering
    }

    /// The content readers see.
    var snapshot: FeedSnapshot { published.withLock { $0 } }

    /// Whether changes are waiting for a `publish` to take them.
    var hasPendingChanges: Bool {
        entities.withLock { !$0.dirtyTours.isEmpty || !$0.dirtyPois.isEmpty || $0.recordsChanged }
    }

    /// Takes each event in that is newer than what is held; returns whether any changed anything.
    /// Visible after the next `publish`. A snapshot chunk's entities come in one call, under one lock.
    @discardableResult
    func apply(_ events: [CatalogEvent]) -> Bool {
        let changed = entities.withLock { entities in
            var changed = false
            for event in events where entities.apply(event) { changed = true }
            return changed
        }
        if changed { changes.yield() }
        return changed
    }

    @discardableResult
    func apply(_ event: CatalogEvent) -> Bool { apply([event]) }

    /// Nil when every tour, POI, calendar entry, page and person `event` names is one catalog has, in any status (a
    /// phone may report on a tour unpublished since it downloaded it); else the reason to reject the event
    /// (DESIGN.md "Tracking events"): made-up ids would mint report rows for things that never existed.
    func unknownReference(in event: TrackingEvent) -> String? {
        guard event.tourId != nil || event.poiId != nil || event.eventId != nil || event.pageId != nil || event.personId != nil else { return nil }
        return entities.withLock { entities in
            if let id = event.tourId, entities.tours[id] == nil { return "tourId names no tour of this site" }
            if let id = event.poiId, entities.pois[id] == nil { return "poiId names no place of this site" }
            if let id = event.eventId, entities.calendar.byId[id] == nil { return "eventId names no calendar event of this site" }
            if let id = event.pageId, entities.pages.byId[id] == nil { return "pageId names no page of this site" }
            if let id = event.personId, entities.people.byId[id] == nil { return "personId names no person of this site" }
            return nil
        }
    }

    /// Takes a category event in (the tree `GET /v1/categories` shows) if it is newer than what is held.
    @discardableResult
    func apply(_ event: CategoryEvent) -> Bool {
        let changed = entities.withLock { $0.apply(event) }
        if changed { changes.yield() }
        return changed
    }

    /// Takes a record's event in (a calendar entry, a person: DESIGN.md, "Catalog records") if it is newer than what is held.
    @discardableResult
    func apply<Content: CatalogRecordContent>(_ event: CatalogRecordEvent<Content>) -> Bool {
        let changed = entities.withLock { $0.apply(event) }
        if changed { changes.yield() }
        return changed
    }

    /// A catalog snapshot has arrived whole (CatalogEventFeed): after the first, one asked for because the broker may
    /// have lost events, so the next publication starts the changes' log again (DESIGN.md, "Offline tours and changes").
    func snapshotLoaded() {
        entities.withLock { $0.changeNotes.askNewHorizon() }
        changes.yield()
    }

    /// Renders what changed so far without making it visible: while a snapshot streams in, so that little
    /// is left to render when it is complete. No snapshot is made, so nothing shares (and copies) the state.
    func renderAhead() {
        rendered.withLock { rendered in
            guard let work = entities.withLock({ $0.takeChanges(isPublication: false) }) else { return }
            rendered.render(work, isPublication: false)
        }
    }

    /// Renders what changed since the last call and makes it visible; returns the new snapshot.
    @discardableResult
    func publish() -> FeedSnapshot {
        rendered.withLock { rendered in
            let started = ContinuousClock.now
            // The changes' log is resolved against the state this publication renders, so it agrees with the snapshot.
            let (work, loggedChanges) = entities.withLock { entities in
                let loggedChanges = entities.takeLoggedChanges()
                return (entities.takeChanges(isPublication: true), loggedChanges)
            }
            guard work != nil || loggedChanges != nil else { return self.snapshot }
            if let work {
                beforeRendering?()
                rendered.render(work, isPublication: true)
            }
            if let loggedChanges { rendered.changeLog.take(loggedChanges) }
            let snapshot = rendered.makeSnapshot()
            published.withLock { $0 = snapshot }
            tourGauge.record(snapshot.tours.count)
            poiGauge.record(snapshot.pois.count)
            bytesGauge.record(rendered.renderedBytes)
            let elapsed = ContinuousClock.now - started
            publishGauge.record(elapsed.seconds)
            return snapshot
        }
    }
}

/// What one publication renders, taken from the entities in one step: each changed POI and tour with
/// what its responses show, or nil where it is no longer visible.
private struct RenderWork: Sendable {
    struct Poi: Sendable {
        let poi: PoiRecord
        /// Published tours stopping there, in list order: all a POI's responses show of them.
        let tours: [TourRef]
        /// The published library files it names.
        let media: PoiMedia?
    }

    typealias TourRef = TourName

    struct Tour: Sendable {
        let tour: TourState
        /// Its stops' POIs that have arrived, in walking order.
        let stops: [PoiRecord]
    }

    var pois: [UUID: Poi?] = [:]
    var tours: [UUID: Tour?] = [:]
    /// The whole category tree, when it changed.
    var categories: [CategoryState]?
    /// Every published calendar entry, when any entry changed.
    var calendar: [CalendarEntryState]?
    /// Every published person, when anyone changed.
    var people: [PersonState]?
    /// Every published page, when any page changed.
    var pages: [PageState]?
    /// Every published featured item, when any changed.
    var featured: [FeaturedState]?
    /// Every published media item, when any changed.
    var media: [MediaState]?
    var isFirstPublication = false
}

/// Every live entity (any status) and what changed since the last publication; `apply` changes it.
private struct EntityState {
    var tours: [UUID: TourState] = [:]
    var pois: [UUID: PoiRecord] = [:]
    /// Version of each entity seen, including deleted ones, so an older event never undoes a newer one; a POI
    /// held has its version on its record instead (`seenPoiVersion(of:)`): a city's POIs are most of the entities, and a
    /// dictionary of them costs megabytes.
    var versions: [UUID: Int] = [:]
    /// Tours (any status) stopping at each POI, known or not yet. Arrays, not sets: a POI is on one tour or a
    /// few, and a set's storage costs a city three times an array's.
    var toursByPoi: [UUID: [UUID]] = [:]
    /// The published tours' ids and names: what a POI's responses show of its tours, looked up for every POI rendered
    /// without copying whole tour states.
    var publishedTourRefs: [UUID: RenderWork.TourRef] = [:]

    var dirtyTours: Set<UUID> = []
    var dirtyPois: Set<UUID> = []
    var categories = ChangedRecords<CategoryState>()
    var calendar = ChangedRecords<CalendarEntryState>()
    var people = ChangedRecords<PersonState>()
    var pages = ChangedRecords<PageState>()
    var featured = ChangedRecords<FeaturedState>()
    var media = ChangedRecords<MediaState>()
    /// Media items by their file's hash, and the POIs naming each hash: an item's change re-renders them.
    var mediaByHash: [String: UUID] = [:]
    var poisByMedia: [String: [UUID]] = [:]
    /// The texts and lists POIs share, held once.
    var sharedTexts = SharedTexts()
    var feedPublicURL = FeedSite.defaultPublicURL
    var isFirstPublication = true
    /// Changes since the last publication, for `GET /v1/changes` (ChangeLog.swift).
    var changeNotes = ChangeLog.Pending()

    // MARK: applying events

    /// The version seen of a POI: on its record while it is held, else in `versions`.
    func seenPoiVersion(of id: UUID) -> Int? { pois[id]?.version ?? versions[id] }

    mutating func apply(_ event: CatalogEvent) -> Bool {
        guard let id = event.entityId, let version = event.version else { return false }
        let isPoi = event.kind == .poiChanged || event.kind == .poiDeleted
        if let seen = isPoi ? seenPoiVersion(of: id) : versions[id], seen >= version { return false }
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
            poi.version = version
            indexMedia(of: id, from: pois[id]?.content, to: poi.content)
            pois[id] = PoiRecord(poi, sharing: &sharedTexts)
            versions[id] = nil
            markPoiChanged(id)
            return true
        case .poiDeleted:
            indexMedia(of: id, from: pois[id]?.content, to: nil)
            pois[id] = nil
            markPoiChanged(id)
        case .snapshotMarker, .snapshotChunk:
            return false
        }
        versions[id] = version
        return true
    }

    mutating func apply(_ event: CategoryEvent) -> Bool { apply(event, to: \.categories, noting: nil) }

    var recordsChanged: Bool {
        categories.changed || FeedRecordKinds.all.contains { kind in hasChanged(kind) }
    }

    private func hasChanged<Kind: FeedRecord>(_: Kind.Type) -> Bool { self[keyPath: Kind.held].changed }

    /// A kind without a place on the feed (FeedRecordKinds.missing) is not held.
    mutating func apply<Content: CatalogRecordContent>(_ event: CatalogRecordEvent<Content>) -> Bool {
        guard let kind = Content.self as? any FeedRecord.Type else { return false }
        return applyRecordEvent(event, as: kind)
    }

    /// `Kind` is the event's own content type, opened from the existential: the cast cannot fail.
    private mutating func applyRecordEvent<Kind: FeedRecord>(_ event: some Any, as _: Kind.Type) -> Bool {
        guard let event = event as? CatalogRecordEvent<Kind> else {
            assertionFailure("not a \(Kind.recordKind) event")
            return false
        }
        let before = self[keyPath: Kind.held].byId[event.entityId]
        guard apply(event, to: Kind.held, noting: Kind.changeKind) else { return false }
        let after = self[keyPath: Kind.held].byId[event.entityId]
        Kind.applied(before: before, after: after, id: event.entityId, to: &self)
        return true
    }

    /// A media item's change re-renders the POIs showing it: they show its alt text, captions and transcript.
    fileprivate mutating func mediaApplied(before: MediaState?, after: MediaState?, id: UUID) {
        let before = before?.content.sha256, after = after?.content.sha256
        if let before, before != after { mediaByHash[before] = nil }
        if let after { mediaByHash[after] = id }
        for hash in Set([before, after].compactMap { $0 }) {
            for poi in poisByMedia[hash] ?? [] {
                dirtyPois.insert(poi)
                // A phone holding the POI holds its media's alt text, captions and transcript too.
                changeNotes.note(.poi, poi)
            }
        }
    }

    /// Keeps `poisByMedia` up to date with the library files a POI names.
    private mutating func indexMedia(of id: UUID, from old: PoiContent?, to new: PoiContent?) {
        let before = old.map(MediaHash.named(in:)) ?? [], after = new.map(MediaHash.named(in:)) ?? []
        guard before != after else { return }
        for hash in before where !after.contains(hash) {
            poisByMedia[hash]?.removeAll { $0 == id }
            if poisByMedia[hash]?.isEmpty == true { poisByMedia[hash] = nil }
        }
        for hash in after where !before.contains(hash) { poisByMedia[hash, default: []].append(id) }
    }

    /// The published library files a POI names.
    func media(of content: PoiContent) -> PoiMedia? {
        guard !poisByMedia.isEmpty else { return nil }
        return PoiMedia.of(content, feedPublicURL: feedPublicURL) { hash in
            mediaByHash[hash].flatMap { media.byId[$0] }.flatMap { $0.status == .published ? $0.content : nil }
        }
    }

    /// A record kept whole replaced or removed, unless this version was seen.
    private mutating func apply<Event: WholeRecordEvent>(_ event: Event, to records: WritableKeyPath<Self, ChangedRecords<Event.Record>>,
                                                         noting changeKind: ChangeLog.Kind?) -> Bool {
        if let seen = versions[event.entityId], seen >= event.version { return false }
        if event.isDeletion {
            self[keyPath: records].byId[event.entityId] = nil
        } else {
            guard let record = event.record else { return false }
            self[keyPath: records].byId[event.entityId] = record
        }
        versions[event.entityId] = event.version
        self[keyPath: records].changed = true
        if let changeKind { changeNotes.note(changeKind, event.entityId) }
        return true
    }

    private mutating func replaceTour(_ id: UUID, with tour: TourState?) {
        let oldStops = tours[id]?.stops ?? []
        for stop in oldStops {
            toursByPoi[stop]?.removeAll { $0 == id }
            if toursByPoi[stop]?.isEmpty == true { toursByPoi[stop] = nil }
        }
        for stop in tour?.stops ?? [] where toursByPoi[stop]?.contains(id) != true { toursByPoi[stop, default: []].append(id) }
        tours[id] = tour
        publishedTourRefs[id] = tour.flatMap { $0.status == .published ? RenderWork.TourRef(id: id, content: $0.content) : nil }
        dirtyTours.insert(id)
        // The stops' tourIds, visibility and pages name this tour. A stop not held is not shown (a POI that was shown and
        // is gone is already marked by its deletion), and is marked when it arrives.
        for stop in oldStops where pois[stop] != nil { dirtyPois.insert(stop) }
        for stop in tour?.stops ?? [] where pois[stop] != nil { dirtyPois.insert(stop) }
        noteChanged(tour: id, stops: oldStops, tour?.stops ?? [])
    }

    private mutating func markPoiChanged(_ id: UUID) {
        dirtyPois.insert(id)
        changeNotes.note(.poi, id)
        // Tours show their stops' names, places and categories.
        dirtyTours.formUnion(toursByPoi[id] ?? [])
    }

    // MARK: taking changes

    /// What changed since the last call, with the state each change renders; nil when nothing did.
    /// Lookups only: the rendering happens after the lock is released.
    /// Rendering ahead takes POIs only. Each listing of records (the calendar, people, ...) is built whole, so a snapshot's
    /// records arriving over several batches would build each listing again per batch; and a snapshot's tours come before
    /// its POIs, each batch of which changes what nearly every tour shows of its stops. Those are taken at publication, once.
    mutating func takeChanges(isPublication: Bool) -> RenderWork? {
        guard (isPublication && (isFirstPublication || recordsChanged || !dirtyTours.isEmpty)) || !dirtyPois.isEmpty else {
            return nil
        }
        var work = RenderWork(isFirstPublication: isPublication && isFirstPublication)
        if isPublication { takeRecordChanges(into: &work) }
        work.pois.reserveCapacity(dirtyPois.count)
        for id in dirtyPois {
            let poi = pois[id]
            let tours = poi == nil ? [] : publishedTours(at: id)
            // On the feed when published itself or through a published tour (DESIGN.md, "Places on their own").
            if let poi, !tours.isEmpty || poi.status == .published {
                work.pois[id] = .some(RenderWork.Poi(poi: poi, tours: tours, media: media(of: poi.content)))
            } else {
                work.pois[id] = .some(nil)
            }
        }
        if isPublication { takeTourChanges(into: &work) }
        dirtyPois = []
        if isPublication { isFirstPublication = false }
        return work
    }

    private mutating func takeTourChanges(into work: inout RenderWork) {
        work.tours.reserveCapacity(dirtyTours.count)
        for id in dirtyTours {
            if let tour = tours[id], tour.status == .published {
                // A stop whose POI has not arrived yet (another partition) is left out until it does.
                work.tours[id] = .some(RenderWork.Tour(tour: tour, stops: tour.stops.compactMap { pois[$0] }))
            } else {
                work.tours[id] = .some(nil)
            }
        }
        dirtyTours = []
    }

    private mutating func takeRecordChanges(into work: inout RenderWork) {
        work.categories = categories.takeChanged()
        for kind in FeedRecordKinds.all { takeChanges(of: kind, into: &work) }
    }

    private mutating func takeChanges<Kind: FeedRecord>(of _: Kind.Type, into work: inout RenderWork) {
        work[keyPath: Kind.published] = self[keyPath: Kind.held].takeChanged { $0.status == .published }
    }

    /// Published tours stopping at the POI, in list order.
    func publishedTours(at poiId: UUID) -> [RenderWork.TourRef] {
        guard let ids = toursByPoi[poiId] else { return [] }
        let found = ids.compactMap { publishedTourRefs[$0] }
        return found.count < 2 ? found : found.sorted { ($0.name, $0.id) < ($1.name, $1.id) }
    }
}

/// The rendered resources and indexes, kept up to date incrementally; `publish` changes it.
private struct RenderedState {
    let languages: SiteLanguages
    /// The languages of POIs that have no translation (most): one array for them all.
    let siteLanguageOnly: [String]
    /// Each distinct list of languages entities have text in, held once.
    private var languageLists: [[String]: [String]] = [:]
    /// The published tours as rendered, for the lists.
    var tours: [UUID: TourState] = [:]
    var tourResources: [UUID: TourResources] = [:]
    /// The visible POIs' resources by id and by the slot the indexes name them by.
    var pois = SlotTable<PoiResources>()
    /// Folded category paths by the set of categories POIs have, shared by the POIs with that set.
    var foldedCategories: [[String]: [[UInt8]]] = [:]
    /// Opening hours read once per distinct text and shared (a city's POIs have few): one parsed week per POI
    /// was a sixth of the feed's memory.
    var openingHours: [String: OpeningHours?] = [:]
    var tourSlots = SlotTable<TourListing>()
    var spatialIndex = SpatialIndex()
    var poiTextIndex = TextIndex()
    var tourTextIndex = TextIndex()
    var tourLists: [RenderedResource]
    var legacyTourList: RenderedResource = RenderedResource.content(LegacyXML.tours([]), MediaTypes.xml)
    var legacyTourIds: [String: UUID] = [:]
    var categories: [CategoryState] = []
    var calendar = CalendarListing()
    var people = PeopleListing()
    var pages = PagesListing()
    var featured = FeaturedListing()
    var media = MediaLibrary()
    var renderedBytes = 0
    var generation = 0
    /// Tours changed since the lists were last rendered.
    var tourListsOutdated = false
    /// What `GET /v1/changes` answers from.
    var changeLog = ChangeLog()

    init(languages: SiteLanguages) {
        self.languages = languages
        siteLanguageOnly = [languages.site]
        tourLists = languages.offered.indices.map { index in
            let language = ContentLanguage(index: index, tag: languages.offered[index])
            return RenderedResource.content(ContentJSON.tourList([], language: language.tag), MediaTypes.json, language: language)
        }
    }

    /// Each offered language, by index.
    var contentLanguages: [ContentLanguage] {
        languages.offered.indices.map { ContentLanguage(index: $0, tag: languages.offered[$0]) }
    }

    /// The languages `content` has text in, the site's first; entities with the same languages share one array (a city
    /// translated into Spanish holds one `["en", "es"]`, not one per POI).
    mutating func languages(of content: some Translatable) -> [String] {
        guard content.translations != nil else { return siteLanguageOnly }
        let list = content.languages(site: languages.site, offered: languages.offered)
        if let shared = languageLists[list] { return shared }
        languageLists[list] = list
        return list
    }

    /// The texts of every offered language but the site's that `fields` names, for the search indexes: a word of a
    /// translation finds the entity, in any language.
    func translatedTexts(of content: some Translatable, fields: [String]) -> [String] {
        guard content.translations != nil else { return [] }
        return languages.translated.flatMap { language in
            let texts = content.translated(in: language) ?? [:]
            return fields.compactMap { texts[$0] }
        }
    }

    // MARK: rebuilding

    /// Renders the work's entities; a publication also renders the lists and ranks the text indexes, which
    /// each cover everything and are done once, not per batch rendered ahead.
    mutating func render(_ work: RenderWork, isPublication: Bool) {
        noteRecordsOnFeed(work)
        rebuildPois(work.pois)
        rebuildTours(work.tours)
        if let categories = work.categories { self.categories = categories }
        tourListsOutdated = tourListsOutdated || !work.tours.isEmpty || work.isFirstPublication
        guard isPublication else { return }
        if tourListsOutdated { rebuildTourLists() }
        tourListsOutdated = false
        buildListingsAndRankIndexes(work)
        generation += 1
    }

    /// The listings of the record kinds that changed (each with its text index, the pages' Markdown) and the ranking of the
    /// POI and tour indexes each cover everything and need nothing from each other: after a snapshot they are most of the
    /// publication's time, and side by side they take the cores there are.
    private mutating func buildListingsAndRankIndexes(_ work: RenderWork) {
        // Moved out, so each is the only holder of its storage and is ranked in place, not copied.
        nonisolated(unsafe) var poiIndex = poiTextIndex, tourIndex = tourTextIndex
        poiTextIndex = TextIndex()
        tourTextIndex = TextIndex()
        let listings = FeedRecordKinds.all.compactMap { $0.listingBuild(work) }
        // Each step writes only its own variable.
        let steps: [@Sendable () -> Void] = [{ poiIndex.seal() }, { tourIndex.seal() }] + listings.map { listing in { listing.build() } }
        DispatchQueue.concurrentPerform(iterations: steps.count) { steps[$0]() }
        poiTextIndex = poiIndex
        tourTextIndex = tourIndex
        for listing in listings { listing.store(in: &self) }
    }

    static func listOrder(_ a: TourState, _ b: TourState) -> Bool {
        (a.content.name, a.id) < (b.content.name, b.id)
    }

    /// The changed entities still shown, and the ids of those no longer shown.
    private static func split<Item>(_ changed: [UUID: Item?]) -> (shown: [Item], gone: [UUID]) {
        var shown: [Item] = [], gone: [UUID] = []
        for (id, item) in changed {
            if let item { shown.append(item) } else { gone.append(id) }
        }
        return (shown, gone)
    }

    private mutating func rebuildPois(_ changed: [UUID: RenderWork.Poi?]) {
        let (work, gone) = Self.split(changed)
        for id in gone { removePoi(id) }
        // The POIs of a tour share one list of the tours stopping there, not one each.
        var tourLists: [[UUID]: [TourName]] = [:]
        for item in work {
            let poi = item.poi
            let folded = foldedCategories[poi.content.categories] ?? poi.content.categories.map(TextFolding.fold)
            foldedCategories[poi.content.categories] = folded
            let tourIds = item.tours.map(\.id)
            let tours = tourLists[tourIds] ?? item.tours
            tourLists[tourIds] = tours
            let hours = poi.content.openingHours.flatMap { text in
                openingHours[text] ?? {
                    let parsed = try? OpeningHours(parsing: text)
                    openingHours[text] = .some(parsed)
                    return parsed
                }()
            }
            let resources = PoiResources(poi: item.poi, tours: tours, foldedCategories: folded, languages: languages(of: poi.content),
                                         openingHours: hours, media: item.media)
            let slot = pois.store(resources, for: poi.id)
            spatialIndex.insert(slot: slot, at: Coordinate(latitude: poi.content.latitude, longitude: poi.content.longitude))
            poiTextIndex.insert(slot: slot, id: poi.id, name: poi.content.name,
                                fields: [poi.content.summary] + poi.content.buildings + translatedTexts(of: poi.content, fields: ["name", "summary"]))
        }
    }

    private mutating func removePoi(_ id: UUID) {
        if let slot = pois.remove(id) {
            spatialIndex.remove(slot: slot)
            poiTextIndex.remove(slot: slot)
        }
    }

    private mutating func rebuildTours(_ changed: [UUID: RenderWork.Tour?]) {
        let (work, gone) = Self.split(changed)
        for id in gone {
            tours[id] = nil
            tourResources[id] = nil
            if let slot = tourSlots.remove(id) { tourTextIndex.remove(slot: slot) }
        }
        for item in work {
            let tour = item.tour
            tours[tour.id] = tour
            tourResources[tour.id] = TourResources(tour: tour, stops: item.stops, languages: languages)
            let tourLanguages = languages(of: tour.content)
            let listing = TourListing(id: tour.id, summaries: contentLanguages.map { language in
                ContentJSON.tourSummary(tour.localized(language), stopCount: item.stops.count, languages: tourLanguages)
            })
            let slot = tourSlots.store(listing, for: tour.id)
            tourTextIndex.insert(slot: slot, id: tour.id, name: tour.content.name,
                                 fields: [tour.content.summary] + translatedTexts(of: tour.content, fields: ["name", "summary"]))
        }
    }

    /// `GET /v1/tours` and `tours.xml`: every published tour, by name. In `tours.xml` a tour goes by its
    /// legacy number unless an earlier tour in the list already has that number.
    private mutating func rebuildTourLists() {
        let listed = tourResources.keys.compactMap { tours[$0] }.sorted(by: Self.listOrder)
        let listings = listed.compactMap { tourSlots[$0.id] }
        var legacyIds: [String: UUID] = [:]
        var legacyEntries: [(legacyId: String, tour: TourState)] = []
        for tour in listed {
            var id = LegacyXML.tourId(tour)
            if legacyIds[id] != nil { id = tour.id.uuidString }
            legacyIds[id] = tour.id
            legacyEntries.append((id, tour))
        }
        renderedBytes -= tourLists.reduce(legacyTourList.byteCount) { $0 + $1.byteCount }
        tourLists = contentLanguages.map { language in
            .content(ContentJSON.tourList(listings.map { $0.summaries[language.index] }, language: language.tag), MediaTypes.json, language: language)
        }
        legacyTourList = .content(LegacyXML.tours(legacyEntries), MediaTypes.xml)
        renderedBytes += tourLists.reduce(legacyTourList.byteCount) { $0 + $1.byteCount }
        legacyTourIds = legacyIds
    }

    func makeSnapshot() -> FeedSnapshot {
        FeedSnapshot(FeedSnapshot.Contents(
            languages: languages, tourLists: tourLists, legacyTourList: legacyTourList, tours: tourResources, pois: pois, legacyTourIds: legacyTourIds,
            tourListings: tourSlots.values, spatialIndex: spatialIndex, poiTextIndex: poiTextIndex,
            tourTextIndex: tourTextIndex, categories: categories, calendar: calendar, people: people,
            pages: pages, featured: featured, media: media, generation: generation, changes: changeLog))
    }
}

/// Entities by id and by index slot: small integers the indexes store instead of UUIDs, reused after removal.
/// One table for both, not a dictionary by id beside it: a city's POIs made each such dictionary megabytes.
struct SlotTable<Value: Sendable>: Sendable {
    /// Values by slot; nil in a free slot.
    private(set) var values: [Value?] = []
    private var slots: [UUID: Int32] = [:]
    private var free: [Int32] = []

    /// How many entities it holds.
    var count: Int { slots.count }

    subscript(id: UUID) -> Value? {
        slots[id].flatMap { values[Int($0)] }
    }

    /// The value in a slot an index gave; nil for a free or unknown slot.
    subscript(slot slot: Int32) -> Value? {
        slot >= 0 && Int(slot) < values.count ? values[Int(slot)] : nil
    }

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
}

/// Records of one kind kept whole by id, and whether any changed since a publication last took them.
private struct ChangedRecords<Record> {
    var byId: [UUID: Record] = [:]
    var changed = false

    /// The records `keep` keeps when any changed since the last call; nil when none did.
    mutating func takeChanged(where keep: (Record) -> Bool = { _ in true }) -> [Record]? {
        defer { changed = false }
        return changed ? byId.values.filter(keep) : nil
    }
}

/// A catalog event that carries its record whole (a category, a calendar entry), as the projection applies it.
fileprivate protocol WholeRecordEvent {
    associatedtype Record
    var entityId: UUID { get }
    var version: Int { get }
    var isDeletion: Bool { get }
    /// The record after a change.
    var record: Record? { get }
}

extension CategoryEvent: WholeRecordEvent {
    fileprivate var isDeletion: Bool {
        switch kind {
        case .changed: false
        case .deleted: true
        }
    }

    fileprivate var record: CategoryState? { category }
}

extension CatalogRecordEvent: WholeRecordEvent {
    fileprivate var isDeletion: Bool {
        switch kind {
        case .changed: false
        case .deleted: true
        }
    }
}

// MARK: changes (DESIGN.md, "Offline tours and changes")

extension EntityState {
    /// A tour's change changes its stops' place on the feed and their `tourIds`: the stops before and after.
    fileprivate mutating func noteChanged(tour id: UUID, stops oldStops: [UUID], _ newStops: [UUID]) {
        changeNotes.note(.tour, id)
        for stop in oldStops { changeNotes.note(.poi, stop) }
        let old = Set(oldStops)
        for stop in newStops where !old.contains(stop) { changeNotes.note(.poi, stop) }
    }

    /// The changes noted since the last publication, each with its version and whether it is on the feed now.
    fileprivate mutating func takeLoggedChanges() -> ChangeLog.Batch? {
        // Taken out while the closure reads the rest of the state (no copy: `take` only reads the notes, then drops them).
        var notes = changeNotes
        let batch = notes.take { kind, id in (kind == .poi ? seenPoiVersion(of: id) : versions[id]).map { ($0, isOnFeed(kind, id)) } }
        changeNotes = notes
        return batch
    }

    /// Whether the entity is on the feed: as `takeChanges` decides what to render.
    private func isOnFeed(_ kind: ChangeLog.Kind, _ id: UUID) -> Bool {
        switch kind {
        case .tour: return tours[id]?.status == .published
        case .poi:
            guard let poi = pois[id] else { return false }
            return poi.status == .published || (toursByPoi[id] ?? []).contains { tours[$0]?.status == .published }
        case .event, .person, .page, .featured, .media:
            guard let recordKind = FeedRecordKinds.all.first(where: { $0.changeKind == kind }) else { return false }
            return isPublished(id, as: recordKind)
        }
    }

    private func isPublished<Kind: FeedRecord>(_ id: UUID, as _: Kind.Type) -> Bool {
        self[keyPath: Kind.held].byId[id]?.status == .published
    }
}

extension RenderedState {
    /// The published records of each kind that changed, for a reset's answer.
    fileprivate mutating func noteRecordsOnFeed(_ work: RenderWork) {
        for kind in FeedRecordKinds.all { noteOnFeed(kind, work) }
    }

    private mutating func noteOnFeed<Kind: FeedRecord>(_: Kind.Type, _ work: RenderWork) {
        guard let states = work[keyPath: Kind.published] else { return }
        changeLog.setRecordsOnFeed(Kind.changeKind, states.map { ChangeLog.Listed(id: $0.id, version: $0.version) })
    }
}

// MARK: record kinds (CatalogRecordKinds)

/// Where the feed keeps one kind of catalog record: every per-kind step of the projection (applying its events,
/// taking its changes for a publication, the changes' log) goes through this, for each kind in `FeedRecordKinds.all`.
/// How a kind is shown (its listing, its routes) is the kind's own.
fileprivate protocol FeedRecord: CatalogRecordContent {
    /// How `GET /v1/changes` names one.
    static var changeKind: ChangeLog.Kind { get }
    /// Its records as held, any status.
    static var held: WritableKeyPath<EntityState, ChangedRecords<CatalogRecordState<Self>>> { get }
    /// The published ones a publication renders, when any changed.
    static var published: WritableKeyPath<RenderWork, [CatalogRecordState<Self>]?> { get }
    /// What else a change touches, after it was taken in.
    static func applied(before: CatalogRecordState<Self>?, after: CatalogRecordState<Self>?, id: UUID, to state: inout EntityState)
    /// How the published ones are listed (a `RecordListing`, or the media library by hash), built at publication.
    associatedtype Listing: Sendable
    static var listing: WritableKeyPath<RenderedState, Listing> { get }
    static func makeListing(_ states: [CatalogRecordState<Self>]) -> Listing
}

extension FeedRecord {
    fileprivate static func applied(before: CatalogRecordState<Self>?, after: CatalogRecordState<Self>?, id: UUID, to state: inout EntityState) {}

    /// The build of its listing, when the work has its published records.
    fileprivate static func listingBuild(_ work: RenderWork) -> (any ListingBuild)? {
        work[keyPath: published].map { KindListingBuild<Self>($0) }
    }
}

extension FeedRecord where Self: ListedRecord, Listing == RecordListing<Self> {
    fileprivate static func makeListing(_ states: [CatalogRecordState<Self>]) -> Listing { RecordListing(states) }
}

/// One kind's listing built beside the others (`buildListingsAndRankIndexes`), then stored in the rendered state.
private protocol ListingBuild: Sendable {
    func build()
    func store(in rendered: inout RenderedState)
}

private final class KindListingBuild<Kind: FeedRecord>: ListingBuild {
    private let states: [CatalogRecordState<Kind>]
    private let listing = Mutex<Kind.Listing?>(nil)

    init(_ states: [CatalogRecordState<Kind>]) {
        self.states = states
    }

    func build() {
        let built = Kind.makeListing(states)
        listing.withLock { $0 = built }
    }

    func store(in rendered: inout RenderedState) {
        if let built = listing.withLock({ $0 }) { rendered[keyPath: Kind.listing] = built }
    }
}

extension CalendarEntryContent: FeedRecord {
    fileprivate static var changeKind: ChangeLog.Kind { .event }
    fileprivate static var held: WritableKeyPath<EntityState, ChangedRecords<CalendarEntryState>> { \.calendar }
    fileprivate static var published: WritableKeyPath<RenderWork, [CalendarEntryState]?> { \.calendar }
    fileprivate static var listing: WritableKeyPath<RenderedState, RecordListing<Self>> { \.calendar }
}

extension PersonContent: FeedRecord {
    fileprivate static var changeKind: ChangeLog.Kind { .person }
    fileprivate static var held: WritableKeyPath<EntityState, ChangedRecords<PersonState>> { \.people }
    fileprivate static var published: WritableKeyPath<RenderWork, [PersonState]?> { \.people }
    fileprivate static var listing: WritableKeyPath<RenderedState, RecordListing<Self>> { \.people }
}

extension PageContent: FeedRecord {
    fileprivate static var changeKind: ChangeLog.Kind { .page }
    fileprivate static var held: WritableKeyPath<EntityState, ChangedRecords<PageState>> { \.pages }
    fileprivate static var published: WritableKeyPath<RenderWork, [PageState]?> { \.pages }
    fileprivate static var listing: WritableKeyPath<RenderedState, RecordListing<Self>> { \.pages }
}

extension FeaturedContent: FeedRecord {
    fileprivate static var changeKind: ChangeLog.Kind { .featured }
    fileprivate static var held: WritableKeyPath<EntityState, ChangedRecords<FeaturedState>> { \.featured }
    fileprivate static var published: WritableKeyPath<RenderWork, [FeaturedState]?> { \.featured }
    fileprivate static var listing: WritableKeyPath<RenderedState, RecordListing<Self>> { \.featured }
}

extension MediaContent: FeedRecord {
    fileprivate static var changeKind: ChangeLog.Kind { .media }
    fileprivate static var held: WritableKeyPath<EntityState, ChangedRecords<MediaState>> { \.media }
    fileprivate static var published: WritableKeyPath<RenderWork, [MediaState]?> { \.media }
    fileprivate static var listing: WritableKeyPath<RenderedState, MediaLibrary> { \.media }

    fileprivate static func makeListing(_ states: [MediaState]) -> MediaLibrary { MediaLibrary(states) }

    fileprivate static func applied(before: MediaState?, after: MediaState?, id: UUID, to state: inout EntityState) {
        state.mediaApplied(before: before, after: after, id: id)
    }
}

/// The kinds of `CatalogRecordKinds.all` the feed holds: all of them (`FeedRecordKinds.missing` is empty; a test checks).
enum FeedRecordKinds {
    fileprivate static let all: [any FeedRecord.Type] = CatalogRecordKinds.all.compactMap { $0 as? any FeedRecord.Type }

    /// The record kinds with no place on the feed, whose events it would not hold.
    static var missing: [String] {
        CatalogRecordKinds.all.filter { !($0 is any FeedRecord.Type) }.map { $0.recordKind }
    }
}

extension CatalogProjection: CatalogRecordConsumer {
    func handle<Content: CatalogRecordContent>(_ envelope: Envelope<CatalogRecordEvent<Content>>) async throws {
        apply(envelope.data)
    }
}
