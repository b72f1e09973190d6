import Foundation
import HTTPTypes
import Hummingbird
import Shared

/// The handlers of the phones' read API (DESIGN.md "Feed API"), which `FeedAPI.routes` names: lookups of
/// stored responses in the current snapshot, and nearby and search, which ask its indexes.
enum FeedRoutes {
    static var maxNearbyRadiusMeters: Double { 100_000 }
    static var maxNearbyLimit: Int { 200 }
    static var maxSearchLimit: Int { 100 }
    static var maxQueryCharacters: Int { 200 }

    static func tour(_ id: Substring, in snapshot: FeedSnapshot) throws -> TourResources {
        let id = try uuid(id, "tour")
        guard let tour = snapshot.tours[id] else { throw Problem.notFound("no published tour has id \(id.uuidString)") }
        return tour
    }

    static func poi(_ id: Substring, in snapshot: FeedSnapshot) throws -> PoiResources {
        let id = try uuid(id, "POI")
        guard let poi = snapshot.pois[id] else { throw Problem.notFound("no POI with id \(id.uuidString) is on a published tour") }
        return poi
    }

    /// The id tours.xml gave (a legacy number or a UUID), or any published tour's UUID.
    static func legacyTour(_ given: Substring, in snapshot: FeedSnapshot) throws -> TourResources {
        let given = String(given)
        guard let id = snapshot.legacyTourIds[given] ?? UUID(text: given), let tour = snapshot.tours[id] else {
            throw Problem.notFound("no published tour has id \(QueryParameters.shown(given)) (ids come from /v1/legacy/tours.xml)")
        }
        return tour
    }

    private static func uuid(_ text: Substring, _ kind: String) throws -> UUID {
        var text = text
        guard let id = text.withUTF8({ UUID(bytes: UnsafeRawBufferPointer($0)) }) else {
            throw Problem.badRequest("a \(kind) id is a UUID such as 3F2504E0-4F89-41D3-9A0C-0305E82C3301, got \"\(QueryParameters.shown(String(text)))\"")
        }
        return id
    }

    // MARK: nearby

    /// `GET /v1/pois?near=LAT,LON&radius=M&limit=N&category=C`.
    static func nearby(_ request: Request, _ snapshot: FeedSnapshot) throws -> Response {
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

        let started = ContinuousClock.now
        let hits = snapshot.spatialIndex.nearest(to: center, radiusMeters: radius, limit: limit) { slot in
            guard let category else { return true }
            return snapshot.poi(inSlot: slot)?.isInCategory(category) ?? false
        }
        var json = JSONWriter(capacity: 64 + hits.count * 320)
        json.beginObject()
        json.key("pois")
        json.beginArray()
        for hit in hits {
            guard let listing = snapshot.poi(inSlot: hit.slot) else { continue }
            var bearing = Geo.initialBearingDegrees(center, hit.coordinate).rounded(places: 1)
            if bearing >= 360 { bearing = 0 }
            json.beginObject()
            json.key("bearingDegrees"); json.number(bearing)
            json.key("distanceMeters"); json.number(hit.distanceMeters.rounded(places: 1))
            listing.writeListingMembers(to: &json)
            json.endObject()
        }
        json.endArray()
        json.endObject()
        return DynamicResponse.make(json.bytes, contentType: MediaTypes.json, request: request,
                                    extraHeaders: [.serverTiming: Self.serverTiming("index", since: started)])
    }

    // MARK: search

    /// `GET /v1/search?q=TEXT&limit=N`: tours and POIs whose name, summary or buildings contain TEXT.
    static func search(_ request: Request, _ snapshot: FeedSnapshot) throws -> Response {
        let query = try QueryParameters(request.uri.query)
        let text = query["q"] ?? ""
        let folded = TextFolding.fold(text)
        guard !folded.isEmpty, text.count <= Self.maxQueryCharacters else {
            throw Problem.badRequest("q is required: the text to look for, 1 to \(Self.maxQueryCharacters) characters")
        }
        let limit = try query.int("limit", in: 1...Self.maxSearchLimit, default: 20)

        let started = ContinuousClock.now
        let tourSlots = snapshot.tourTextIndex.search(folded: folded, limit: limit)
        let poiSlots = snapshot.poiTextIndex.search(folded: folded, limit: limit)
        var json = JSONWriter(capacity: 64 + (tourSlots.count + poiSlots.count) * 320)
        json.beginObject()
        json.key("pois")
        json.beginArray()
        for slot in poiSlots {
            guard let listing = snapshot.poi(inSlot: slot) else { continue }
            json.beginObject()
            listing.writeListingMembers(to: &json)
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
        let milliseconds = elapsed.seconds * 1_000
        return "\(name);dur=\(String(format: "%.3f", milliseconds))"
    }
}
