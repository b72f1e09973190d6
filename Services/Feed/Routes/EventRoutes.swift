import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Shared

/// `POST /v1/events` (DESIGN.md "Feed API", "Tracking events"): `202` with what was accepted and what
/// was rejected and why, once the broker has the accepted events. `PipelineResponder` answers the
/// common shape of this request ahead of the router, through the same `EventIngest` and `EventsEndpoint`;
/// the route answers the rest (chunked bodies, a wrong content type or size, pipelined behind another).
struct EventRoutes<Context: RemoteAddressRequestContext> {
    let ingest: EventIngest
    /// Who the client is (`TRUSTED_PROXIES`): the rate limits count by it.
    var proxies = TrustedProxies.none

    /// `route`: its entry in `FeedAPI.routes`.
    func register(_ route: FeedRoute, on router: Router<Context>) {
        router.on(RouterPath(route.path), method: route.method) { request, context -> Response in
            if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > EventBatch.maxBytes { throw EventsEndpoint.tooLarge }
            if let type = request.headers[.contentType], !EventsEndpoint.isJSON(type) {
                throw Problem(.unsupportedMediaType, "send the batch as application/json, not \(QueryParameters.shown(type))")
            }
            let gzip = try EventsEndpoint.isGzip(request.headers[.contentEncoding])
            var request = request
            var body: ByteBuffer
            do {
                body = try await request.collectBody(upTo: EventBatch.maxBytes)
            } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
                throw EventsEndpoint.tooLarge
            }
            if gzip { body = try EventsEndpoint.inflated(body) }
            let outcome = try await ingest.ingest(body, client: proxies.clientKey(peer: context.remoteAddress, request: request))
            return Response(status: .accepted, headers: EventsEndpoint.acceptedHeaders, body: ResponseBody(byteBuffer: EventsEndpoint.body(outcome)))
        }
    }
}

/// The HTTP shape of `POST /v1/events`, for the route and for `PipelineResponder`.
enum EventsEndpoint {
    static let path = "/v1/events"

    static var tooLarge: Problem {
        Problem(.contentTooLarge, "a batch body is at most \(EventBatch.maxBytes) bytes (1 MiB); send fewer events per request")
    }

    static var acceptedHeaders: HTTPFields { [.contentType: MediaTypes.json, .cacheControl: "no-store"] }

    /// The `202` body: `{"accepted": n, "rejected": [{"index": i, "reason": "..."}]}`.
    static func body(_ outcome: EventIngest.Outcome) -> ByteBuffer {
        var json = JSONWriter(capacity: 64 + outcome.rejected.count * 80)
        json.beginObject()
        json.key("accepted"); json.number(outcome.accepted)
        json.key("rejected")
        json.objects(outcome.rejected) { json, rejection in
            json.key("index"); json.number(rejection.index)
            json.key("reason"); json.string(rejection.reason)
        }
        json.endObject()
        return ByteBuffer(bytes: json.bytes)
    }

    /// Whether the batch is gzip-compressed (`Content-Encoding: gzip` or `x-gzip`); none and `identity` are plain, any
    /// other coding is refused (`415`, RFC 9110 §8.4.1). `PipelineResponder` leaves every encoded body to the route.
    static func isGzip(_ contentEncoding: String?) throws -> Bool {
        guard let contentEncoding else { return false }
        switch contentEncoding.trimmingCharacters(in: .whitespaces).lowercased() {
        case "", "identity": return false
        case "gzip", "x-gzip": return true
        default:
            throw Problem(.unsupportedMediaType, "a batch may be sent with Content-Encoding gzip or none, not \(QueryParameters.shown(contentEncoding))")
        }
    }

    /// A gzip batch inflated, at most `EventBatch.maxBytes` as for a plain one.
    static func inflated(_ body: ByteBuffer) throws -> ByteBuffer {
        do {
            return ByteBuffer(bytes: try GzipInflater.read(Array(body.readableBytesView), limit: EventBatch.maxBytes))
        } catch .tooLarge {
            throw Problem(.contentTooLarge, "a batch is at most \(EventBatch.maxBytes) bytes (1 MiB) once inflated; send fewer events per request")
        } catch .notGzip {
            throw Problem(.badRequest, "the body is not valid gzip (Content-Encoding: gzip)")
        }
    }

    /// `application/json` or a `+json` type, any parameters.
    static func isJSON(_ contentType: String) -> Bool {
        // What nearly every phone sends, without splitting and lower-casing.
        if contentType == "application/json" { return true }
        let type = contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        return type == "application/json" || (type.hasPrefix("application/") && type.hasSuffix("+json"))
    }
}
