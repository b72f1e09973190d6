import Foundation
import HTTPTypes
import Hummingbird
import Shared
import Synchronization

/// Everything a read request needs, immutable once published: rendered responses by id, the lists,
/// the legacy feeds and the search indexes. The projection builds a new one per batch of changes and
/// swaps it in whole, so a reader sees each entity at one version and never waits for a writer.
@dynamicMemberLookup
final class FeedSnapshot: Sendable {
    /// What a publication made; read through the snapshot (`snapshot.pois`).
    struct Contents: Sendable {
        /// The site's languages; `GET /v1/tours` in each, by `ContentLanguage.index`.
        let languages: SiteLanguages
        let tourLists: [RenderedResource]
        let legacyTourList: RenderedResource
        let tours: [UUID: TourResources]
        /// The visible POIs, by id and by index slot (for nearby and search results).
        let pois: SlotTable<PoiResources>
        /// Tour ids as `tours.xml` gives them (legacy number or UUID text) → tour.
        let legacyTourIds: [String: UUID]
        /// Published tours by index slot, for search results.
        let tourListings: [TourListing?]
        let spatialIndex: SpatialIndex
        let poiTextIndex: TextIndex
        let tourTextIndex: TextIndex
        /// The category tree as catalog last sent it; `categoryTree` renders it with counts on its first request.
        let categories: [CategoryState]
        /// The published calendar entries with their schedules; `calendarFile` renders them as iCalendar on its first request.
        let calendar: CalendarListing
        /// The published people directory.
        let people: PeopleListing
        /// The published content pages.
        let pages: PagesListing
        /// The published featured items, by `order`.
        let featured: FeaturedListing
        /// The published media library items, by hash (theirs and their variants').
        let media: MediaLibrary
        /// Increases with every publication.
        let generation: Int
        /// What changed since this instance's horizon, for `GET /v1/changes` (ChangeLog.swift).
        let changes: ChangeLog
    }

    let contents: Contents
    private let renderedCategoryTree = PerLanguage()
    private let renderedCalendarFile = PerLanguage()
    /// Tours' bundles rendered from this snapshot, on their first request, by tour and language.
    private let renderedBundles = Mutex<[BundleKey: RenderedResource]>([:])

    private struct BundleKey: Hashable {
        let tour: UUID
        let language: Int
    }

    init(_ contents: Contents) {
        self.contents = contents
    }

    @inline(__always)
    subscript<Value>(dynamicMember path: KeyPath<Contents, Value>) -> Value { contents[keyPath: path] }

    /// `GET /v1/tours` in `language`.
    func tourList(_ language: ContentLanguage) -> RenderedResource { contents.tourLists[language.index] }

    /// `GET /v1/categories` in `language`: the tree with each node's visible POIs, descendants included.
    func categoryTree(_ language: ContentLanguage) -> RenderedResource {
        renderedCategoryTree.resource(language) {
            let categories = language.isSite ? contents.categories : contents.categories.map { $0.localized(to: language.tag) }
            return .content(ContentJSON.categoryTree(categories, poiCategories: contents.pois.values.compactMap { $0?.categories },
                                                                language: language.tag), MediaTypes.json,
                            language: language)
        }
    }

    /// `GET /v1/calendar.ics` in `language`: each event's texts and its place's name in it where they have them.
    func calendarFile(_ language: ContentLanguage) -> RenderedResource {
        renderedCalendarFile.resource(language) {
            let entries = language.isSite ? contents.calendar.entries : contents.calendar.entries.map { entry in
                var shown = entry
                shown.content = entry.content.localized(to: language.tag)
                return shown
            }
            return .content(CalendarFile.render(entries, placeName: { self.placeName(of: $0, in: language) }), MediaTypes.calendar, language: language)
        }
    }

    /// `GET /v1/tours/{id}/bundle` (DESIGN.md, "Offline tours and changes"): the tour, its stops and their pages as
    /// their own answers give them, and the library files they use.
    /// The library files a tour's bundle names (its JSON's `media`, its zip's files): its cover, when that is a
    /// published library picture, then what its stops use.
    func bundleManifest(of tour: TourResources) -> [TourBundle.File] {
        let cover = tour.coverImage.flatMap { url in
            MediaHash.named(inURL: url).flatMap { contents.media.file($0, width: nil) }.map { file in
                // The file itself, as the stops' files are named: the address without its query (`?w=`).
                TourBundle.File(sha256: file.sha256, byteCount: file.byteCount, contentType: file.contentType,
                                url: String(url[..<(url.firstIndex(of: "?") ?? url.endIndex)]))
            }
        }
        return TourBundle.manifest(tour.stopIds.compactMap { contents.pois[$0] }, cover: cover)
    }

