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
    static var maxBrowseLimit: Int { 200 }
    static var maxQueryCharacters: Int { 200 }

    /// Whether a query text is within `maxQueryCharacters`, counted in code points as the OpenAPI document's `maxLength`
    /// counts them: counted as characters, one letter with thousands of combining marks would pass as one.
    static func isWithinQueryLimit(_ text: String) -> Bool { text.unicodeScalars.count <= maxQueryCharacters }

    static func tour(_ id: Substring, in snapshot: FeedSnapshot) throws -> TourResources {
        let id = try PathParameter.uuid(id, naming: "a tour")
        guard let tour = snapshot.tours[id] else { throw Problem.notFound("no published tour has id \(id.uuidString)") }
        return tour
    }

    static func poi(_ id: Substring, in snapshot: FeedSnapshot) throws -> PoiResources {
        let id = try PathParameter.uuid(id, naming: "a POI")
        guard let poi = snapshot.pois[id] else { throw Problem.notFound("no published POI has id \(id.uuidString)") }
        return poi
    }

    /// `GET /v1/pois/{id}/qr.svg` (DESIGN.md, "QR codes").
    static func poiQRCode(_ request: Request, _ id: Substring, _ snapshot: FeedSnapshot, _ site: FeedSite) throws -> Response {
        let poi = try poi(id, in: snapshot)
        return try qrCode(QRLink.poi(poi.id, feedPublicURL: site.publicURL), request: request)
    }

    /// `GET /v1/tours/{id}/qr.svg`.
    static func tourQRCode(_ request: Request, _ id: Substring, _ snapshot: FeedSnapshot, _ site: FeedSite) throws -> Response {
        let tour = try tour(id, in: snapshot)
        return try qrCode(QRLink.tour(tour.id, feedPublicURL: site.publicURL), request: request)
    }

    private static func qrCode(_ link: String, request: Request) throws -> Response {
        do {
            return DynamicResponse.make(Array(try QRCode(link).svg(title: link).utf8), contentType: "image/svg+xml", request: request)
        } catch {
            // FEED_PUBLIC_URL is checked at start, so a link is never this long; say so rather than fail quietly.
            throw Problem(.internalServerError, "the link \(link) is too long for a QR code (\(error))")
        }
    }

    /// The id tours.xml gave (a legacy number or a UUID), or any published tour's UUID.
    static func legacyTour(_ given: Substring, in snapshot: FeedSnapshot) throws -> TourResources {
        let given = String(given)
        guard let id = snapshot.legacyTourIds[given] ?? UUID(text: given), let tour = snapshot.tours[id] else {
            throw Problem.notFound("no published tour has id \(QueryParameters.shown(given)) (ids come from /v1/legacy/tours.xml)")
        }
        return tour
    }

    /// The answer's language (DESIGN.md "Languages").
    private static func language(_ query: QueryParameters, _ request: Request, _ snapshot: FeedSnapshot) throws -> ContentLanguage {
        try LanguageNegotiation.choose(lang: query["lang"], acceptLanguage: request.headers[.acceptLanguage], among: snapshot.languages)
    }

    // MARK: POIs: nearby and browse

    /// `GET /v1/pois`: nearby with `near`, else browse.
    static func pois(_ request: Request, _: Substring, _ snapshot: FeedSnapshot, _ site: FeedSite) throws -> Response {
        let query = try QueryParameters(request.uri.query)
        return query["near"] == nil ? try browse(query, request, snapshot, site) : try nearby(query, request, snapshot, site)
    }

    /// The folded `category` parameter, nil when absent.
    private static func category(_ query: QueryParameters) throws -> [UInt8]? {
        try query.folded("category", meaning: "category is a category path such as Shop/Fashion")
    }

    /// `GET /v1/pois?category=C&bbox=minLat,minLon,maxLat,maxLon&limit=N&cursor=…` (DESIGN.md, "Places on their own"):
    /// the POIs on the feed in name order, a page at a time.
    static func browse(_ query: QueryParameters, _ request: Request, _ snapshot: FeedSnapshot, _ site: FeedSite) throws -> Response {
        let category = try category(query)
        let box = try query.boundingBox("bbox")
        let openNow = try query.bool("openNow")
        // Nearby's radius means nothing here, but a value out of its range is as wrong as with near.
        _ = try query.double("radius", in: 0...Self.maxNearbyRadiusMeters, default: 0)
        let now = Date()
        let limit = try query.int("limit", in: 1...Self.maxBrowseLimit, default: 50)
        let after = try query["cursor"].map { text in
            guard let position = BrowseCursor.position(text) else {
                throw Problem.badRequest("cursor must be a nextCursor this feed gave, got \"\(QueryParameters.shown(text))\"")
            }
            return position
        }

        let language = try Self.language(query, request, snapshot)
        let started = ContinuousClock.now
        var json = JSONWriter(capacity: 64 + limit * 320)
        json.beginObject()
        json.key("language"); json.string(language.tag)
        json.key("pois")
        json.beginArray()
        var shown = 0
        var last: Int32?
        var more = false
        snapshot.poiTextIndex.walkInNameOrder(after: after) { slot in
            guard let listing = snapshot.poi(inSlot: slot) else { return true }
            if let category, !listing.isInCategory(category) { return true }
            if let box, !box.contains(listing.coordinate) { return true }
            if openNow, !(listing.openingHours?.isOpen(at: now, in: site.timeZone, publicHolidays: site.publicHolidays) ?? false) { return true }
            guard shown < limit else {
                more = true
                return false
            }
            json.beginObject()
            listing.writeListingMembers(to: &json, in: language)
            json.endObject()
            shown += 1
            last = slot
            return true
        }
        json.endArray()
        if more, let last, let position = snapshot.poiTextIndex.namePosition(ofSlot: last) {
            json.key("nextCursor")
            json.string(BrowseCursor.text(position))
        }
        json.endObject()
        return DynamicResponse.make(json.bytes, contentType: MediaTypes.json, request: request,
                                    extraHeaders: [.serverTiming: Self.serverTiming("index", since: started)], language: language)
    }

    /// `GET /v1/pois?near=LAT,LON&radius=M&limit=N&category=C&bbox=…&openNow=true`: every filter browsing has applies
    /// here too, none is ignored. Near answers one page (no `nextCursor`); a cursor is checked as browsing checks it and
    /// changes nothing.
    static func nearby(_ query: QueryParameters, _ request: Request, _ snapshot: FeedSnapshot, _ site: FeedSite) throws -> Response {
        let center = try query.coordinate("near")
        let radius = try query.double("radius", in: 0...Self.maxNearbyRadiusMeters, default: 1_000)
        let limit = try query.int("limit", in: 1...Self.maxNearbyLimit, default: 20)
        let category = try category(query)
        let box = try query.boundingBox("bbox")
        let openNow = try query.bool("openNow")
        if let cursor = query["cursor"], BrowseCursor.position(cursor) == nil {
            throw Problem.badRequest("cursor must be a nextCursor this feed gave, got \"\(QueryParameters.shown(cursor))\"")
        }

        let language = try Self.language(query, request, snapshot)
        let started = ContinuousClock.now
        let now = Date()
        let hits = snapshot.spatialIndex.nearest(to: center, radiusMeters: radius, limit: limit) { slot in
            guard category != nil || box != nil || openNow else { return true }
            guard let listing = snapshot.poi(inSlot: slot) else { return false }
            if let category, !listing.isInCategory(category) { return false }
            if let box, !box.contains(listing.coordinate) { return false }
            return !openNow || (listing.openingHours?.isOpen(at: now, in: site.timeZone, publicHolidays: site.publicHolidays) ?? false)
        }
        var json = JSONWriter(capacity: 64 + hits.count * 320)
        json.beginObject()
        json.key("language"); json.string(language.tag)
        json.key("pois")
        json.beginArray()
        for hit in hits {
            guard let listing = snapshot.poi(inSlot: hit.slot) else { continue }
            var bearing = Geo.initialBearingDegrees(center, hit.coordinate).rounded(places: 1)
            if bearing >= 360 { bearing = 0 }
            json.beginObject()
            json.key("bearingDegrees"); json.number(bearing)
            json.key("distanceMeters"); json.number(hit.distanceMeters.rounded(places: 1))
            listing.writeListingMembers(to: &json, in: language)
            json.endObject()
        }
        json.endArray()
        json.endObject()
        return DynamicResponse.make(json.bytes, contentType: MediaTypes.json, request: request,
                                    extraHeaders: [.serverTiming: Self.serverTiming("index", since: started)], language: language)
    }

    // MARK: search

    /// `GET /v1/search?q=TEXT&limit=N`: tours and POIs whose name, summary or buildings contain TEXT.
    static func search(_ request: Request, _: Substring, _ snapshot: FeedSnapshot, _: FeedSite) throws -> Response {
        let query = try QueryParameters(request.uri.query)
        guard let folded = try query.folded("q", meaning: "q is required: the text to look for") else {
            throw Problem.badRequest("q is required: the text to look for, 1 to \(Self.maxQueryCharacters) characters")
        }
        let limit = try query.int("limit", in: 1...Self.maxSearchLimit, default: 20)
        let language = try Self.language(query, request, snapshot)

        let started = ContinuousClock.now
        let tourSlots = snapshot.tourTextIndex.search(folded: folded, limit: limit)
        let poiSlots = snapshot.poiTextIndex.search(folded: folded, limit: limit)
        let eventSlots = snapshot.calendar.textIndex.search(folded: folded, limit: limit)
        let personSlots = snapshot.people.textIndex.search(folded: folded, limit: limit)
        let pageSlots = snapshot.pages.textIndex.search(folded: folded, limit: limit)
        var json = JSONWriter(capacity: 64 + (tourSlots.count + poiSlots.count) * 320)
        json.beginObject()
        json.key("events")
        json.beginArray()
        let now = Date()
        for slot in eventSlots {
            guard let entry = snapshot.calendar.entry(inSlot: slot), let occurrence = snapshot.calendar.shownOccurrence(of: entry, now: now) else { continue }
            json.beginObject()
            json.key("allDay"); json.bool(entry.content.allDay)
            CalendarRoutes.writeTimes(occurrence, of: entry, to: &json)
            let texts = language.isSite ? nil : entry.content.translated(in: language.tag)
            json.key("eventId"); json.uuid(entry.id)
            json.key("summary"); json.string(texts?["summary"].flatMap { $0.isEmpty ? nil : $0 } ?? entry.content.summary)
            json.key("timeZone"); json.string(entry.content.timeZone)
            json.key("title"); json.string(CalendarRoutes.title(of: entry, in: language))
            json.endObject()
        }
        json.endArray()
        json.key("language"); json.string(language.tag)
        json.key("pages")
        json.objects(pageSlots.compactMap(snapshot.pages.entry(inSlot:))) { json, entry in
            PageRoutes.writeSummary(entry, in: language, of: snapshot.languages, to: &json)
        }
        json.key("people")
        json.objects(personSlots.compactMap(snapshot.people.entry(inSlot:))) { json, entry in
            PeopleRoutes.writeMembers(entry, snapshot, in: language, to: &json)
        }
        json.key("pois")
        json.beginArray()
        for slot in poiSlots {
            guard let listing = snapshot.poi(inSlot: slot) else { continue }
            json.beginObject()
            listing.writeListingMembers(to: &json, in: language)
            json.endObject()
        }
        json.endArray()
        json.key("tours")
        json.beginArray()
        for slot in tourSlots {
            guard let listing = snapshot.tourListing(slot) else { continue }
            json.raw(listing.summaries[language.index])
        }
        json.endArray()
        json.endObject()
        return DynamicResponse.make(json.bytes, contentType: MediaTypes.json, request: request,
                                    extraHeaders: [.serverTiming: Self.serverTiming("index", since: started)], language: language)
    }

    /// `Server-Timing` (W3C) with the in-process time of the index query, so benchmarks and browsers can
    /// tell the index's share of a request from the network's.
    static func serverTiming(_ name: String, since start: ContinuousClock.Instant) -> String {
        // Microseconds written as milliseconds with three decimals, without Foundation's formatter (a twentieth of a
        // nearby query's cost under load).
        let microseconds = max(0, Int(((ContinuousClock.now - start).seconds * 1_000_000).rounded()))
        let fraction = String(microseconds % 1_000)
        return "\(name);dur=\(microseconds / 1_000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }
}

