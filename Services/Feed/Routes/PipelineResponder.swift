import Foundation
import HTTPTypes
import Hummingbird
import Metrics
import NIOCore
import NIOHTTPTypes
import Shared
import Synchronization

/// Answers the feed's hot requests right in the connection's NIO pipeline, on the event loop that read
/// them, before they reach Hummingbird's router: GETs of stored responses (tours, POIs, POI pages, the
/// legacy feeds, the OpenAPI document), at once, and `POST /v1/events` with a JSON body of known length,
/// once `EventIngest` has the broker's acknowledgement. Profiles of both showed the router, middleware
/// and the Swift concurrency task per request costing more than the work itself (for a batch of events,
/// about a fifth of the feed's CPU); this is how the feed keeps up with a static file server and near
/// the broker's own rate. Anything else — another path or method, an unknown id (for its problem+json
/// 404), a chunked or oversized body, another content type, `Connection: close`, `Expect`, or a request
/// arriving while an earlier one on the same connection is still with Hummingbird — passes through
/// untouched to the router, which answers it as before. Responses keep the order of their requests:
/// while a batch waits for the broker, later requests on the connection wait here (and reading pauses).
/// Reading pauses too while the channel is not writable (a client that does not read its answers), so what
/// is queued for a connection stays near the channel's high-water mark. Seeing every request part and
/// answer, this handler also keeps the connection's idle timeout (Hummingbird's would see only the router's).
final class PipelineResponder: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private enum Answering {
        /// A stored response, its route, and when its head arrived (uptime nanoseconds).
        case stored(StoredResponses.Match, HTTPRequest, started: UInt64)
        /// A batch of events, its body as it arrives.
        case events(HTTPRequest, ByteBuffer?)
    }

    private let lookup: StoredResponses
    private let events: EventIngest
    private let serverName: String
    /// Requests passed on to Hummingbird whose response has not been written completely.
    private var forwardedInFlight = 0
    /// The request being read to be answered here: its parts are kept or swallowed until its end.
    private var answering: Answering?
    /// True while a batch waits for the broker: what arrives meanwhile waits in `held`.
    private var waiting = false
    /// True while the channel is not writable: the client is not taking its answers, so what arrives waits
    /// in `held` and nothing more is read until it is writable again.
    private var unwritable = false
    private var held = CircularBuffer<NIOAny>()
    /// A read the channel asked for while paused, made once it goes on.
    private var readPending = false
    /// True while `resume` replays what was held (writing an answer can make the channel writable again,
    /// which calls `resume` from within).
    private var resuming = false
    /// A close asked for while waiting (Hummingbird closes a connection it thinks idle on graceful
    /// shutdown), made once the answer is out: the phone gets its 202 rather than a reset.
    private var closePending: (mode: CloseMode, promise: EventLoopPromise<Void>?)?
    private var dateCache = HTTPDateCache()
    /// The handler next to the socket, through which answers made here are written already encoded.
    private var socket: SocketWriter?
    /// The peer's `EventIngest.clientKey`, made at the connection's first batch.
    private var client: String?
    /// The connection is closed when no request part arrives for this long while nothing is being answered.
    private let idleTimeout: TimeAmount
    /// When a request part last arrived or an answer was last finished (uptime nanoseconds).
    private var lastActive = DispatchTime.now().uptimeNanoseconds
    /// True between a request's head and its end.
    private var readingRequest = false
    private var idleCheck: Scheduled<Void>?

    init(lookup: StoredResponses, events: EventIngest, serverName: String, idleTimeout: TimeAmount) {
        self.lookup = lookup
        self.events = events
        self.serverName = serverName
        self.idleTimeout = idleTimeout
    }

    private var paused: Bool { waiting || unwritable }

    func handlerAdded(context: ChannelHandlerContext) {
        // Answers made here skip the HTTP/1 encoders (converting HTTPResponse to NIO's head type and
        // encoding it cost a tenth of the feed's CPU under GET load): they are written as bytes from
        // the front of the pipeline. Adding a handler fails only on a channel already closed.
        let writer = SocketWriter()
        do {
            try context.pipeline.syncOperations.addHandler(writer, position: .first)
            socket = writer
        } catch {
            context.close(promise: nil)
        }
        if context.channel.isActive { scheduleIdleCheck(context: context, at: lastActive + UInt64(idleTimeout.nanoseconds)) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        idleCheck?.cancel()
        idleCheck = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        lastActive = DispatchTime.now().uptimeNanoseconds
        scheduleIdleCheck(context: context, at: lastActive + UInt64(idleTimeout.nanoseconds))
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        idleCheck?.cancel()
        idleCheck = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if paused || !held.isEmpty {
            held.append(data)
            if !paused { resume(context: context) }
        } else {
            read(context: context, data: data)
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        unwritable = !context.channel.isWritable
        context.fireChannelWritabilityChanged()
        if !unwritable { resume(context: context) }
    }

    private func read(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            lastActive = DispatchTime.now().uptimeNanoseconds
            readingRequest = true
            if forwardedInFlight == 0, let answer = answer(for: request) {
                answering = answer
                return
            }
            forwardedInFlight += 1
            context.fireChannelRead(data)
        case .body(var part):
            lastActive = DispatchTime.now().uptimeNanoseconds
            switch answering {
            case nil: context.fireChannelRead(data)
            case .stored: break  // a GET answered here has no body (checked on its head)
            case .events(let request, var body):
                answering = nil  // so the body below is not copied on write
                if body == nil { body = part } else { body!.writeBuffer(&part) }
                answering = .events(request, body)
            }
        case .end:
            readingRequest = false
            guard let answer = answering else {
                context.fireChannelRead(data)
                return
            }
            answering = nil
            switch answer {
            case .stored(let match, let request, let started): respond(context: context, match: match, request: request, started: started)
            case .events(let request, let body): submit(context: context, request: request, body: body ?? ByteBuffer())
            }
        }
    }

    /// What this handler answers of a request, judged on its head; nil passes it to the router.
    private func answer(for request: HTTPRequest) -> Answering? {
        let fields = request.headerFields
        guard fields[.connection]?.lowercased().contains("close") != true, fields[.transferEncoding] == nil, let path = request.path else { return nil }
        switch request.method {
        case .get:
            guard fields[.contentLength] ?? "0" == "0", let match = lookup.match(path) else { return nil }
            return .stored(match, request, started: lastActive)
        case .post:
            guard path == EventsEndpoint.path, fields[.expect] == nil, let length = fields[.contentLength].flatMap({ Int($0) }),
                  length <= EventBatch.maxBytes, let type = fields[.contentType], EventsEndpoint.isJSON(type) else { return nil }
            return .events(request, nil)
        default:
            return nil
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            forwardedInFlight = max(0, forwardedInFlight - 1)
            lastActive = DispatchTime.now().uptimeNanoseconds
        }
        context.write(data, promise: promise)
    }

    func read(context: ChannelHandlerContext) {
        if paused {
            readPending = true
        } else {
            context.read()
        }
    }

    /// Goes on with what was held, in order, while nothing pauses it, then makes the read asked for meanwhile.
    private func resume(context: ChannelHandlerContext) {
        guard !resuming else { return }
        resuming = true
        defer { resuming = false }
        // What goes on to Hummingbird needs a read-complete too: its async channel hands reads over on that.
        let replaying = !held.isEmpty
        while !paused, let data = held.popFirst() {
            read(context: context, data: data)
        }
        if replaying { context.fireChannelReadComplete() }
        if !paused, readPending {
            readPending = false
            context.read()
        }
    }

    /// Closes the connection once no request part has arrived for `idleTimeout` while nothing was being
    /// answered, as Hummingbird's `HTTPConnectionStateHandler` does for the router's requests: a request
    /// with the broker or with Hummingbird keeps it open, a client that stopped sending does not, nor one
    /// that stopped reading (which stops this handler reading), whatever it left unanswered.
    private func checkIdle(context: ChannelHandlerContext) {
        idleCheck = nil
        guard context.channel.isActive else { return }
        let now = DispatchTime.now().uptimeNanoseconds, timeout = UInt64(idleTimeout.nanoseconds)
        if !readingRequest && !unwritable && (waiting || forwardedInFlight > 0) {
            scheduleIdleCheck(context: context, at: now + timeout)
        } else if now >= lastActive + timeout {
            context.close(promise: nil)
        } else {
            scheduleIdleCheck(context: context, at: lastActive + timeout)
        }
    }

    private func scheduleIdleCheck(context: ChannelHandlerContext, at deadline: UInt64) {
        guard idleCheck == nil else { return }
        let delay = TimeAmount.nanoseconds(Int64(deadline &- min(deadline, DispatchTime.now().uptimeNanoseconds)))
        idleCheck = context.eventLoop.assumeIsolated().scheduleTask(in: delay) { [self] in
            checkIdle(context: context)
        }
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if waiting, closePending == nil {
            closePending = (mode, promise)
        } else {
            context.close(mode: mode, promise: promise)
        }
    }

    private func respond(context: ChannelHandlerContext, match: StoredResponses.Match, request: HTTPRequest, started: UInt64) {
        let resource = match.resource
        let useGzip = resource.gzip != nil && ContentNegotiation.acceptsGzip(request.headerFields[.acceptEncoding])
        var status = HTTPResponse.Status.ok
        var fields: HTTPFields
        var body: ByteBuffer?
        if let condition = request.headerFields[.ifNoneMatch],
           ContentNegotiation.ifNoneMatch(condition, matchesAnyOf: [resource.etag, resource.gzipETag]) {
            status = .notModified
            fields = useGzip ? resource.gzipNotModifiedHeaders : resource.notModifiedHeaders
        } else if useGzip, let gzip = resource.gzip {
            fields = resource.gzipHeaders
            body = gzip
        } else {
            fields = resource.identityHeaders
            body = resource.identity
        }
        write(context: context, request: request, status: status, fields: fields, body: body)
        lookup.answered.increment()
        match.route.requestMetrics(notModified: status == .notModified).answered(afterNanoseconds: DispatchTime.now().uptimeNanoseconds - started)
    }

    private func submit(context: ChannelHandlerContext, request: HTTPRequest, body: ByteBuffer) {
        waiting = true
        let started = DispatchTime.now().uptimeNanoseconds
        let loop = context.eventLoop
        let handler = NIOLoopBound((self, context), eventLoop: loop)
        if client == nil { client = EventIngest.clientKey(context.channel.remoteAddress) }
        events.submit(body, client: client!) { result in
            loop.execute {
                let (self_, context) = handler.value
                self_.answered(context: context, request: request, result: result, started: started)
            }
        }
    }

    private func answered(context: ChannelHandlerContext, request: HTTPRequest, result: Result<EventIngest.Outcome, Problem>, started: UInt64) {
        switch result {
        case .success(let outcome):
            write(context: context, request: request, status: .accepted, fields: EventsEndpoint.acceptedHeaders, body: EventsEndpoint.body(outcome))
            lastActive = DispatchTime.now().uptimeNanoseconds
            EventsEndpoint.requestMetrics(status: .accepted).answered(afterNanoseconds: lastActive - started)
        case .failure(let problem):
            write(context: context, request: request, status: problem.status, fields: problem.responseHeaders, body: try? problem.responseBody())
            lastActive = DispatchTime.now().uptimeNanoseconds
            // The route throws this problem, which the middleware counts as a failure.
            EventsEndpoint.requestMetrics(status: problem.status).failed()
        }
        waiting = false
        if let (mode, promise) = closePending {
            closePending = nil
            held.removeAll()
            context.close(mode: mode, promise: promise)
            return
        }
        // What arrived meanwhile, in order; it may start another wait.
        resume(context: context)
    }

    private func write(context: ChannelHandlerContext, request: HTTPRequest, status: HTTPResponse.Status, fields: HTTPFields, body: ByteBuffer?) {
        // No writer: the channel is closing (its handlers are being removed), so there is no one to answer.
        guard let socket = socket?.context else { return }
        var head = context.channel.allocator.buffer(capacity: 384)
        head.writeStaticString("HTTP/1.1 ")
        head.writeString(String(status.code))
        head.writeStaticString(" ")
        head.writeString(status.reasonPhrase)
        head.writeStaticString("\r\n")
        var hasContentLength = false
        for field in fields {
            hasContentLength = hasContentLength || field.name == .contentLength
            Self.writeField(field.name.rawName, field.value, to: &head)
        }
        if let body, !hasContentLength { Self.writeField("Content-Length", String(body.readableBytes), to: &head) }
        Self.writeField(HTTPField.Name.xRequestId.rawName, lookup.requestId(given: request.headerFields[.xRequestId]), to: &head)
        Self.writeField("Date", dateCache.current(), to: &head)
        Self.writeField("Server", serverName, to: &head)
        head.writeStaticString("\r\n")
        socket.write(NIOAny(head), promise: nil)
        if let body { socket.write(NIOAny(body), promise: nil) }
        socket.flush()
    }

    /// One header line. Names and values come from `HTTPFields`, which admits no line breaks in either.
    private static func writeField(_ name: String, _ value: String, to buffer: inout ByteBuffer) {
        buffer.writeString(name)
        buffer.writeStaticString(": ")
        buffer.writeString(value)
        buffer.writeStaticString("\r\n")
    }
}