    func bundle(of tour: TourResources, in language: ContentLanguage) -> RenderedResource {
        let key = BundleKey(tour: tour.id, language: language.index)
        if let bundle = renderedBundles.withLock({ $0[key] }) { return bundle }
        let stops = tour.stopIds.compactMap { contents.pois[$0] }
        let bundle = RenderedResource.content(TourBundle.json(tour: tour.detail(language), stops: stops, language: language,
                                                              manifest: bundleManifest(of: tour)),
                                              MediaTypes.json, language: language)
        renderedBundles.withLock { $0[key] = bundle }
        return bundle
    }

    /// Where an entry happens, as phones show it: the POI's name when it is on the feed, else the text given.
    func placeName(of content: CalendarEntryContent, in language: ContentLanguage) -> (poiId: UUID?, name: String)? {
        if let id = content.placePoiId, let poi = contents.pois[id] { return (id, poi.translatedTexts(in: language)["name"] ?? poi.name) }
        if let text = content.placeText, !text.isEmpty { return (nil, text) }
        return nil
    }

    func poi(inSlot slot: Int32) -> PoiResources? {
        contents.pois[slot: slot]
    }

    func tourListing(_ slot: Int32) -> TourListing? {
        slot >= 0 && Int(slot) < contents.tourListings.count ? contents.tourListings[Int(slot)] : nil
    }
}

/// A published tour's responses, each rendered on its first request, like a POI's: a city's tours with all
/// their stops were most of what a new feed rendered before it was ready.
final class TourResources: Sendable {
    private let tour: TourState
    /// Its stops' POIs that have arrived, in walking order.
    private let stops: [PoiRecord]
    private let languages: SiteLanguages
    private let renderedDetail = PerLanguage()
    private let renderedLegacyPois = Mutex<RenderedResource?>(nil)

    init(tour: TourState, stops: [PoiRecord], languages: SiteLanguages) {
        self.tour = tour
        self.stops = stops
        self.languages = languages
    }

    var id: UUID { tour.id }
    var version: Int { tour.version }
    /// Its stops that have arrived, in walking order.
    var stopIds: [UUID] { stops.map(\.id) }
    var name: String { tour.content.name }
    var summary: String { tour.content.summary }
    var coverImage: String? { tour.content.coverImage }

    /// Its translated texts in `language`, none for the site's.
    func translatedTexts(in language: ContentLanguage) -> [String: String] { tour.content.texts(in: language) }

    func detail(_ language: ContentLanguage) -> RenderedResource {
        renderedDetail.resource(language) {
            .content(ContentJSON.tourDetail(tour.localized(language), stops: stops.map { $0.state.localized(language) }, language: language,
                                            languages: languages),
                     MediaTypes.json, language: language)
        }
    }

    var legacyPois: RenderedResource {
        .cached(in: renderedLegacyPois) { .content(LegacyXML.pois(of: tour, stops: stops.map(\.state)), MediaTypes.xml) }
    }
}

/// A visible POI's responses, each rendered on its first request and then kept until the POI changes (when a
/// new `PoiResources` replaces this one), and what nearby and search results show of it, written per answer.
/// A city has far more POIs than phones open: rendering them all up front made most of a new feed's start
/// and memory.
final class PoiResources: Sendable {
    private let poi: PoiRecord
    /// The published tours stopping there, in list order.
    private let tours: [TourName]
    /// Folded category paths, for `category=` filters; one array per distinct set of categories, shared.
    let foldedCategories: [[UInt8]]
    /// The languages it has text in, the site's first (one array for every POI without translations).
    let languages: [String]
    private let renderedDetail = PerLanguage()
    private let renderedPage = PerLanguage()

    /// Its opening hours, when they read (free text from before they were checked does not).
    let openingHours: OpeningHours?
    /// The published library files it names.
    let media: PoiMedia?

    var id: UUID { poi.id }
    var version: Int { poi.version }

    init(poi: PoiRecord, tours: [TourName], foldedCategories: [[UInt8]], languages: [String], openingHours: OpeningHours?,
         media: PoiMedia? = nil) {
        self.poi = poi
        self.tours = tours
        self.foldedCategories = foldedCategories
        self.languages = languages
        self.openingHours = openingHours
        self.media = media
    }

