import Foundation
import HTTPTypes
import Hummingbird
import Shared
import Synchronization

/// Everything a read request needs, immutable once published: rendered responses by id, the lists,
/// the legacy feeds and the search indexes. The projection builds a new one per batch of changes and
/// swaps it in whole, so a reader sees each entity at one version and never waits for a writer.
final class FeedSnapshot: Sendable {
    let tourList: RenderedResource
    let legacyTourList: RenderedResource
    let tours: [UUID: TourResources]
    let pois: [UUID: PoiResources]
    /// Tour ids as `tours.xml` gives them (legacy number or UUID text) → tour.
    let legacyTourIds: [String: UUID]
    /// Visible POIs and published tours by index slot, for nearby and search results.
    let poiListings: [PoiListing?]
    let tourListings: [TourListing?]
    let spatialIndex: SpatialIndex
    let poiTextIndex: TextIndex
    let tourTextIndex: TextIndex
    /// Increases with every publication.
    let generation: Int

    init(tourList: RenderedResource, legacyTourList: RenderedResource, tours: [UUID: TourResources], pois: [UUID: PoiResources],
         legacyTourIds: [String: UUID], poiListings: [PoiListing?], tourListings: [TourListing?], spatialIndex: SpatialIndex,
         poiTextIndex: TextIndex, tourTextIndex: TextIndex, generation: Int) {
        self.tourList = tourList
        self.legacyTourList = legacyTourList
        self.tours = tours
        self.pois = pois
        self.legacyTourIds = legacyTourIds
        self.poiListings = poiListings
        self.tourListings = tourListings
        self.spatialIndex = spatialIndex
        self.poiTextIndex = poiTextIndex
        self.tourTextIndex = tourTextIndex
        self.generation = generation
    }

    func poiListing(_ slot: Int32) -> PoiListing? {
        slot >= 0 && Int(slot) < poiListings.count ? poiListings[Int(slot)] : nil
    }

    func tourListing(_ slot: Int32) -> TourListing? {
        slot >= 0 && Int(slot) < tourListings.count ? tourListings[Int(slot)] : nil
    }
}

/// A published tour's responses, each rendered on its first request, like a POI's: a city's tours with all
/// their stops were most of what a new feed rendered before it was ready.
final class TourResources: Sendable {
    private let tour: TourState
    /// Its stops' POIs that have arrived, in walking order.
    private let stops: [PoiState]
    private let renderedDetail = Mutex<RenderedResource?>(nil)
    private let renderedLegacyPois = Mutex<RenderedResource?>(nil)

    init(tour: TourState, stops: [PoiState]) {
        self.tour = tour
        self.stops = stops
    }

    var detail: RenderedResource {
        .cached(in: renderedDetail) { .content(ContentJSON.tourDetail(tour, stops: stops), MediaTypes.json) }
    }

    var legacyPois: RenderedResource {
        .cached(in: renderedLegacyPois) { .content(LegacyXML.pois(of: tour, stops: stops), MediaTypes.xml) }
    }
}

/// A visible POI's responses, each rendered on its first request and then kept until the POI changes (when a
/// new `PoiResources` replaces this one). A city has far more POIs than phones open: rendering them all up
/// front made most of a new feed's start and memory.
final class PoiResources: Sendable {
    private let poi: PoiState
    /// The published tours stopping there, in list order.
    private let tourIds: [UUID]
    private let tourNames: [String]
    private let renderedDetail = Mutex<RenderedResource?>(nil)
    private let renderedPage = Mutex<RenderedResource?>(nil)

    init(poi: PoiState, tours: [TourState]) {
        self.poi = poi
        tourIds = tours.map(\.id)
        tourNames = tours.map(\.content.name)
    }

    var detail: RenderedResource {
        .cached(in: renderedDetail) { .content(ContentJSON.poiDetail(poi, tourIds: tourIds), MediaTypes.json) }
    }

    var page: RenderedResource {
        .cached(in: renderedPage) { .content(PoiPage.render(poi, tourNames: tourNames), MediaTypes.html, extraHeaders: PoiPage.headers) }
    }
}

extension RenderedResource {
    /// Catalog content: cached as content is, gzip-compressed where that pays.
    static func content(_ bytes: [UInt8], _ contentType: String, extraHeaders: HTTPFields = [:]) -> RenderedResource {
        RenderedResource(bytes: bytes, contentType: contentType, cacheControl: CachePolicy.content, extraHeaders: extraHeaders,
                         compressor: GzipCompressor())
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

/// What nearby and search results show of a POI, pre-encoded.
final class PoiListing: Sendable {
    let id: UUID
    /// Folded category path, for `category=` filters.
    let foldedCategory: [UInt8]
    /// JSON members `category` … `summary`, without braces.
    let members: [UInt8]

    init(id: UUID, foldedCategory: [UInt8], members: [UInt8]) {
        self.id = id
        self.foldedCategory = foldedCategory
        self.members = members
    }

    /// True when the POI's category is `category` or below it ("Shop" matches "Shop/Fashion").
    func isInCategory(_ category: [UInt8]) -> Bool {
        guard foldedCategory.count >= category.count, foldedCategory.starts(with: category) else { return false }
        return foldedCategory.count == category.count || foldedCategory[category.count] == UInt8(ascii: "/")
    }
}

/// What search results show of a tour: its `GET /v1/tours` entry.
final class TourListing: Sendable {
    let id: UUID
    let summary: [UInt8]

    init(id: UUID, summary: [UInt8]) {
        self.id = id
        self.summary = summary
    }
}

enum MediaTypes {
    static let json = "application/json"
    static let html = "text/html; charset=utf-8"
    static let xml = "application/xml; charset=utf-8"
    static let problem = "application/problem+json"
}

enum CachePolicy {
    /// Content changes take effect within a minute on phones and caches that honour this.
    static let content = "public, max-age=60"
    static let document = "public, max-age=300"
}

extension HTTPField.Name {
    static let serverTiming = Self("Server-Timing")!
}
