import Foundation
import HTTPTypes
import Hummingbird
import Shared

/// One route of the feed's API (DESIGN.md "Feed API"), declared once in `FeedAPI.routes`: its method, its
/// path, what answers it and its OpenAPI operation. The router's registrations (`FeedAPI.register`), the
/// pipeline's matching (`PipelineResponder`), the `405` answers (`MethodNotAllowedMiddleware`), the request
/// metrics' route names and the OpenAPI document's `paths` (`OpenAPIDocument`) all come from that table.
struct FeedRoute: Sendable {
    enum Handler: Sendable {
        /// A stored response, looked up in the snapshot by the path's `{id}` (empty when it has none) and the answer's
        /// language (which routes answering in one language ignore); a miss throws the route's problem. The same lookup
        /// serves the pipeline (which leaves misses to the router, for their problem+json) and the router.
        case stored(@Sendable (_ snapshot: FeedSnapshot, _ id: Substring, _ language: ContentLanguage) throws -> RenderedResource)
        /// Worked out per request, by the router only (nearby, browse, search, the records without stored answers),
        /// given the path's parameter (empty when it has none) as the router matched it.
        case computed(@Sendable (_ request: Request, _ parameter: Substring, _ snapshot: FeedSnapshot, _ site: FeedSite) throws -> Response)
        /// `GET /v1/media/{sha256}` (`MediaRoutes`), which may wait for the media store on a file's first request.
        case media
        /// `GET /v1/tours/{id}/bundle` (`BundleRoutes`), whose zip reads the media store.
        case bundle
        /// `POST /v1/events` (`EventRoutes`; the pipeline answers its common shape through the same `EventIngest`).
        case events
        /// `/health`, `/ready`, `/metrics`, which `ServiceRuntime.makeRouter` registers for every service.
        case operational
    }

    let method: HTTPRequest.Method
    /// The path as OpenAPI and Hummingbird's router both write it: `/v1/tours/{id}`.
    let path: String
    let handler: Handler
    /// The OpenAPI operation object, JSON.
    let operation: String
    let template: PathTemplate
    /// A `.stored` route answering in the request's language (DESIGN.md "Languages"); the others answer in one and leave
    /// `lang` and `Accept-Language` unread.
    let followsLanguage: Bool

    init(_ method: HTTPRequest.Method, _ path: String, _ handler: Handler, followsLanguage: Bool = false, operation: String) {
        self.method = method
        self.path = path
        self.handler = handler
        self.followsLanguage = followsLanguage
        self.operation = operation
        template = PathTemplate(path)
    }
}

