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

/// What `PipelineResponder` answers, made from `FeedAPI.routes` once and shared by every connection's handler.
final class PipelineRoutes: Sendable {
    /// A route the pipeline answers, and the request metrics Hummingbird's `MetricsMiddleware` records for it
    /// (`RouteRequestMetrics` under the route's path), so its answers made here count with the router's.
    final class Route: Sendable {
        let path: String
        let template: PathTemplate
        /// A `.stored` route's lookup.
        let lookup: (@Sendable (FeedSnapshot, Substring, ContentLanguage) throws -> RenderedResource)?
        let followsLanguage: Bool
        /// The route's usual status and `304`, made at start; others on first use.
        let usual: RouteRequestMetrics
        let notModified: RouteRequestMetrics
        private let method: HTTPRequest.Method
        private let others = Mutex<[Int: RouteRequestMetrics]>([:])

        init(_ route: FeedRoute, usual status: HTTPResponse.Status,
             lookup: (@Sendable (FeedSnapshot, Substring, ContentLanguage) throws -> RenderedResource)? = nil) {
            path = route.path
            template = route.template
            method = route.method
            self.lookup = lookup
            followsLanguage = route.followsLanguage
            usual = RouteRequestMetrics(route: route.path, method: route.method, status: status)
            notModified = RouteRequestMetrics(route: route.path, method: route.method, status: .notModified)
        }

        func metrics(_ status: HTTPResponse.Status) -> RouteRequestMetrics {
            others.withLock { byStatus in
                if let metrics = byStatus[status.code] { return metrics }
                let metrics = RouteRequestMetrics(route: path, method: method, status: status)
                byStatus[status.code] = metrics
                return metrics
            }
        }
    }

    /// The `.stored` GETs, the `.events` route and the `.media` route.
    let stored: [Route]
    let events: Route?
    let media: Route?
    let mediaCache: MediaCache?
    let projection: CatalogProjection
    let ingest: EventIngest
    let serverName: String
    /// Who a batch's client is (`TRUSTED_PROXIES`).
    let proxies: TrustedProxies
    let answered = Counter(label: "itour_feed_stored_responses_total",
                           help: "GETs the feed answered from its stored responses in the connection's pipeline, ahead of the router.")

    init(_ table: [FeedRoute], projection: CatalogProjection, ingest: EventIngest, mediaCache: MediaCache? = nil, serverName: String,
         proxies: TrustedProxies = .none) {
        stored = table.compactMap { route in
            guard case .stored(let lookup) = route.handler, route.method == .get else { return nil }
            return Route(route, usual: .ok, lookup: lookup)
        }
        events = table.first { if case .events = $0.handler { true } else { false } }.map { Route($0, usual: .accepted) }
        media = table.first { if case .media = $0.handler { true } else { false } }.map { Route($0, usual: .ok) }
        self.mediaCache = mediaCache
        self.projection = projection
        self.ingest = ingest
        self.serverName = serverName
        self.proxies = proxies
    }

    /// The stored route and response for a GET of `path` (the query read only for `lang`, and a trailing slash ignored,
    /// as the router ignores them) in the language asked for, or nil when the router should answer. Matches the path's
    /// bytes against each route's template without splitting it: this runs for every request.
    func storedResponse(_ path: String, acceptLanguage: String?, memo: inout LanguageNegotiation.Memo) -> (Route, RenderedResource)? {
        var path = path
        let found = path.withUTF8 { bytes -> (index: Int, parameter: Range<Int>)? in
            var end = bytes.firstIndex(of: UInt8(ascii: "?")) ?? bytes.count
            guard end <= 160 else { return nil }
            if end > 1 && bytes[end - 1] == UInt8(ascii: "/") { end -= 1 }
            let requested = UnsafeBufferPointer(rebasing: bytes[0..<end])
            for (index, route) in stored.enumerated() {
                if let parameter = route.template.match(requested) { return (index, parameter) }
            }
            return nil
        }
        guard let found, let lookup = stored[found.index].lookup else { return nil }
        let utf8 = path.utf8
        let id = path[utf8.index(utf8.startIndex, offsetBy: found.parameter.lowerBound)..<utf8.index(utf8.startIndex, offsetBy: found.parameter.upperBound)]
        let snapshot = projection.snapshot
        let route = stored[found.index]
        guard let language = route.followsLanguage
                ? LanguageNegotiation.choose(uri: path, acceptLanguage: acceptLanguage, among: snapshot.languages, memo: &memo)
                : .site(of: snapshot.languages),
              let resource = try? lookup(snapshot, id, language) else { return nil }
        return (stored[found.index], resource)
    }
}

extension PipelineRoutes {
    /// A GET of a whole published media file whose bytes are in memory (no query: `?w=` and the rest are the
    /// router's), or nil.
    func cachedMedia(_ path: String) -> (Route, MediaLibrary.File, MediaCache.Cached)? {
        guard let media, let mediaCache else { return nil }
        var path = path
        let hash = path.withUTF8 { bytes -> String? in
            guard bytes.count <= 160, !bytes.contains(UInt8(ascii: "?")), let parameter = media.template.match(bytes) else { return nil }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[parameter]), as: UTF8.self)
        }
        guard let hash, MediaHash.isValid(hash), let file = projection.snapshot.media.file(hash, width: nil),
              let cached = mediaCache.cached(file.sha256) else { return nil }
        return (media, file, cached)
    }
}