/// Placed first in the pipeline (next to the socket) by `PipelineResponder`, which writes through its
/// context responses it has already encoded. Passes everything else on untouched.
final class SocketWriter: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    private(set) var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }
}

/// What `PipelineResponder` may answer: the projection's stored responses by path, and the
/// OpenAPI document. Shared by every connection's handler.
final class StoredResponses: Sendable {
    private let projection: CatalogProjection
    private let openAPI: RenderedResource
    let answered = Counter(label: "itour_feed_stored_responses_total",
                           help: "GETs the feed answered from its stored responses in the connection's pipeline, ahead of the router.")
    /// Request ids for requests that bring none: a random per-process prefix and a counter.
    private let requestPrefix = String(UInt32.random(in: .min ... .max), radix: 16)
    private let requestCounter = Atomic<UInt64>(0)

    init(projection: CatalogProjection, openAPI: RenderedResource) {
        self.projection = projection
        self.openAPI = openAPI
    }

    /// The router's routes whose answers can be stored ones, as `FeedRoutes` registers them.
    enum Route: CaseIterable, Sendable {
        case openAPI, tourList, legacyTourList, tour, poi, poiPage, legacyPois

        var template: String {
            switch self {
            case .openAPI: "/openapi.json"
            case .tourList: "/v1/tours"
            case .legacyTourList: "/v1/legacy/tours.xml"
            case .tour: "/v1/tours/{id}"
            case .poi: "/v1/pois/{id}"
            case .poiPage: "/v1/pois/{id}/page"
            case .legacyPois: "/v1/legacy/tours/{id}/pois.xml"
            }
        }

