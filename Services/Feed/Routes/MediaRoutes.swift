import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Shared

/// `GET /v1/media/{sha256}` (DESIGN.md, "Media library"): a published media file's bytes, immutable under their
/// hash, whole or one byte range.
struct MediaRoutes {
    static let cacheControl = "public, max-age=31536000, immutable"

    let cache: MediaCache
    let logger: Logger

    func register(_ route: FeedRoute, on router: Router<FeedRequestContext>, projection: CatalogProjection) {
        router.on(RouterPath(route.path), method: route.method) { request, context in
            try await answer(request, sha256: context.parameters.get("sha256") ?? "", snapshot: projection.snapshot)
        }
    }

    func answer(_ request: Request, sha256: String, snapshot: FeedSnapshot) async throws -> Response {
        guard MediaHash.isValid(sha256) else {
            throw Problem.badRequest("a media file is named by its SHA-256, 64 lower-case hex digits, got \"\(QueryParameters.shown(sha256))\"")
        }
        let query = try QueryParameters(request.uri.query)
        let width = query.has("w") ? try query.int("w", in: 1...100_000, default: 0) : nil
        guard let file = snapshot.media.file(sha256, width: width) else {
            throw Problem.notFound("no published media file has SHA-256 \(sha256)")
        }
        if Self.isNotModified(file, ifNoneMatch: request.headers[.ifNoneMatch]) {
            return Response(status: .notModified, headers: Self.validatorHeaders(file))
        }
        let body: ByteBuffer
        do {
            body = try await cache.body(of: file)
        } catch is MediaCache.Busy {
            throw Problem.unavailable("the feed is reading other media files from the store; try again in a second", retryAfterSeconds: 1)
        } catch {
            logger.error("media file could not be read", metadata: ["sha256": "\(file.sha256)", "error": "\(error)"])
            throw Problem.unavailable("the media store did not answer for this file; try again", retryAfterSeconds: 5)
        }
        return try ByteRange.answer(request, body: body, headers: Self.headers(file), etag: "\"\(file.sha256)\"")
    }
}

extension MediaRoutes {
    /// A file's validators and caching: what a `304` carries.
    static func validatorHeaders(_ file: MediaLibrary.File) -> HTTPFields {
        // Public, immutable files: any page may use them, a captions track and its player from another origin included.
        [.cacheControl: cacheControl, .acceptRanges: "bytes", .eTag: "\"\(file.sha256)\"", .xContentTypeOptions: "nosniff", .accessControlAllowOrigin: "*"]
    }

    /// A file's answer whole: the validators, its type and length. The router and the pipeline (`PipelineResponder`,
    /// for a cached file asked for whole) both answer with these.
    static func headers(_ file: MediaLibrary.File) -> HTTPFields {
        var headers = validatorHeaders(file)
        headers[.contentType] = file.contentType
        return headers
    }

    static func isNotModified(_ file: MediaLibrary.File, ifNoneMatch: String?) -> Bool {
        ifNoneMatch.map { ContentNegotiation.ifNoneMatch($0, matchesAnyOf: ["\"\(file.sha256)\""]) } ?? false
    }
}

/// One `Range: bytes=…` of RFC 9110 §14: `a-b`, `a-` or `-n`. Several ranges, another unit or a malformed header
/// are answered whole, as the RFC allows; a range that starts past the end cannot be satisfied.
enum ByteRange: Equatable {
    /// `body` as `request` asks: whole (`200`), the one range it names (`206` with `Content-Range`), or `416`. `etag`
    /// is the body's strong validator, which `If-Range` must name for a range to be sent.
    static func answer(_ request: Request, body: ByteBuffer, headers: HTTPFields, etag: String) throws -> Response {
        var headers = headers
        headers[.acceptRanges] = "bytes"
        switch parse(request.headers[.range], length: body.readableBytes, ifRange: request.headers[.ifRange], etag: etag) {
        case .whole:
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: body))
        case .range(let range):
            headers[.contentRange] = "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(body.readableBytes)"
            return Response(status: .partialContent, headers: headers,
                            body: ResponseBody(byteBuffer: body.getSlice(at: body.readerIndex + range.lowerBound, length: range.count)!))
        case .unsatisfiable:
            // Not the body's caching: a shared cache must not keep this answer as the body.
            throw Problem(.rangeNotSatisfiable, "the range \(QueryParameters.shown(request.headers[.range] ?? "")) is not within the \(body.readableBytes) bytes",
                          headers: [.contentRange: "bytes */\(body.readableBytes)", .cacheControl: "no-store"])
        }
    }

    case whole
    case range(Range<Int>)
    case unsatisfiable

    static func parse(_ header: String?, length: Int, ifRange: String? = nil, etag: String) -> ByteRange {
        guard let header else { return .whole }
        // If-Range with another validator: the client's copy is stale, send it all.
        if let ifRange, ifRange != etag { return .whole }
        let text = header.trimmingCharacters(in: .whitespaces)
        guard text.lowercased().hasPrefix("bytes="), !text.contains(",") else { return .whole }
        let spec = text.dropFirst("bytes=".count).trimmingCharacters(in: .whitespaces)
        let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return .whole }
        let first = parts[0].trimmingCharacters(in: .whitespaces), last = parts[1].trimmingCharacters(in: .whitespaces)
        func number(_ text: String) -> Int? { !text.isEmpty && text.count <= 18 && text.allSatisfy({ ("0"..."9").contains($0) }) ? Int(text) : nil }
        if first.isEmpty {
            guard let suffix = number(last) else { return .whole }
            guard suffix > 0, length > 0 else { return .unsatisfiable }
            return .range(max(0, length - suffix)..<length)
        }
        guard let start = number(first) else { return .whole }
        let end: Int
        if last.isEmpty {
            end = length - 1
        } else {
            guard let given = number(last), given >= start else { return .whole }
            end = min(given, length - 1)
        }
        guard start < length else { return .unsatisfiable }
        return .range(start..<(end + 1))
    }
}
