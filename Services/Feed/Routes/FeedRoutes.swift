import Foundation
import HTTPTypes
import Hummingbird
import Shared

/// The phones' read API (DESIGN.md "Feed API"). Each handler takes the current projection snapshot and
/// answers from it: stored responses are looked up, nearby and search ask the indexes.
struct FeedRoutes<Context: RequestContext> {
    let projection: CatalogProjection

    static var maxNearbyRadiusMeters: Double { 100_000 }
    static var maxNearbyLimit: Int { 200 }
    static var maxSearchLimit: Int { 100 }
    static var maxQueryCharacters: Int { 200 }

    func register(on router: Router<Context>) {
        router.get("/v1/tours") { request, _ in
            projection.snapshot.tourList.response(to: request)
        }
        router.get("/v1/tours/:id") { request, context in
            let id = try Self.uuid(context, "tour")
            guard let tour = projection.snapshot.tours[id] else { throw Problem.notFound("no published tour has id \(id.uuidString)") }
            return tour.detail.response(to: request)
        }
        router.get("/v1/pois") { request, _ in
            try nearby(request)
        }
        router.get("/v1/pois/:id") { request, context in
            let id = try Self.uuid(context, "POI")
            return try poi(id).detail.response(to: request)
        }
        router.get("/v1/pois/:id/page") { request, context in
            let id = try Self.uuid(context, "POI")
            return try poi(id).page.response(to: request)
        }
        router.get("/v1/search") { request, _ in
            try search(request)
        }
        router.get("/v1/legacy/tours.xml") { request, _ in
            projection.snapshot.legacyTourList.response(to: request)
        }
        router.get("/v1/legacy/tours/:id/pois.xml") { request, context in
            let given = context.parameters.get("id") ?? ""
            let snapshot = projection.snapshot
            // The id tours.xml gave (a legacy number or a UUID), or any published tour's UUID.
            guard let id = snapshot.legacyTourIds[given] ?? UUID(uuidString: given), let tour = snapshot.tours[id] else {
                throw Problem.notFound("no published tour has id \(QueryParameters.shown(given)) (ids come from /v1/legacy/tours.xml)")
            }
            return tour.legacyPois.response(to: request)
        }
    }

    private func poi(_ id: UUID) throws -> PoiResources {
        guard let poi = projection.snapshot.pois[id] else {
            throw Problem.notFound("no POI with id \(id.uuidString) is on a published tour")
        }
        return poi
    }

    static func uuid(_ context: Context, _ kind: String) throws -> UUID {
        let text = context.parameters.get("id") ?? ""
        guard let id = UUID(uuidString: text) else {
            throw Problem.badRequest("a \(kind) id is a UUID such as 3F2504E0-4F89-41D3-9A0C-0305E82C3301, got \"\(QueryParameters.shown(text))\"")
        }
        return id
    }

    // MARK: nearby

    /// `GET /v1/pois?near=LAT,LON&radius=M&limit=N&category=C`.
    func nearby(_ request: Request) throws -> Response {
        let query = try QueryParameters(request.uri.query)
        let center = try query.coordinate("near")
        let radius = try query.double("radius", in: 0...Self.maxNearbyRadiusMeters, default: 1_000)
        let limit = try query.int("limit", in: 1...Self.maxNearbyLimit, default: 20)
        var category: [UInt8]?
        if let text = query["category"] {
            let folded = TextFolding.fold(text)
            guard !folded.isEmpty, text.count <= Self.maxQueryCharacters else {
                throw Problem.badRequest("category must be a category path such as Shop/Fashion (1 to \(Self.maxQueryCharacters) characters)")
            }
            category = folded
        }

        let snapshot = projection.snapshot
        let started = ContinuousClock.now
        let hits = snapshot.spatialIndex.nearest(to: center, radiusMeters: radius, limit: limit) { slot in
            guard let category else { return true }
            return snapshot.poiListing(slot)?.isInCategory(category) ?? false
        }
        var json = JSONWriter(capacity: 64 + hits.count * 320)
        json.beginObject()
        json.key("pois")
        json.beginArray()
        for hit in hits {
            guard let listing = snapshot.poiListing(hit.slot) else { continue }
            var bearing = Geo.initialBearingDegrees(center, hit.coordinate).rounded(places: 1)
            if bearing >= 360 { bearing = 0 }
            json.beginObject()
            json.key("bearingDegrees"); json.number(bearing)
            json.key("distanceMeters"); json.number(hit.distanceMeters.rounded(places: 1))
            json.raw(listing.members)
            json.endObject()
        }
        json.endArray()
        json.endObject()
        return DynamicResponse.make(json.bytes, contentType: MediaTypes.json, request: request,
                                    extraHeaders: [.serverTiming: Self.serverTiming("index", since: started)])
    }

    // MARK: search

    /// `GET /v1/search?q=TEXT&limit=N`: tours and POIs whose name, summary or buildings contain TEXT.
    func search(_ request: Request) throws -> Response {
        let query = try QueryParameters(request.uri.query)
        let text = query["q"] ?? ""
        let folded = TextFolding.fold(text)
        guard !folded.isEmpty, text.count <= Self.maxQueryCharacters else {
            throw Problem.badRequest("q is required: the text to look for, 1 to \(Self.maxQueryCharacters) characters")
        }
        let limit = try query.int("limit", in: 1...Self.maxSearchLimit, default: 20)

        let snapshot = projection.snapshot
        let started = ContinuousClock.now
        let tourSlots = snapshot.tourTextIndex.search(folded: folded, limit: limit)
        let poiSlots = snapshot.poiTextIndex.search(folded: folded, limit: limit)
        var json = JSONWriter(capacity: 64 + (tourSlots.count + poiSlots.count) * 320)
        json.beginObject()
        json.key("pois")
        json.beginArray()
        for slot in poiSlots {
            guard let listing = snapshot.poiListing(slot) else { continue }
            json.beginObject()
            json.raw(listing.members)
            json.endObject()
        }
        json.endArray()
        json.key("tours")
        json.beginArray()
        for slot in tourSlots {
            guard let listing = snapshot.tourListing(slot) else { continue }
            json.raw(listing.summary)
        }
        json.endArray()
        json.endObject()
        return DynamicResponse.make(json.bytes, contentType: MediaTypes.json, request: request,
                                    extraHeaders: [.serverTiming: Self.serverTiming("index", since: started)])
    }

    /// `Server-Timing` (W3C) with the in-process time of the index query, so benchmarks and browsers can
    /// tell the index's share of a request from the network's.
    static func serverTiming(_ name: String, since start: ContinuousClock.Instant) -> String {
        let elapsed = ContinuousClock.now - start
        let milliseconds = Double(elapsed.components.seconds) * 1_000 + Double(elapsed.components.attoseconds) / 1e15
        return "\(name);dur=\(String(format: "%.3f", milliseconds))"
    }
}