enum FeedAPI {
    static let routes: [FeedRoute] = [
        FeedRoute(.get, "/v1/tours", .stored { snapshot, _, language in snapshot.tourList(language) }, followsLanguage: true, operation: #"""
            {"operationId": "listTours", "summary": "Published tours, by name", "parameters": [\#(languageParameters)],
             "responses": {"200": \#(ok("The published tours", "application/json", schema: "TourList")), "304": \#(notModified), "400": \#(badRequest)}}
            """#),
        FeedRoute(.get, "/v1/tours/{id}", .stored { snapshot, id, language in try FeedRoutes.tour(id, in: snapshot).detail(language) }, followsLanguage: true,
                  operation: oneResource("getTour", "A published tour with its stops in walking order, their bounding box and the walking distance along them", parameter: tourId + ", " + languageParameters, ok: ok("The tour", "application/json", schema: "Tour"))),
        FeedRoute(.get, "/v1/tours/{id}/bundle", .bundle, operation: #"""
            {"operationId": "getTourBundle",
             "summary": "A published tour for offline use: the tour, its stops in full and their pages as the single reads give them, and the manifest of the library files they use; with media=1 a zip holding bundle.json and media/{sha256} for each file",
             "parameters": [\#(tourId), \#(languageParameters),
               {"name": "media", "in": "query", "description": "1 or true: a zip with the media files", "schema": {"type": "string", "enum": ["0", "1", "true", "false"]}}],
             "responses": {"200": {"description": "The bundle", "headers": {"ETag": {"$ref": "#/components/headers/ETag"}, "Cache-Control": {"$ref": "#/components/headers/CacheControl"}},
                                   "content": {"application/json": {"schema": {"$ref": "#/components/schemas/TourBundle"}}, "application/zip": {"schema": {"type": "string", "format": "binary"}}}},
                           "304": \#(notModified), "400": \#(badRequest), "404": \#(notFound), "503": \#(problem("The media store did not answer", retryAfter: true))}}
            """#),
        FeedRoute(.get, "/v1/pois", .computed(FeedRoutes.pois), operation: #"""
            {"operationId": "nearbyPois",
             "summary": "With near: POIs within a radius of a point, nearest first, with great-circle distance (R = 6371008.8 m) and initial bearing. Without: the POIs on the feed in name order, a page at a time",
             "parameters": [\#(languageParameters),
               {"name": "near", "in": "query", "description": "LAT,LON in decimal degrees; without it the POIs are browsed by name",
                "schema": {"type": "string", "pattern": "\#(OpenAPIDocument.jsonEscaped(OpenAPIDocument.nearPattern))"}, "example": "34.2261,-77.8767"},
               {"name": "radius", "in": "query", "description": "Metres (with near)",
                "schema": {"type": "number", "minimum": 0, "maximum": \#(Int(FeedRoutes.maxNearbyRadiusMeters)), "default": 1000}},
               {"name": "limit", "in": "query", "description": "Default 20 with near, 50 browsing",
                "schema": {"type": "integer", "minimum": 1, "maximum": \#(FeedRoutes.maxNearbyLimit)}},
               {"name": "category", "in": "query", "description": "A category path; matches it and its subcategories (Shop matches Shop/Fashion), case- and accent-insensitive",
                "schema": {"type": "string", "minLength": 1, "maxLength": \#(FeedRoutes.maxQueryCharacters)}},
               {"name": "bbox", "in": "query", "description": "Browsing and near: only the POIs inside two corners LAT,LON,LAT,LON in decimal degrees, either order, edges included",
                "schema": {"type": "string", "pattern": "\#(OpenAPIDocument.jsonEscaped(OpenAPIDocument.bboxPattern))"}, "example": "34.22,-77.88,34.23,-77.87"},
               {"name": "openNow", "in": "query", "description": "Browsing and near: true for only the POIs whose opening hours say open now, in the site's time zone",
                "schema": {"type": "boolean"}},
               {"name": "cursor", "in": "query", "description": "Browsing: the nextCursor of the page before (near answers one page: a cursor changes nothing there)",
                "schema": {"type": "string", "pattern": "^[A-Za-z0-9_-]{22,4096}$"}}
             ],
             "responses": {"200": \#(ok("Nearby POIs, or a page of POIs by name", "application/json", schema: "PoiQueryResult")),
                           "304": \#(notModified), "400": \#(badRequest)}}
            """#),
        FeedRoute(.get, "/v1/pois/{id}", .stored { snapshot, id, language in try FeedRoutes.poi(id, in: snapshot).detail(language) }, followsLanguage: true,
                  operation: oneResource("getPoi", "A visible POI in full, with the published tours that stop there", parameter: poiId + ", " + languageParameters, ok: ok("The POI", "application/json", schema: "Poi"))),
        FeedRoute(.get, "/v1/pois/{id}/page", .stored { snapshot, id, language in try FeedRoutes.poi(id, in: snapshot).page(language) }, followsLanguage: true,
                  operation: oneResource("getPoiPage", "A small mobile HTML page about the POI, for the app's embedded browser", parameter: poiId + ", " + languageParameters, ok: ok("The page", "text/html"))),
        FeedRoute(.get, "/v1/pois/{id}/qr.svg", .computed(FeedRoutes.poiQRCode),
                  operation: oneResource("getPoiQRCode", "The QR code of the POI's link (its phone page, ?src=qr), to print at the stop", parameter: poiId, ok: ok("The code", "image/svg+xml"))),
        FeedRoute(.get, "/v1/tours/{id}/qr.svg", .computed(FeedRoutes.tourQRCode),
                  operation: oneResource("getTourQRCode", "The QR code of the tour's link (?src=qr), for the app", parameter: tourId, ok: ok("The code", "image/svg+xml"))),
        FeedRoute(.get, "/v1/media/{sha256}", .media,
                  operation: #"{"operationId": "getMedia", "summary": "A media library file's bytes (?w= picks an image's narrowest variant at least that wide); one byte range gives 206", "parameters": [\#(mediaHash), {"name": "w", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 1, "maximum": 100000}}, {"name": "Range", "in": "header", "required": false, "schema": {"type": "string"}, "example": "bytes=0-1023"}], "responses": {"200": \#(ok("The file", "application/octet-stream")), "206": {"description": "The requested byte range", "content": {"application/octet-stream": {"schema": {"type": "string"}}}}, "304": \#(notModified), "400": \#(badRequest), "404": \#(notFound), "416": \#(problem("The range is not within the file")), "503": \#(problem("The media store did not answer", retryAfter: true))}}"#),
        FeedRoute(.get, "/v1/search", .computed(FeedRoutes.search), operation: #"""
            {"operationId": "search",
             "summary": "Tours and POIs whose name, summary or buildings contain the text, calendar events whose title, summary or place do, people whose name, role, department or interests do, and pages whose title, summary or text do, case- and accent-insensitive, by name",
             "parameters": [\#(languageParameters),
               {"name": "q", "in": "query", "required": true, "schema": {"type": "string", "minLength": 1, "maxLength": \#(FeedRoutes.maxQueryCharacters)}, "example": "hall"},
               {"name": "limit", "in": "query", "description": "At most this many tours and this many POIs",
                "schema": {"type": "integer", "minimum": 1, "maximum": \#(FeedRoutes.maxSearchLimit), "default": 20}}
             ],
             "responses": {"200": \#(ok("Matches", "application/json", schema: "SearchResult")), "304": \#(notModified), "400": \#(badRequest)}}
            """#),
        FeedRoute(.get, "/v1/changes", .computed(ChangesRoutes.changes), operation: #"""
            {"operationId": "listChanges",
             "summary": "What changed on the feed since a cursor, for phones that keep tours offline: each entity whose place on the feed changed (deleted: gone from it), once, oldest change first; without since, or with a cursor older than this instance's horizon, reset and everything on the feed",
             "parameters": [
               {"name": "since", "in": "query", "description": "The cursor of an earlier answer",
                "schema": {"type": "string", "pattern": "\#(OpenAPIDocument.jsonEscaped(ChangesCursor.pattern))"}}
             ],
             "responses": {"200": \#(ok("The changes", "application/json", schema: "Changes")), "304": \#(notModified), "400": \#(badRequest)}}
            """#),
        FeedRoute(.get, "/v1/categories", .stored { snapshot, _, language in snapshot.categoryTree(language) }, followsLanguage: true,
                  operation: #"""
            {"operationId": "categoryTree",
             "summary": "The category tree, each level by name in the answer's language (paths stay in the site's: they are what POIs and filters name), with how many POIs on the feed are in each category or below it",
             "parameters": [\#(languageParameters)],
             "responses": {"200": \#(ok("The tree", "application/json", schema: "CategoryTree")), "304": \#(notModified), "400": \#(badRequest)}}
            """#),
        FeedRoute(.get, "/v1/calendar", .computed(CalendarRoutes.occurrences), operation: #"""
            {"operationId": "calendarOccurrences",
             "summary": "Occurrences of published calendar events overlapping a range of days in the site's time zone, by start",
             "parameters": [
               {"name": "from", "in": "query", "description": "First day, YYYY-MM-DD; default today", "schema": {"type": "string", "format": "date"}},
               {"name": "to", "in": "query", "description": "Last day, YYYY-MM-DD; default 30 days after from. A longer range than \#(CalendarRoutes.maxDays) days is answered for its first \#(CalendarRoutes.maxDays) (the answer's to says which); one ending before from is empty",
                "schema": {"type": "string", "format": "date"}},
               {"name": "category", "in": "query", "description": "A category path; matches it and its subcategories",
                "schema": {"type": "string", "minLength": 1, "maxLength": \#(FeedRoutes.maxQueryCharacters)}}
             ],
             "responses": {"200": \#(ok("Occurrences", "application/json", schema: "CalendarOccurrences")), "304": \#(notModified), "400": \#(badRequest)}}
            """#),
        FeedRoute(.get, "/v1/calendar.ics", .stored { snapshot, _, language in snapshot.calendarFile(language) }, followsLanguage: true,
                  operation: #"""
            {"operationId": "calendarFile", "summary": "The published calendar as iCalendar (RFC 5545), for calendar apps to subscribe to (?lang=es for a calendar in Spanish: apps subscribing send no Accept-Language)",
             "parameters": [\#(languageParameters)],
             "responses": {"200": \#(ok("The calendar", "text/calendar")), "304": \#(notModified), "400": \#(badRequest)}}
            """#),
        FeedRoute(.get, "/v1/calendar/{id}", .computed(CalendarRoutes.entry),
                  operation: oneResource("getCalendarEvent", "A published calendar event with its next occurrences", parameter: uuidId, ok: ok("The event", "application/json", schema: "CalendarEvent"))),
        FeedRoute(.get, "/v1/people", .computed(PeopleRoutes.list), operation: #"""
            {"operationId": "listPeople",
             "summary": "The published people directory in name order (case- and accent-insensitive), or those matching q",
             "parameters": [
               {"name": "q", "in": "query", "description": "Text in a name, role, department or interest", "schema": {"type": "string", "minLength": 1, "maxLength": \#(FeedRoutes.maxQueryCharacters)}},
               {"name": "department", "in": "query", "description": "A department, case- and accent-insensitive", "schema": {"type": "string", "minLength": 1, "maxLength": \#(FeedRoutes.maxQueryCharacters)}},
               {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": \#(PeopleRoutes.maxLimit), "default": 100}},
               {"name": "offset", "in": "query", "schema": {"type": "integer", "minimum": 0, "maximum": 1000000, "default": 0}}
             ],
             "responses": {"200": \#(ok("People", "application/json", schema: "PeopleResult")), "304": \#(notModified), "400": \#(badRequest)}}
            """#),
        FeedRoute(.get, "/v1/people/{id}", .computed(PeopleRoutes.entry),
                  operation: oneResource("getPerson", "A published entry of the people directory", parameter: uuidId, ok: ok("The person", "application/json", schema: "Person"))),
        FeedRoute(.get, "/v1/pages", .computed(PageRoutes.list), operation: #"""
            {"operationId": "listPages", "summary": "The published content pages in order (About, Research, …), without their text",
             "responses": {"200": \#(ok("Pages", "application/json", schema: "PageList")), "304": \#(notModified)}}
            """#),
        FeedRoute(.get, "/v1/pages/{slug}", .computed(PageRoutes.page),
                  operation: oneResource("getPage", "A published content page with its text as HTML (Markdown rendered, HTML in it shown as text)", parameter: pageSlug, ok: ok("The page", "application/json", schema: "Page"))),
        FeedRoute(.get, "/v1/pages/{slug}/page", .computed(PageRoutes.phonePage),
                  operation: oneResource("getPagePage", "A published content page as a small HTML document for the app's embedded browser", parameter: pageSlug, ok: ok("The page", "text/html"))),
        FeedRoute(.get, "/v1/featured", .computed(FeaturedRoutes.list), operation: #"""
            {"operationId": "listFeatured",
             "summary": "The home screen's featured tours, POIs, calendar events and pages, in order, each with an image and its description",
             "responses": {"200": \#(ok("Featured items", "application/json", schema: "FeaturedList")), "304": \#(notModified)}}
            """#),
        FeedRoute(.get, "/v1/featured/{id}", .computed(FeaturedRoutes.entry),
                  operation: oneResource("getFeatured", "One featured item, by its featuredId, as the list shows it", parameter: uuidId, ok: ok("The item", "application/json", schema: "FeaturedItem"))),
        FeedRoute(.get, "/v1/legacy/tours.xml", .stored { snapshot, _, _ in snapshot.legacyTourList }, operation: #"""
            {"operationId": "legacyTours",
             "summary": "The original iTour app's available-tours feed (AvTours): channel/name/description/item with id, title, summary",
             "responses": {"200": \#(ok("The feed", "application/xml")), "304": \#(notModified)}}
            """#),
        FeedRoute(.get, "/v1/legacy/tours/{id}/pois.xml", .stored { snapshot, id, _ in try FeedRoutes.legacyTour(id, in: snapshot).legacyPois },
                  operation: #"""
            {"operationId": "legacyTourPois",
             "summary": "The original iTour app's POI feed of one tour: items with poiID, title, summary, latitude, longitude",
             "parameters": [{"name": "id", "in": "path", "required": true, "description": "The id tours.xml gives (the legacy number, or the UUID of a tour without one)",
                             "schema": {"type": "string", "minLength": 1, "maxLength": 100}, "example": "11"}],
             "responses": {"200": \#(ok("The feed", "application/xml")), "304": \#(notModified), "404": \#(notFound)}}
            """#),
        FeedRoute(.post, EventsEndpoint.path, .events, operation: #"""
            {"operationId": "postEvents", "summary": "Report tracking events",
             "description": "At most \#(EventBatch.maxEvents) events and 1 MiB per batch. Each event is checked on its own (see the TrackingEvent schema): bad ones are rejected with their index and reason, the rest are accepted. 202 comes only after the broker stored the accepted events. Each device may send FEED_EVENTS_PER_MINUTE_PER_DEVICE events per minute (default 600), and each client address FEED_EVENTS_PER_MINUTE_PER_CLIENT (default 60000; every element of a batch counts, and every batch at least one).",
             "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/EventBatch"}}}},
             "responses": {
               "202": {"description": "The broker has the accepted events",
                       "content": {"application/json": {"schema": {"$ref": "#/components/schemas/EventBatchResult"}}}},
               "400": \#(badRequest),
               "413": \#(problem("The body is over 1 MiB")),
               "415": \#(problem("The body is not JSON")),
               "429": \#(problem("The client address or a device in the batch is over its rate; nothing was accepted", retryAfter: true)),
               "503": \#(problem("The broker is unreachable; nothing was accepted", retryAfter: true))
             }}
            """#),
        FeedRoute(.get, "/openapi.json", .stored { _, _, _ in OpenAPIDocument.resource }, operation: #"""
            {"operationId": "openapi", "summary": "This document",
             "responses": {"200": \#(ok("OpenAPI 3.1", "application/json")), "304": \#(notModified)}}
            """#),
        FeedRoute(.get, "/health", .operational, operation: #"""
            {"operationId": "health", "summary": "The process is alive",
             "responses": {"200": {"description": "Alive", "content": {"application/json": {"schema": {"type": "object", "required": ["status"], "properties": {"status": {"const": "ok"}}}}}}}}
            """#),
        FeedRoute(.get, "/ready", .operational, operation: #"""
            {"operationId": "ready", "summary": "Broker reachable and the catalog projection loaded",
             "responses": {
               "200": {"description": "Ready", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Readiness"}}}},
               "503": {"description": "Not ready", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Readiness"}}}}
             }}
            """#),
        FeedRoute(.get, "/metrics", .operational, operation: #"""
            {"operationId": "metrics", "summary": "Prometheus metrics",
             "responses": {"200": {"description": "Prometheus text format", "content": {"text/plain": {"schema": {"type": "string"}}}}}}
            """#),
    ]

    /// Registers every route the feed itself answers on the router (the operational ones come with
    /// `ServiceRuntime.makeRouter`), and `405` for a known path asked with another method.
    static func register(on router: Router<FeedRequestContext>, projection: CatalogProjection, ingest: EventIngest, media: MediaRoutes,
                         bundles: BundleRoutes, site: FeedSite, proxies: TrustedProxies = .none) {
        router.add(middleware: MethodNotAllowedMiddleware(routes))
        for route in routes {
            switch route.handler {
            case .stored(let lookup):
                router.on(RouterPath(route.path), method: route.method) { request, context in
                    let snapshot = projection.snapshot
                    let language = route.followsLanguage ? try LanguageNegotiation.choose(request, among: snapshot.languages) : .site(of: snapshot.languages)
                    return try lookup(snapshot, route.template.parameter(in: context), language).response(to: request)
                }
            case .computed(let answer):
                router.on(RouterPath(route.path), method: route.method) { request, context in
                    try answer(request, route.template.parameter(in: context), projection.snapshot, site)
                }
            case .media:
                media.register(route, on: router, projection: projection)
            case .bundle:
                bundles.register(route, on: router, projection: projection)
            case .events:
                EventRoutes(ingest: ingest, proxies: proxies).register(route, on: router)
            case .operational:
                break
            }
        }
    }

    // The OpenAPI response objects the operations share.

    private static func ok(_ description: String, _ contentType: String, schema: String? = nil) -> String {
        let schema = schema.map { ##"{"$ref": "#/components/schemas/\##($0)"}"## }
            ?? (contentType == "application/json" ? #"{"type": "object"}"# : #"{"type": "string"}"#)
        return ##"{"description": "\##(description)", "headers": {"ETag": {"$ref": "#/components/headers/ETag"}, "Cache-Control": {"$ref": "#/components/headers/CacheControl"}}, "content": {"\##(contentType)": {"schema": \##(schema)}}}"##
    }

    private static func problem(_ description: String, retryAfter: Bool = false) -> String {
        let headers = retryAfter ? ##""headers": {"Retry-After": {"$ref": "#/components/headers/RetryAfter"}}, "## : ""
        return ##"{"description": "\##(description)", \##(headers)"content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}}"##
    }

    /// An operation answering one resource named by the path's parameter: it, unchanged, a malformed name, or none.
    private static func oneResource(_ operationId: String, _ summary: String, parameter: String, ok: String) -> String {
        #"{"operationId": "\#(operationId)", "summary": "\#(summary)", "parameters": [\#(parameter)], "#
            + #""responses": {"200": \#(ok), "304": \#(notModified), "400": \#(badRequest), "404": \#(notFound)}}"#
    }

    // The path parameters of those operations.
    private static let tourId = ##"{"$ref": "#/components/parameters/TourId"}"##
    private static let poiId = ##"{"$ref": "#/components/parameters/PoiId"}"##
    private static let uuidId = #"{"name": "id", "in": "path", "required": true, "schema": {"type": "string", "format": "uuid"}}"#
    private static let mediaHash = #"{"name": "sha256", "in": "path", "required": true, "schema": {"type": "string", "pattern": "^[0-9a-f]{64}$"}}"#
    private static let pageSlug = #"{"name": "slug", "in": "path", "required": true, "schema": {"type": "string", "pattern": "^[a-z0-9-]{1,100}$"}, "example": "about"}"#

    /// `?lang=` and `Accept-Language`, of the routes that answer per language (DESIGN.md "Languages").
    private static let languageParameters = ##"{"$ref": "#/components/parameters/Lang"}, {"$ref": "#/components/parameters/AcceptLanguage"}"##

    private static let notModified = ##"{"$ref": "#/components/responses/NotModified"}"##
    private static let badRequest = ##"{"$ref": "#/components/responses/BadRequest"}"##
    private static let notFound = ##"{"$ref": "#/components/responses/NotFound"}"##
}

/// A route's path with at most one `{parameter}`, matched on a request path's bytes (the pipeline does this
/// for every request): the literal text before the parameter and after it; a parameter is one non-empty
/// segment without `%` (percent-encoded ids are left to the router, which decodes them).
struct PathTemplate: Sendable {
    let prefix: [UInt8]
    /// Nil when the path has no parameter.
    let suffix: [UInt8]?
    /// The parameter's name (`id` in `/v1/tours/{id}`), as the router's parameters know it; nil without one.
    let parameterName: String?

    init(_ path: String) {
        let bytes = Array(path.utf8)
        if let open = bytes.firstIndex(of: UInt8(ascii: "{")), let close = bytes[open...].firstIndex(of: UInt8(ascii: "}")) {
            prefix = Array(bytes[..<open])
            suffix = Array(bytes[(close + 1)...])
            parameterName = String(decoding: bytes[(open + 1)..<close], as: UTF8.self)
        } else {
            prefix = bytes
            suffix = nil
            parameterName = nil
        }
    }

    /// The parameter the router matched (the path's text, not percent-decoded), or empty when the path has none.
    func parameter(in context: some RequestContext) -> Substring {
        guard let parameterName, let value = context.parameters.get(parameterName) else { return "" }
        return Substring(value)
    }

    /// The parameter's byte range in `path` (empty without one) when `path` matches, else nil.
    func match(_ path: UnsafeBufferPointer<UInt8>) -> Range<Int>? {
        guard let suffix else { return Self.equal(path, 0, prefix) && path.count == prefix.count ? 0..<0 : nil }
        let end = path.count - suffix.count
        guard end > prefix.count, Self.equal(path, 0, prefix), Self.equal(path, end, suffix) else { return nil }
        for index in prefix.count..<end where path[index] == UInt8(ascii: "/") || path[index] == UInt8(ascii: "%") { return nil }
        return prefix.count..<end
    }

    /// Whether `path` holds `text` at `offset`.
    private static func equal(_ path: UnsafeBufferPointer<UInt8>, _ offset: Int, _ text: [UInt8]) -> Bool {
        guard offset + text.count <= path.count else { return false }
        guard !text.isEmpty, let base = path.baseAddress else { return true }
        return text.withUnsafeBufferPointer { memcmp(base + offset, $0.baseAddress!, text.count) == 0 }
    }
}