        /// The request metrics Hummingbird's `MetricsMiddleware` records for the same route, so the feed's
        /// request metrics (and the admin status page) count what is answered here.
        func requestMetrics(notModified: Bool) -> RouteRequestMetrics {
            (notModified ? Self.notModifiedMetrics : Self.okMetrics)[self]!
        }

        private static let okMetrics = metrics(status: .ok)
        private static let notModifiedMetrics = metrics(status: .notModified)

        private static func metrics(status: HTTPResponse.Status) -> [Route: RouteRequestMetrics] {
            Dictionary(uniqueKeysWithValues: allCases.map { ($0, RouteRequestMetrics(route: $0.template, method: .get, status: status)) })
        }
    }

    struct Match {
        let resource: RenderedResource
        let route: Route
    }

    /// The stored response for a GET of `path` (query ignored, as the router ignores it) and its route,
    /// or nil when the router should answer. Reads the path's bytes without splitting it into strings:
    /// this runs for every request.
    func match(_ path: String) -> Match? {
        var path = path
        return path.withUTF8 { bytes in
            var end = bytes.firstIndex(of: UInt8(ascii: "?")) ?? bytes.count
            guard end <= 160 else { return nil }
            if end > 1 && bytes[end - 1] == UInt8(ascii: "/") { end -= 1 }  // the router ignores a trailing slash too
            let route = UnsafeBufferPointer(rebasing: bytes[0..<end])
            if Self.equals(route, "/openapi.json") { return Match(resource: openAPI, route: .openAPI) }
            let snapshot = projection.snapshot
            if Self.equals(route, "/v1/tours") { return Match(resource: snapshot.tourList, route: .tourList) }
            if Self.equals(route, "/v1/legacy/tours.xml") { return Match(resource: snapshot.legacyTourList, route: .legacyTourList) }
            if let id = Self.uuid(route, after: "/v1/tours/", suffix: "") { return snapshot.tours[id].map { Match(resource: $0.detail, route: .tour) } }
            if let id = Self.uuid(route, after: "/v1/pois/", suffix: "") { return snapshot.pois[id].map { Match(resource: $0.detail, route: .poi) } }
            if let id = Self.uuid(route, after: "/v1/pois/", suffix: "/page") { return snapshot.pois[id].map { Match(resource: $0.page, route: .poiPage) } }
            let prefix: StaticString = "/v1/legacy/tours/", suffix: StaticString = "/pois.xml"
            if Self.starts(route, with: prefix), Self.ends(route, with: suffix), route.count > prefix.utf8CodeUnitCount + suffix.utf8CodeUnitCount {
                let idBytes = UnsafeBufferPointer(rebasing: route[(route.startIndex + prefix.utf8CodeUnitCount)..<(route.endIndex - suffix.utf8CodeUnitCount)])
                guard !idBytes.contains(UInt8(ascii: "/")), !idBytes.contains(UInt8(ascii: "%")) else { return nil }
                let given = String(decoding: idBytes, as: UTF8.self)
                guard let id = snapshot.legacyTourIds[given] ?? UUID(text: given) else { return nil }
                return snapshot.tours[id].map { Match(resource: $0.legacyPois, route: .legacyPois) }
            }
            return nil
        }
    }

