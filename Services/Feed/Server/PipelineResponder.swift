import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import Metrics
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import Shared
import Synchronization
/// Answers, ahead of Hummingbird's router and on the event loop that read them, the requests of
/// `FeedAPI.routes` it can answer without the router: a GET of a `.stored` route whose lookup finds its
/// response (at once), a GET of a whole media file held in memory (no range, no query), and the `.events` route's common shape, a JSON body of known length (once
/// `EventIngest` has the broker's acknowledgement). The router's middleware and the Swift task per request
/// cost more than the work itself: with this the feed keeps up with a static file server, and near the
/// broker's own rate for batches. Anything else — another route or method, a lookup's miss (for its
/// problem+json), a chunked or oversized body, another content type, `Connection: close`, `Expect`, or a
/// request behind one still with the router — goes on untouched to the router, which answers it from the
/// same table. Answers keep the order of their requests: while a batch waits for the broker, or while the
/// client does not take its answers (the channel is not writable), what arrives waits in `held` and reading
/// pauses. Seeing every request part and answer, this handler also keeps the connection's idle timeout
/// (Hummingbird's would see only the router's requests). It sits right after the HTTP/1 decoder
/// (`FeedHTTP1Channel`), so it reads NIO's HTTP/1 head: the conversion to `HTTPRequest` ahead of the router
/// (a Foundation URL parse of every path) is made only for the requests the router answers.
final class PipelineResponder: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// Where the connection is. A request is answered here only while none is with the router.
    private enum State {
        /// Requests go on to the router: `forwarded` of them are not yet answered completely; `reading` is
        /// true between a request's head and its end.
        case routing(forwarded: Int, reading: Bool)
        /// Reading a GET answered here with a stored response, until its end; `started`: when its head arrived.
        case stored(PipelineRoutes.Route, RenderedResource, HTTPRequestHead, started: UInt64)
        /// Reading a GET of a media file answered here from memory, until its end.
        case media(PipelineRoutes.Route, MediaLibrary.File, MediaCache.Cached, HTTPRequestHead, started: UInt64)
        /// Reading a batch answered here, its body as it arrives.
        case batch(PipelineRoutes.Route, HTTPRequestHead, ByteBuffer?)
        /// The batch is with the broker. A close asked for meanwhile (Hummingbird closes a connection it
        /// thinks idle on graceful shutdown) is made once the answer is out: the phone gets its 202.
        case waiting(close: (mode: CloseMode, promise: EventLoopPromise<Void>?)?)
    }

    private let routes: PipelineRoutes
    private let idleTimeout: TimeAmount
    private var state = State.routing(forwarded: 0, reading: false)
    /// What arrived while paused, replayed in order by `resume`.
    private var held = CircularBuffer<NIOAny>()
    /// A read the channel asked for while paused, made once it goes on.
    private var readPending = false
    /// True while `resume` replays (writing an answer can make the channel writable, which calls `resume`).
    private var resuming = false
    /// The handler next to the socket, through which answers made here are written already encoded.
    private var socket: SocketWriter?
    /// The peer's client key (`IPAddress.clientKey`), made at the connection's first batch; nil too while the peer is a
    /// trusted proxy, whose requests each name their client (`TrustedProxies`).
    private var client: String?
    /// When a request part last arrived or an answer was last finished (uptime nanoseconds).
    private var lastActive = DispatchTime.now().uptimeNanoseconds
    private var idleCheck: Scheduled<Void>?
    private var responseTail: ResponseTail
    /// The connection's last `Accept-Language` and the language it chose.
    private var languageMemo = LanguageNegotiation.Memo()

    init(routes: PipelineRoutes, idleTimeout: TimeAmount) {
        self.routes = routes
        self.idleTimeout = idleTimeout
        responseTail = ResponseTail(serverName: routes.serverName)
    }

    private func paused(_ context: ChannelHandlerContext) -> Bool {
        if case .waiting = state { return true }
        return !context.channel.isWritable
    }

    func handlerAdded(context: ChannelHandlerContext) {
        // Answers made here skip the HTTP/1 encoders (converting HTTPResponse to NIO's head type and encoding
        // it cost a tenth of the feed's CPU under GET load): they are written as bytes from the front of the
        // pipeline. Adding a handler fails only on a channel already closed.
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
        if held.isEmpty && !paused(context) {
            read(context: context, data: data)
        } else {
            held.append(data)
            resume(context: context)
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        context.fireChannelWritabilityChanged()
        resume(context: context)
    }

    private func read(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        if case .end = part {} else { lastActive = DispatchTime.now().uptimeNanoseconds }
        if case .body(var bytes) = part, case .batch(let route, let request, var body) = state {
            state = .routing(forwarded: 0, reading: true)  // so the body is not copied on write
            if body == nil { body = bytes } else { body!.writeBuffer(&bytes) }
            state = .batch(route, request, body)
            return
        }
        switch (state, part) {
        case (.routing(let forwarded, _), .head(let request)):
            if forwarded == 0, let answering = answering(request) {
                state = answering
            } else {
                state = .routing(forwarded: forwarded + 1, reading: true)
                context.fireChannelRead(data)
            }
        case (.routing(let forwarded, _), .end):
            state = .routing(forwarded: forwarded, reading: false)
            context.fireChannelRead(data)
        case (.routing, .body):
            context.fireChannelRead(data)
        case (.stored, .body), (.media, .body):
            break  // a GET answered here has no body (checked on its head)
        case (.batch, .body):
            break  // taken above
        case (.stored(let route, let resource, let request, let started), .end):
            state = .routing(forwarded: 0, reading: false)
            respond(context: context, route: route, resource: resource, request: request, started: started)
        case (.media(let route, let file, let cached, let request, let started), .end):
            state = .routing(forwarded: 0, reading: false)
            respond(context: context, route: route, file: file, cached: cached, request: request, started: started)
        case (.batch(let route, let request, let body), .end):
            state = .waiting(close: nil)
            submit(context: context, route: route, request: request, body: body ?? ByteBuffer())
        case (.stored, .head), (.media, .head), (.batch, .head), (.waiting, _):
            // A head before the last request's end, or a part read while waiting: neither happens (the decoder
            // delivers whole requests in order, and nothing is read on while waiting).
            context.fireErrorCaught(ChannelError.inappropriateOperationForState)
        }
    }

    /// What this handler answers of a request, judged on its head; nil passes it to the router. Only HTTP/1.1
    /// requests in origin form that keep the connection open: the router answers the rest.
    private func answering(_ request: HTTPRequestHead) -> State? {
        let fields = request.headers
        guard request.version == .http1_1, request.isKeepAlive, !fields.contains(name: "transfer-encoding"),
              request.uri.utf8.first == UInt8(ascii: "/") else { return nil }
        switch request.method {
        case .GET:
            guard fields.first(name: "content-length") ?? "0" == "0" else { return nil }
            if let (route, resource) = routes.storedResponse(request.uri, acceptLanguage: fields.joined("accept-language"), memo: &languageMemo) { return .stored(route, resource, request, started: lastActive) }
            // A range is the router's to cut (`MediaRoutes`).
            guard !fields.contains(name: "range"), let (route, file, cached) = routes.cachedMedia(request.uri) else { return nil }
            return .media(route, file, cached, request, started: lastActive)
        case .POST:
            // A compressed batch (Content-Encoding) is the route's to inflate.
            guard let route = routes.events, request.uri == route.path, !fields.contains(name: "expect"), !fields.contains(name: "content-encoding"),
                  fields[canonicalForm: "content-length"].count == 1, let length = fields.first(name: "content-length").flatMap({ Int($0) }),
                  length <= EventBatch.maxBytes, let type = fields.joined("content-type"), EventsEndpoint.isJSON(type) else { return nil }
            return .batch(route, request, nil)
        default:
            return nil
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data), case .routing(let forwarded, let reading) = state {
            state = .routing(forwarded: max(0, forwarded - 1), reading: reading)
            lastActive = DispatchTime.now().uptimeNanoseconds
        }
        context.write(data, promise: promise)
    }

    func read(context: ChannelHandlerContext) {
        if paused(context) {
            readPending = true
        } else {
            context.read()
        }
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if case .waiting(nil) = state {
            state = .waiting(close: (mode, promise))
        } else {
            context.close(mode: mode, promise: promise)
        }
    }

    /// Goes on with what was held, in order, while nothing pauses it, then makes the read asked for meanwhile.
    private func resume(context: ChannelHandlerContext) {
        guard !resuming else { return }
        resuming = true
        defer { resuming = false }
        // What goes on to Hummingbird needs a read-complete too: its async channel hands reads over on that.
        let replaying = !held.isEmpty && !paused(context)
        while !paused(context), let data = held.popFirst() {
            read(context: context, data: data)
        }
        if replaying { context.fireChannelReadComplete() }
        if readPending, !paused(context) {
            readPending = false
            context.read()
        }
    }

    private func respond(context: ChannelHandlerContext, route: PipelineRoutes.Route, resource: RenderedResource, request: HTTPRequestHead, started: UInt64) {
        let useGzip = resource.gzip != nil && ContentNegotiation.acceptsGzip(request.headers.joined("accept-encoding"))
        let notModified = request.headers.joined("if-none-match").map {
            ContentNegotiation.ifNoneMatch($0, matchesAnyOf: [resource.etag, resource.gzipETag])
        } ?? false
        write(context: context, request: request, status: notModified ? .notModified : .ok,
              body: notModified ? nil : useGzip ? resource.gzip : resource.identity) { head in
            resource.forEachHeader(gzip: useGzip, notModified: notModified) { Self.writeField($0.rawName, $1, to: &head) }
        }
        (notModified ? route.notModified : route.usual).answered(afterNanoseconds: DispatchTime.now().uptimeNanoseconds - started)
        routes.answered.increment()
    }

    private func respond(context: ChannelHandlerContext, route: PipelineRoutes.Route, file: MediaLibrary.File, cached: MediaCache.Cached,
                         request: HTTPRequestHead, started: UInt64) {
        let notModified = MediaRoutes.isNotModified(file, ifNoneMatch: request.headers.joined("if-none-match"))
        if notModified {
            write(context: context, request: request, status: .notModified, fields: MediaRoutes.validatorHeaders(file), body: nil)
        } else if let path = cached.path, case let descriptor = open(path, O_RDONLY | O_CLOEXEC), descriptor >= 0 {
            // The copy on disk goes by sendfile; the handle closes once the region is written (or the write failed).
            let handle = NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: descriptor)
            let region = FileRegion(fileHandle: handle, readerIndex: 0, endIndex: cached.body.readableBytes)
            var fields = MediaRoutes.headers(file)
            fields[.contentLength] = String(cached.body.readableBytes)
            // Corked, the head and the file's first bytes leave in full segments, as nginx's tcp_nopush sends them.
            let options = context.channel.syncOptions
            try? options?.setOption(Self.cork, value: 1)
            write(context: context, request: request, status: .ok, fields: fields, body: .fileRegion(region)) { try? handle.close() }
            try? options?.setOption(Self.cork, value: 0)
        } else {
            write(context: context, request: request, status: .ok, fields: MediaRoutes.headers(file), body: cached.body)
        }
        (notModified ? route.notModified : route.usual).answered(afterNanoseconds: DispatchTime.now().uptimeNanoseconds - started)
        routes.answered.increment()
    }

    private static let cork = ChannelOptions.Types.SocketOption(level: .tcp, name: NIOBSDSocket.Option(rawValue: TCP_CORK))

    private func submit(context: ChannelHandlerContext, route: PipelineRoutes.Route, request: HTTPRequestHead, body: ByteBuffer) {
        let started = DispatchTime.now().uptimeNanoseconds
        let loop = context.eventLoop
        let handler = NIOLoopBound((self, context), eventLoop: loop)
        let key: String
        if let client {
            key = client
        } else {
            let peer = IPAddress(context.channel.remoteAddress)
            if routes.proxies.trusts(peer) {
                key = routes.proxies.client(peer: peer, forwardedFor: request.headers["x-forwarded-for"])?.clientKey ?? "unknown"
            } else {
                key = peer?.clientKey ?? "unknown"
                client = key
            }
        }
        routes.ingest.submit(body, client: key) { result in
            loop.execute {
                let (self_, context) = handler.value
                self_.answered(context: context, route: route, request: request, result: result, started: started)
            }
        }
    }

    private func answered(context: ChannelHandlerContext, route: PipelineRoutes.Route, request: HTTPRequestHead,
                          result: Result<EventIngest.Outcome, Problem>, started: UInt64) {
        switch result {
        case .success(let outcome):
            write(context: context, request: request, status: .accepted, fields: EventsEndpoint.acceptedHeaders, body: EventsEndpoint.body(outcome))
            lastActive = DispatchTime.now().uptimeNanoseconds
            route.usual.answered(afterNanoseconds: lastActive - started)
        case .failure(let problem):
            write(context: context, request: request, status: problem.status, fields: problem.responseHeaders, body: try? problem.responseBody())
            lastActive = DispatchTime.now().uptimeNanoseconds
            // The route throws this problem, which the middleware counts as a failure.
            route.metrics(problem.status).failed()
        }
        var closing: (mode: CloseMode, promise: EventLoopPromise<Void>?)?
        if case .waiting(let close) = state { closing = close }
        state = .routing(forwarded: 0, reading: false)
        if let closing {
            held.removeAll()
            context.close(mode: closing.mode, promise: closing.promise)
        } else {
            resume(context: context)  // what arrived meanwhile, in order; it may start another wait
        }
    }

    /// The answer, encoded here (status line and header lines from the same `HTTPFields` the router would
    /// send, with the request id, date and server name it adds) and written from the front of the pipeline.
    private func write(context: ChannelHandlerContext, request: HTTPRequestHead, status: HTTPResponse.Status, fields: HTTPFields, body: ByteBuffer?) {
        write(context: context, request: request, status: status, fields: fields, body: body.map(IOData.byteBuffer), written: nil)
    }

    /// `written` runs once the body is written or its write failed.
    private func write(context: ChannelHandlerContext, request: HTTPRequestHead, status: HTTPResponse.Status, fields: HTTPFields, body: IOData?,
                       written: (@Sendable () -> Void)?) {
        write(context: context, request: request, status: status, body: body, written: written) { head in
            var hasContentLength = false
            for field in fields {
                hasContentLength = hasContentLength || field.name == .contentLength
                Self.writeField(field.name.rawName, field.value, to: &head)
            }
            if let body, !hasContentLength { Self.writeField("Content-Length", String(body.readableBytes), to: &head) }
        }
    }

    private func write(context: ChannelHandlerContext, request: HTTPRequestHead, status: HTTPResponse.Status, body: ByteBuffer?,
                       headers: (inout ByteBuffer) -> Void) {
        write(context: context, request: request, status: status, body: body.map(IOData.byteBuffer), written: nil, headers: headers)
    }

    /// `headers` writes the answer's own header lines; the request id, date and server name follow.
    private func write(context: ChannelHandlerContext, request: HTTPRequestHead, status: HTTPResponse.Status, body: IOData?,
                       written: (@Sendable () -> Void)?, headers: (inout ByteBuffer) -> Void) {
        // No writer: the channel is closing (its handlers are being removed), so there is no one to answer.
        guard let socket = socket?.context else {
            written?()
            return
        }
        // A small body goes in the head's buffer: copying it costs less than a second write through the pipeline.
        var inline: ByteBuffer?
        if case .byteBuffer(let bytes) = body, bytes.readableBytes <= Self.inlineBodyBytes, written == nil { inline = bytes }
        var head = context.channel.allocator.buffer(capacity: 384 + (inline?.readableBytes ?? 0))
        switch status.code {
        case 200: head.writeStaticString("HTTP/1.1 200 OK\r\n")
        case 304: head.writeStaticString("HTTP/1.1 304 Not Modified\r\n")
        default: head.writeString("HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\n")
        }
        headers(&head)
        head.writeStaticString("X-Request-Id: ")
        RequestId.write(given: request.headers.joined("x-request-id"), to: &head)
        head.writeStaticString("\r\n")
        head.writeString(responseTail.current())
        if var inline {
            head.writeBuffer(&inline)
            socket.write(NIOAny(IOData.byteBuffer(head)), promise: nil)
        } else if let body {
            socket.write(NIOAny(IOData.byteBuffer(head)), promise: nil)
            let promise = written.map { done in
                let promise = context.eventLoop.makePromise(of: Void.self)
                promise.futureResult.whenComplete { _ in done() }
                return promise
            }
            socket.write(NIOAny(body), promise: promise)
        } else {
            socket.write(NIOAny(IOData.byteBuffer(head)), promise: nil)
            written?()
        }
        socket.flush()
    }

    private static let inlineBodyBytes = 16 * 1024

    /// One header line, in one write to the buffer. Names and values come from `HTTPFields`, which admits no line
    /// breaks in either.
    private static func writeField(_ name: String, _ value: String, to buffer: inout ByteBuffer) {
        var name = name, value = value
        _ = name.withUTF8 { name in
            value.withUTF8 { value in
                buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: name.count + value.count + 4) { out in
                    out.copyMemory(from: UnsafeRawBufferPointer(name))
                    out[name.count] = UInt8(ascii: ":")
                    out[name.count + 1] = UInt8(ascii: " ")
                    UnsafeMutableRawBufferPointer(rebasing: out[(name.count + 2)...]).copyMemory(from: UnsafeRawBufferPointer(value))
                    out[name.count + 2 + value.count] = UInt8(ascii: "\r")
                    out[name.count + 3 + value.count] = UInt8(ascii: "\n")
                    return name.count + value.count + 4
                }
            }
        }
    }

    /// Closes the connection once no request part has arrived for `idleTimeout` while nothing was being
    /// answered, as Hummingbird's `HTTPConnectionStateHandler` does for the router's requests: a request with
    /// the broker or with the router keeps it open, a client that stopped sending does not, nor one that
    /// stopped reading (which stops this handler reading), whatever it left unanswered.
    private func checkIdle(context: ChannelHandlerContext) {
        idleCheck = nil
        guard context.channel.isActive else { return }
        let now = DispatchTime.now().uptimeNanoseconds, timeout = UInt64(idleTimeout.nanoseconds)
        let busy = switch state {
        case .routing(let forwarded, let reading): forwarded > 0 && !reading
        case .waiting: true
        case .stored, .media, .batch: false
        }
        if busy && context.channel.isWritable {
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
}

extension HTTPHeaders {
    /// A field's values as `HTTPFields` gives them (joined by ", "), or nil when it is absent.
    func joined(_ name: String) -> String? {
        var joined: String?
        for value in self[name] { joined = joined.map { "\($0), \(value)" } ?? value }
        return joined
    }
}