    /// Its category paths, the main one first.
    var categories: [String] { poi.content.categories }

    var name: String { poi.content.name }

    var summary: String { poi.content.summary }

    /// Its translated texts in `language`, none for the site's.
    func translatedTexts(in language: ContentLanguage) -> [String: String] { poi.content.texts(in: language) }

    var coordinate: Coordinate { Coordinate(latitude: poi.content.latitude, longitude: poi.content.longitude) }

    /// The JSON members of its entry in nearby and search results in `language`, without braces.
    func writeListingMembers(to json: inout JSONWriter, in language: ContentLanguage) {
        let texts = language.isSite ? nil : poi.content.translated(in: language.tag)
        ContentJSON.poiListingMembers(id: poi.id, poi.content, name: texts?["name"], summary: texts?["summary"], languages: languages, to: &json)
    }

    /// True when one of the POI's categories is `category` or below it ("Shop" matches "Shop/Fashion").
    func isInCategory(_ category: [UInt8]) -> Bool {
        foldedCategories.contains { TextFolding.isPath($0, within: category) }
    }

    func detail(_ language: ContentLanguage) -> RenderedResource {
        renderedDetail.resource(language) {
            .content(ContentJSON.poiDetail(poi.state.localized(language), tourIds: tours.map(\.id), openingHours: openingHours,
                                           media: language.isSite ? media : media?.localized(to: language.tag),
                                           language: language, languages: languages),
                     MediaTypes.json, language: language)
        }
    }

    func page(_ language: ContentLanguage) -> RenderedResource {
        renderedPage.resource(language) {
            .content(PoiPage.render(poi.state.localized(language), tourNames: tours.map { $0.name(in: language) },
                                    media: (language.isSite ? media : media?.localized(to: language.tag))?.linked(from: PoiPage.relativeMediaBase),
                                    language: language.tag, siteLanguage: languages.first ?? language.tag),
                     MediaTypes.html, extraHeaders: PoiPage.headers, language: language)
        }
    }
}

/// A published tour as its stops show it: its id and name, in each language it has one in.
struct TourName: Sendable {
    let id: UUID
    let name: String
    /// Its name in other languages (language → name), nil when it has none.
    let translatedNames: [String: String]?

    init(id: UUID, content: TourContent) {
        self.id = id
        name = content.name
        let names = (content.translations ?? [:]).compactMapValues { $0["name"] }
        translatedNames = names.isEmpty ? nil : names
    }

    func name(in language: ContentLanguage) -> String { language.isSite ? name : translatedNames?[language.tag] ?? name }
}

/// A POI as the feed keeps it, held once and shared by reference: by the projection's entities, the POI's
/// responses and each tour stopping there. Its state without the draft, which the feed never shows: an
/// absent `PoiContent?` still takes its whole inline size, half of a `PoiState`.
final class PoiRecord: Sendable {
    let id: UUID
    let version: Int
    let status: ContentStatus
    let updatedAt: Date
    let content: PoiContent

    /// The state, its texts and lists that other POIs share kept once (`SharedTexts`).
    init(_ state: PoiState, sharing shared: inout SharedTexts) {
        id = state.id
        version = state.version
        status = state.status
        updatedAt = state.updatedAt
        var content = state.content
        content.categories = shared.list(content.categories)
        content.buildings = shared.list(content.buildings)
        content.openingHours = content.openingHours.map { shared.text($0) }
        self.content = content
    }

    /// The published state, for rendering.
    var state: PoiState { PoiState(id: id, version: version, status: status, content: content, updatedAt: updatedAt) }
}

/// One copy of each text and list that POIs share: categories, buildings and opening hours repeat across a city's
/// POIs (a campus has a few buildings and a few sets of hours), and a copy per POI cost a city tens of megabytes.
/// Kept for as long as the projection: a value no POI uses any more stays, one entry per distinct value.
/// Values are matched byte for byte: `String`'s `==` takes canonically equivalent texts (an é as one scalar or as an
/// e and an accent) as equal, and each POI keeps the bytes catalog sent for it.
struct SharedTexts {
    private var texts: Set<Exact> = []
    private var lists: Set<ExactList> = []

    /// The copy of `value` already held, else `value`, now held. A text of up to 15 bytes is stored inline: nothing to share.
    mutating func text(_ value: String) -> String {
        value.utf8.count <= 15 ? value : texts.insert(Exact(text: value)).memberAfterInsert.text
    }

