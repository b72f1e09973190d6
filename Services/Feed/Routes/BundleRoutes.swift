import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Shared
import Synchronization

/// `GET /v1/tours/{id}/bundle` (DESIGN.md, "Offline tours and changes"): the tour's bundle as JSON, a stored answer
/// with ETag and gzip; `?media=1` the same in a zip with the library files the manifest lists, whole or one byte range
/// (a download that broke off resumes: the same bundle makes the same zip, byte for byte).
final class BundleRoutes: Sendable {
    let cache: MediaCache
    let logger: Logger
    /// A zip is made in memory (the files, then the archive): its size and how many are made at once are bounded, so
    /// requests for a large tour cannot exhaust the feed's memory.
    static let maxZipBytes = 128 << 20
    static let maxZipsAtOnce = 2
    private let zipsInProgress = Mutex(0)

    init(cache: MediaCache, logger: Logger) {
        self.cache = cache
        self.logger = logger
    }

    func register(_ route: FeedRoute, on router: Router<FeedRequestContext>, projection: CatalogProjection) {
        router.on(RouterPath(route.path), method: route.method) { request, context in
            try await self.answer(request, id: Substring(context.parameters.get("id") ?? ""), snapshot: projection.snapshot)
        }
    }

    func answer(_ request: Request, id: Substring, snapshot: FeedSnapshot) async throws -> Response {
        let tour = try FeedRoutes.tour(id, in: snapshot)
        let query = try QueryParameters(request.uri.query)
        let language = try LanguageNegotiation.choose(request, among: snapshot.languages)
        let bundle = snapshot.bundle(of: tour, in: language)
        guard try query.bool("media", digits: true) else { return bundle.response(to: request) }
        // The files are named by their hashes, so the JSON's fingerprint is the zip's.
        let etag = ContentHash.quoted(bundle.hash, suffix: "-zip")
        var headers: HTTPFields = [.eTag: etag, .cacheControl: CachePolicy.content, .xContentTypeOptions: "nosniff",
                                   .vary: "Accept-Encoding, Accept-Language", .contentLanguage: language.tag]
        if let condition = request.headers[.ifNoneMatch], ContentNegotiation.ifNoneMatch(condition, matchesAnyOf: [etag]) {
            return Response(status: .notModified, headers: headers)
        }
        let stops = tour.stopIds.compactMap { snapshot.pois[$0] }
        let manifest = snapshot.bundleManifest(of: tour)
        let total = manifest.reduce(bundle.identity.readableBytes) { $0 + $1.byteCount } + stops.reduce(0) { $0 + $1.page(language).identity.readableBytes }
        guard total <= Self.maxZipBytes else {
            throw Problem(.unprocessableContent, "this tour's files add up to \(total / 1_000_000) MB, more than the \(Self.maxZipBytes >> 20) MiB one download holds; "
                          + "fetch the bundle without media=1 and its files one by one from its manifest")
        }
        guard zipsInProgress.withLock({ count in
            guard count < Self.maxZipsAtOnce else { return false }
            count += 1
            return true
        }) else {
            throw Problem.unavailable("the feed is making other tours' downloads; try again in a few seconds", retryAfterSeconds: 2)
        }
        defer { zipsInProgress.withLock { $0 -= 1 } }
        var files: [(name: String, bytes: [UInt8])] = [("bundle.json", Array(buffer: bundle.identity))]
        // Each stop's page where its relative links (`PoiPage.relativeMediaBase`) reach the files below.
        for stop in stops { files.append(("pois/\(stop.id.uuidString)/page.html", Array(buffer: stop.page(language).identity))) }
        for file in manifest {
            let body: ByteBuffer
            do {
                body = try await cache.body(of: MediaLibrary.File(sha256: file.sha256, contentType: file.contentType, byteCount: file.byteCount))
            } catch is MediaCache.Busy {
                throw Problem.unavailable("the feed is reading other media files from the store; try again in a second", retryAfterSeconds: 1)
            } catch {
                logger.error("media file of a bundle could not be read", metadata: ["sha256": "\(file.sha256)", "error": "\(error)"])
                throw Problem.unavailable("the media store did not answer for a file of this tour; try again", retryAfterSeconds: 5)
            }
            files.append(("media/\(file.sha256)", Array(buffer: body)))
        }
        let archive: [UInt8]
        do {
            archive = try ZipArchive.make(files)
        } catch {
            throw Problem(.unprocessableContent, "this tour's files cannot be put in one zip (\(error)); fetch them one by one from the bundle's manifest")
        }
        headers[.contentType] = "application/zip"
        headers[.contentDisposition] = "attachment; filename=\"tour-\(tour.id.uuidString.lowercased()).zip\""
        return try ByteRange.answer(request, body: ByteBuffer(bytes: archive), headers: headers, etag: etag)
    }
}
