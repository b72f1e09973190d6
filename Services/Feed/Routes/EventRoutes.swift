import Foundation
import HTTPTypes
import Hummingbird
import Shared

/// `POST /v1/events` (DESIGN.md "Feed API", "Tracking events"): `202` with what was accepted and what
/// was rejected and why, once the broker has the accepted events.
struct EventRoutes<Context: RequestContext> {
    let ingest: EventIngest

    func register(on router: Router<Context>) {
        router.post("/v1/events") { request, context -> Response in
            let tooLarge = Problem(.contentTooLarge, "a batch body is at most \(EventBatch.maxBytes) bytes (1 MiB); send fewer events per request")
            if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > EventBatch.maxBytes { throw tooLarge }
            if let type = request.headers[.contentType], !Self.isJSON(type) {
                throw Problem(.unsupportedMediaType, "send the batch as application/json, not \(QueryParameters.shown(type))")
            }
            var request = request
            let body: ByteBuffer
            do {
                body = try await request.collectBody(upTo: EventBatch.maxBytes)
            } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
                throw tooLarge
            }
            let outcome = try await ingest.ingest(body)
            var json = JSONWriter(capacity: 64 + outcome.rejected.count * 80)
            json.beginObject()
            json.key("accepted"); json.number(outcome.accepted)
            json.key("rejected")
            json.beginArray()
            for rejection in outcome.rejected {
                json.beginObject()
                json.key("index"); json.number(rejection.index)
                json.key("reason"); json.string(rejection.reason)
                json.endObject()
            }
            json.endArray()
            json.endObject()
            return Response(status: .accepted, headers: [.contentType: MediaTypes.json, .cacheControl: "no-store"],
                            body: ResponseBody(byteBuffer: ByteBuffer(bytes: json.bytes)))
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
