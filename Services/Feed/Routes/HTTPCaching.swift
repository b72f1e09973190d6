import Foundation
import HTTPTypes
import Hummingbird

extension RenderedResource {
    /// The stored variant the request asks for: `304` when its `If-None-Match` names this content,
    /// the gzip copy when it accepts gzip, else the identity bytes.
    func response(to request: Request) -> Response {
        let useGzip = gzip != nil && ContentNegotiation.acceptsGzip(request.headers[.acceptEncoding])
        if let condition = request.headers[.ifNoneMatch], ContentNegotiation.ifNoneMatch(condition, matchesAnyOf: [etag, gzipETag]) {
            return Response(status: .notModified, headers: headers(gzip: useGzip, notModified: true))
        }
        return Response(status: .ok, headers: headers(gzip: useGzip, notModified: false),
                        body: ResponseBody(byteBuffer: useGzip ? gzip! : identity))
    }
}

/// Responses computed per request (nearby, search): the same validators and compression as the stored
/// ones, worked out on the spot.
enum DynamicResponse {
    static func make(_ bytes: [UInt8], contentType: String, request: Request, extraHeaders: HTTPFields = [:],
                     language: ContentLanguage? = nil) -> Response {
        let hash = ContentHash.fnv1a64(bytes)
        var headers = extraHeaders
        headers[.cacheControl] = CachePolicy.content
        headers[.vary] = language == nil ? "Accept-Encoding" : "Accept-Encoding, Accept-Language"
        if let language { headers[.contentLanguage] = language.tag }
        let etag = "\"\(hash)\"", gzipETag = "\"\(hash)-gzip\""
        let compressed = bytes.count >= RenderedResource.minimumGzipBytes && ContentNegotiation.acceptsGzip(request.headers[.acceptEncoding])
            ? GzipCompressor().compress(bytes).flatMap { $0.count < bytes.count ? $0 : nil } : nil
        headers[.eTag] = compressed == nil ? etag : gzipETag
        if let condition = request.headers[.ifNoneMatch], ContentNegotiation.ifNoneMatch(condition, matchesAnyOf: [etag, gzipETag]) {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = contentType
        if let compressed {
            headers[.contentEncoding] = "gzip"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: compressed)))
        }
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}

/// The parts of RFC 9110 content negotiation and conditional requests the feed honours.
enum ContentNegotiation {
    /// Whether `Accept-Encoding` allows gzip: `gzip`, `x-gzip` or `*` with a q-value above zero.
    static func acceptsGzip(_ header: String?) -> Bool {
        guard let header else { return false }
        var accepted = false
        for item in header.split(separator: ",") {
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let coding = parts.first, coding == "gzip" || coding == "x-gzip" || coding == "*" else { continue }
            let quality = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            // An explicit gzip entry decides over the wildcard.
            if coding == "*" {
                if !header.lowercased().contains("gzip") { accepted = quality > 0 }
            } else {
                return quality > 0
            }
        }
        return accepted
    }

    /// Weak comparison (RFC 9110 13.1.2): `*`, or any listed tag equal to one of ours, `W/` ignored.
    static func ifNoneMatch(_ header: String, matchesAnyOf etags: [String]) -> Bool {
        for item in header.split(separator: ",") {
            var tag = item.trimmingCharacters(in: .whitespaces)
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            if etags.contains(tag) { return true }
        }
        return false
    }
}