/// The browse's `cursor`: the last POI shown's place in name order, base64url-encoded (folded name, then the
/// id's 16 bytes). Opaque to clients; it stays valid across changes, since it names a place, not an index.
enum BrowseCursor {
    static func text(_ position: TextIndex.NamePosition) -> String {
        var bytes = position.foldedName
        withUnsafeBytes(of: position.id.uuid) { bytes.append(contentsOf: $0) }
        return Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Any base64url text of at least 22 characters (16 bytes) names a place in the order, so a cursor is refused
    /// only when it is malformed: what the OpenAPI pattern says, and no more.
    static func position(_ text: String) -> TextIndex.NamePosition? {
        guard (22...4_096).contains(text.utf8.count) else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count * 3 / 4)
        var bits: UInt32 = 0, count = 0
        for character in text.utf8 {
            let value: UInt8
            switch character {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = character - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = character - UInt8(ascii: "a") + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = character - UInt8(ascii: "0") + 52
            case UInt8(ascii: "-"): value = 62
            case UInt8(ascii: "_"): value = 63
            default: return nil
            }
            bits = bits << 6 | UInt32(value)
            count += 6
            if count >= 8 {
                count -= 8
                bytes.append(UInt8(truncatingIfNeeded: bits >> UInt32(count)))
                bits &= (1 << UInt32(count)) - 1
            }
        }
        guard bytes.count >= 16 else { return nil }
        let name = Array(bytes[..<(bytes.count - 16)])
        let id = bytes[(bytes.count - 16)...].withUnsafeBytes { raw in UUID(uuid: raw.loadUnaligned(as: uuid_t.self)) }
        return TextIndex.NamePosition(foldedName: name, id: id)
    }
}