    private static func equals(_ bytes: UnsafeBufferPointer<UInt8>, _ text: StaticString) -> Bool {
        bytes.count == text.utf8CodeUnitCount && starts(bytes, with: text)
    }

    private static func starts(_ bytes: UnsafeBufferPointer<UInt8>, with text: StaticString) -> Bool {
        guard bytes.count >= text.utf8CodeUnitCount, let start = bytes.baseAddress else { return false }
        return memcmp(start, text.utf8Start, text.utf8CodeUnitCount) == 0
    }

    private static func ends(_ bytes: UnsafeBufferPointer<UInt8>, with text: StaticString) -> Bool {
        guard bytes.count >= text.utf8CodeUnitCount, let start = bytes.baseAddress else { return false }
        return memcmp(start + bytes.count - text.utf8CodeUnitCount, text.utf8Start, text.utf8CodeUnitCount) == 0
    }

    /// The UUID in `bytes` = `prefix` + 36 characters + `suffix`, any case.
    private static func uuid(_ bytes: UnsafeBufferPointer<UInt8>, after prefix: StaticString, suffix: StaticString) -> UUID? {
        guard bytes.count == prefix.utf8CodeUnitCount + 36 + suffix.utf8CodeUnitCount, starts(bytes, with: prefix), ends(bytes, with: suffix) else { return nil }
        let start = bytes.startIndex + prefix.utf8CodeUnitCount
        return UUID(bytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[start..<(start + 36)])))
    }

    /// The caller's `X-Request-Id` when it is sane (as `RequestIdMiddleware` decides), else a new one.
    func requestId(given: String?) -> String {
        if let given, given.count <= 64, given.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) {
            return given
        }
        let number = requestCounter.wrappingAdd(1, ordering: .relaxed).newValue
        return "\(requestPrefix)-\(String(number, radix: 16))"
    }
}

/// The `Date` header value (IMF-fixdate), made at most once a second.
struct HTTPDateCache {
    private var second = 0
    private var text = ""

    mutating func current() -> String {
        var now = time_t()
        time(&now)
        if Int(now) != second || text.isEmpty {
            second = Int(now)
            var parts = tm()
            gmtime_r(&now, &parts)
            let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"], months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
            func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
            text = "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
                + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
        }
        return text
    }
}
