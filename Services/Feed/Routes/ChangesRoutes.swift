import Foundation
import HTTPTypes
import Hummingbird
import Shared

/// `GET /v1/changes?since=CURSOR` (DESIGN.md, "Offline tours and changes"): what changed on the feed since a cursor,
/// from the log the snapshot holds (ChangeLog), so the answer agrees with the content the same snapshot serves.
enum ChangesRoutes {
    /// Changes stamped this long before a cursor are answered again: another instance behind the same address may have
    /// applied them up to that much later.
    static let overlapMilliseconds: Int64 = 60_000
    /// The answer depends on the moment and the instance; a phone keeps what it learnt itself, not the response.
    static let cacheControl = "no-store"

    static func changes(_ request: Request, _: Substring, _ snapshot: FeedSnapshot, _: FeedSite) throws -> Response {
        let query = try QueryParameters(request.uri.query)
        let since = try query["since"].map { text in
            guard let time = ChangesCursor.time(text) else {
                throw Problem.badRequest("since must be the cursor of an earlier answer (11 characters of A-Z, a-z, 0-9, - and _), got \"\(QueryParameters.shown(text))\"")
            }
            return time
        }
        let log = snapshot.changes
        guard log.horizon != nil else {
            // Before the first publication an empty reset would tell phones to drop everything they hold.
            throw Problem.unavailable("the feed is still loading the catalog; try again in a few seconds", retryAfterSeconds: 5)
        }
        var json: JSONWriter
        let reset: Bool
        if let since, log.covers(since) {
            let entries = log.changes(since: since - Self.overlapMilliseconds)
            json = JSONWriter(capacity: 64 + entries.count * 100)
            json.beginObject()
            json.key("changes")
            json.objects(entries) { json, entry in
                write(kind: entry.kind, id: entry.id, version: entry.version, deleted: entry.deleted, snapshot, to: &json)
            }
            reset = false
        } else {
            // A phone new to the feed, or one whose cursor is older than what this instance has seen: everything on the
            // feed, so it drops what it holds that is not listed.
            json = JSONWriter(capacity: 64 + (snapshot.tours.count + snapshot.pois.count) * 100)
            json.beginObject()
            json.key("changes")
            json.beginArray()
            for tour in snapshot.tours.values.sorted(by: { $0.id < $1.id }) {
                json.beginObject()
                write(kind: .tour, id: tour.id, version: tour.version, deleted: false, snapshot, to: &json)
                json.endObject()
            }
            for case let poi? in snapshot.pois.values {
                json.beginObject()
                write(kind: .poi, id: poi.id, version: poi.version, deleted: false, snapshot, to: &json)
                json.endObject()
            }
            for kind in ChangeLog.Kind.allCases {
                for record in log.recordsOnFeed[kind] ?? [] {
                    json.beginObject()
                    write(kind: kind, id: record.id, version: record.version, deleted: false, snapshot, to: &json)
                    json.endObject()
                }
            }
            json.endArray()
            reset = true
        }
        json.key("cursor"); json.string(ChangesCursor.text(log.cursorTime))
        json.key("reset"); json.bool(reset)
        json.endObject()
        var response = DynamicResponse.make(json.bytes, contentType: MediaTypes.json, request: request)
        response.headers[.cacheControl] = Self.cacheControl
        return response
    }

    private static func write(kind: ChangeLog.Kind, id: UUID, version: Int, deleted: Bool, _ snapshot: FeedSnapshot,
                              to json: inout JSONWriter) {
        json.key("deleted"); json.bool(deleted)
        if !deleted, let href = href(kind, id, in: snapshot) { json.key("href"); json.string(href) }
        json.key("id"); json.uuid(id)
        json.key("kind"); json.string(kind.name)
        json.key("version"); json.number(version)
    }

    /// The path that answers an entity on the feed now (DESIGN.md, "Offline tours and changes"); nil when the snapshot
    /// no longer has it (a later change took it off, and is listed too).
    static func href(_ kind: ChangeLog.Kind, _ id: UUID, in snapshot: FeedSnapshot) -> String? {
        switch kind {
        case .tour: snapshot.tours[id] == nil ? nil : "/v1/tours/\(id.uuidString)"
        case .poi: snapshot.pois[id] == nil ? nil : "/v1/pois/\(id.uuidString)"
        case .page: snapshot.pages.byId[id].map { "/v1/pages/\($0.content.slug)" }
        case .event: snapshot.calendar.byId[id] == nil ? nil : "/v1/calendar/\(id.uuidString)"
        case .person: snapshot.people.byId[id] == nil ? nil : "/v1/people/\(id.uuidString)"
        case .featured:
            snapshot.featured.byId[id].flatMap { FeaturedRoutes.target(of: $0.content, in: snapshot, language: .site(of: snapshot.languages)) } == nil
                ? nil : "/v1/featured/\(id.uuidString)"
        case .media: snapshot.media.hashById[id].map { "/v1/media/\($0)" }
        }
    }
}