    mutating func list(_ values: [String]) -> [String] {
        guard !values.isEmpty else { return values }
        if let held = lists.firstIndex(of: ExactList(texts: values)) { return lists[held].texts }
        let shared = values.map { text($0) }
        lists.insert(ExactList(texts: shared))
        return shared
    }

    private struct Exact: Hashable {
        let text: String

        static func == (a: Exact, b: Exact) -> Bool { a.text.utf8.elementsEqual(b.text.utf8) }

        func hash(into hasher: inout Hasher) { Self.hashBytes(of: text, into: &hasher) }

        static func hashBytes(of text: String, into hasher: inout Hasher) {
            var text = text
            text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
            hasher.combine(text.utf8.count)
        }
    }

    private struct ExactList: Hashable {
        let texts: [String]

        static func == (a: ExactList, b: ExactList) -> Bool {
            a.texts.count == b.texts.count && zip(a.texts, b.texts).allSatisfy { $0.utf8.elementsEqual($1.utf8) }
        }

        func hash(into hasher: inout Hasher) {
            for text in texts { Exact.hashBytes(of: text, into: &hasher) }
        }
    }
}

extension RenderedResource {
    /// Catalog content: cached as content is, gzip-compressed where that pays; `language` when it is answered per language.
    static func content(_ bytes: [UInt8], _ contentType: String, extraHeaders: HTTPFields = [:], language: ContentLanguage? = nil) -> RenderedResource {
        RenderedResource(bytes: bytes, contentType: contentType, cacheControl: CachePolicy.content, extraHeaders: extraHeaders,
                         language: language?.tag, compressor: GzipCompressor())
    }

    /// What `slot` holds, else `render`'s result, kept; rendered outside the lock (two first requests at once
    /// both render, the first kept wins).
    static func cached(in slot: borrowing Mutex<RenderedResource?>, render: () -> RenderedResource) -> RenderedResource {
        if let resource = slot.withLock({ $0 }) { return resource }
        let resource = render()
        return slot.withLock { cached in
            if let cached { return cached }
            cached = resource
            return resource
        }
    }
}

/// A resource per language, each rendered on its first request and kept. The site's language has its own slot: most
/// content is never translated, and an empty dictionary costs nothing.
struct PerLanguage: ~Copyable, Sendable {
    private let site = Mutex<RenderedResource?>(nil)
    private let others = Mutex<[Int: RenderedResource]>([:])

    func resource(_ language: ContentLanguage, render: () -> RenderedResource) -> RenderedResource {
        if language.isSite { return .cached(in: site, render: render) }
        if let resource = others.withLock({ $0[language.index] }) { return resource }
        let resource = render()
        return others.withLock { held in
            if let kept = held[language.index] { return kept }
            held[language.index] = resource
            return resource
        }
    }
}

/// What search results show of a tour: its `GET /v1/tours` entry in each offered language, by `ContentLanguage.index`.
final class TourListing: Sendable {
    let id: UUID
    let summaries: [[UInt8]]

    init(id: UUID, summaries: [[UInt8]]) {
        self.id = id
        self.summaries = summaries
    }
}

extension Translatable {
    /// Its translated texts in an answer's language (`tidy` kept no empty one), none for the site's.
    func texts(in language: ContentLanguage) -> [String: String] {
        language.isSite ? [:] : translated(in: language.tag) ?? [:]
    }
}

/// A state whose content translates: a tour's, a POI's.
protocol LocalizableState {
    associatedtype Content: Translatable
    var content: Content { get set }
}

extension TourState: LocalizableState {}
extension PoiState: LocalizableState {}

extension LocalizableState {
    /// As phones see it in `language` (each untranslated field in the site's language).
    func localized(_ language: ContentLanguage) -> Self {
        guard !language.isSite, content.translations != nil else { return self }
        var state = self
        state.content = content.localized(to: language.tag)
        return state
    }
}

enum MediaTypes {
    static let json = "application/json"
    static let html = "text/html; charset=utf-8"
    static let xml = "application/xml; charset=utf-8"
    static let problem = "application/problem+json"
    static let calendar = "text/calendar; charset=utf-8"
}

enum CachePolicy {
    /// Content changes take effect within a minute on phones and caches that honour this.
    static let content = "public, max-age=60"
    static let document = "public, max-age=300"
}

extension HTTPField.Name {
    static let serverTiming = Self("Server-Timing")!
}
