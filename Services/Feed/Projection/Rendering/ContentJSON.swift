import Foundation
import Shared

/// The JSON bodies of the Feed API (DESIGN.md "Feed API"), keys in sorted order. Absent optional
/// fields are written as null, so every object of a kind has the same shape.
enum ContentJSON {
    /// A tour in `GET /v1/tours` and in search results, as `localized` to one language; `languages`: those it has text in.
    static func tourSummary(_ tour: TourState, stopCount: Int, languages: [String]) -> [UInt8] {
        var json = JSONWriter(capacity: 384)
        json.beginObject()
        lookMembers(tour.content, to: &json)
        json.key("id"); json.uuid(tour.id)
        json.key("languages"); json.strings(languages)
        json.key("legacyId"); json.number(tour.content.legacyId)
        json.key("name"); json.string(tour.content.name)
        json.key("stopCount"); json.number(stopCount)
        json.key("summary"); json.string(tour.content.summary)
        json.key("updatedAt"); json.date(tour.updatedAt)
        json.endObject()
        return json.bytes
    }

    /// `{"language": …, "tours": [...]}` from rendered tour summaries.
    static func tourList(_ summaries: [[UInt8]], language: String) -> [UInt8] {
        var json = JSONWriter(capacity: 64 + summaries.reduce(0) { $0 + $1.count + 1 })
        json.beginObject()
        json.key("language"); json.string(language)
        json.key("tours")
        json.beginArray()
        for summary in summaries { json.raw(summary) }
        json.endArray()
        json.endObject()
        return json.bytes
    }

    /// How a tour looks in a list and on a map (DESIGN.md, "A tour's look and route"), sorted among the others:
    /// `color`, `coverImage`, `coverImageAlt`, `estimatedMinutes`, null when not set.
    private static func lookMembers(_ content: TourContent, to json: inout JSONWriter) {
        json.key("color"); json.string(content.color)
        json.key("coverImage"); json.string(content.coverImage)
        json.key("coverImageAlt"); json.string(content.coverImageAlt)
        json.key("estimatedMinutes"); json.number(content.estimatedMinutes)
    }

    /// `GET /v1/tours/{id}`: the tour's fields, its stops in walking order, their bounding box, its route and the
    /// walking distance along it (along the stops without one).
    static func tourDetail(_ tour: TourState, stops: [PoiState], language: ContentLanguage, languages: SiteLanguages) -> [UInt8] {
        var json = JSONWriter(capacity: 512 + 256 * stops.count + 40 * (tour.content.route?.coordinates.count ?? 0))
        let points = stops.map { Coordinate(latitude: $0.content.latitude, longitude: $0.content.longitude) }
        json.beginObject()
        json.key("bbox")
        if points.isEmpty {
            json.null()
        } else {
            json.beginObject()
            json.key("maxLatitude"); json.number(points.map(\.latitude).max() ?? 0)
            json.key("maxLongitude"); json.number(points.map(\.longitude).max() ?? 0)
            json.key("minLatitude"); json.number(points.map(\.latitude).min() ?? 0)
            json.key("minLongitude"); json.number(points.map(\.longitude).min() ?? 0)
            json.endObject()
        }
        lookMembers(tour.content, to: &json)
        json.key("id"); json.uuid(tour.id)
        json.key("language"); json.string(language.tag)
        json.key("languages"); json.strings(tour.content.languages(site: languages.site, offered: languages.offered))
        json.key("legacyId"); json.number(tour.content.legacyId)
        json.key("name"); json.string(tour.content.name)
        json.key("purpose"); json.string(tour.content.purpose)
        json.key("route")
        if let route = tour.content.route { json.lineString(route) } else { json.null() }
        json.key("stopCount"); json.number(stops.count)
        json.key("stops")
        json.beginArray()
        for stop in stops {
            json.beginObject()
            poiListingMembers(id: stop.id, stop.content, languages: stop.content.languages(site: languages.site, offered: languages.offered), to: &json)
            json.key("triggerRadiusMeters"); json.number(stop.content.triggerRadiusMeters ?? PoiContent.defaultTriggerRadiusMeters)
            json.endObject()
        }
        json.endArray()
        json.key("summary"); json.string(tour.content.summary)
        json.key("updatedAt"); json.date(tour.updatedAt)
        json.key("version"); json.number(tour.version)
        json.key("walkingDistanceMeters"); json.number(tour.content.walkingDistanceMeters(stops: points).rounded(places: 1))
        json.endObject()
        return json.bytes
    }

    /// `GET /v1/pois/{id}`: the whole POI and the published tours that stop there.
    static func poiDetail(_ poi: PoiState, tourIds: [UUID], openingHours hours: OpeningHours?, media: PoiMedia? = nil,
                          language: ContentLanguage, languages: [String]) -> [UInt8] {
        let content = poi.content
        var json = JSONWriter(capacity: 512 + content.description.utf8.count)
        json.beginObject()
        // The content's codec writes `categories` only for several, and the stored forms of alt texts, radius and
        // narration; the feed always writes them, worked out (DESIGN.md, "Accessibility and stops").
        // Translations are answered one language at a time (DESIGN.md "Languages").
        json.members(of: content, except: ["categories", "pictureAlts", "triggerRadiusMeters", "narration", "translations"])
        json.key("categories"); json.strings(content.categories)
        json.key("id"); json.uuid(poi.id)
        json.key("language"); json.string(language.tag)
        json.key("languages"); json.strings(languages)
        // The files this answer uses: its language's narration, not every translation's (a bundle's manifest has them all).
        var own = content
        own.translations = nil
        let used = Set(MediaHash.named(in: own))
        json.key("media")
        json.objects((media?.items ?? []).filter { used.contains($0.sha256) }) { json, item in mediaMembers(item, media: media, to: &json) }
        json.key("narration")
        if let narration = content.narration, let media, let item = media.item(narration) {
            json.beginObject()
            mediaMembers(item, media: media, to: &json)
            json.endObject()
        } else {
            json.null()
        }
        json.key("pictureAlts")
        json.beginArray()
        for index in content.pictures.indices {
            if let alt = media?.alt(ofPicture: index, in: content) ?? content.ownAlt(ofPicture: index) { json.string(alt) } else { json.null() }
        }
        json.endArray()
        json.key("triggerRadiusMeters"); json.number(content.triggerRadiusMeters ?? PoiContent.defaultTriggerRadiusMeters)
        if let hours {
            json.key("openingHoursTable")
            json.objects(hours.week) { json, week in
                json.key("day"); json.string(week.day.abbreviation)
                json.key("name"); json.string(week.day.name)
                json.key("spans"); json.strings(week.spans.map(\.text))
            }
        }
        json.key("tourIds"); json.uuids(tourIds)
        json.key("updatedAt"); json.date(poi.updatedAt)
        json.key("version"); json.number(poi.version)
        json.endObject()
        return json.bytes
    }

    /// A library file as a POI's `media` and `narration` give it.
    private static func mediaMembers(_ item: MediaContent, media: PoiMedia?, to json: inout JSONWriter) {
        let base = media?.baseURL ?? "/v1/media/"
        json.key("altText"); json.string(item.altText)
        json.key("byteCount"); json.number(item.byteCount)
        json.key("captionsUrl"); json.string(item.captions.map { base + $0 })
        json.key("height"); json.number(item.height)
        json.key("sha256"); json.string(item.sha256)
        json.key("title"); json.string(item.title)
        json.key("transcript"); json.string(item.transcript)
        json.key("type"); json.string(item.format.contentType)
        json.key("url"); json.string(base + item.sha256)
        json.key("width"); json.number(item.width)
    }

    /// The members a POI shows in nearby and search results, without the braces, so a nearby result can
    /// put its distance and bearing in front. Written per answer: a few dozen per answer cost microseconds,
    /// and a city's worth kept encoded cost 20 MB.
    /// `name` and `summary` are a translation's, when it has them.
    static func poiListingMembers(id: UUID, _ content: PoiContent, name: String? = nil, summary: String? = nil, languages: [String],
                                  to json: inout JSONWriter) {
        json.key("category"); json.string(content.category)
        json.key("id"); json.uuid(id)
        json.key("languages"); json.strings(languages)
        json.key("latitude"); json.number(content.latitude)
        json.key("longitude"); json.number(content.longitude)
        json.key("name"); json.string(name ?? content.name)
        json.key("summary"); json.string(summary ?? content.summary)
    }

    /// `GET /v1/categories`: `{"categories": [{path, name, poiCount, children}], "language"}`, each level by name (case
    /// ignored, then as written). A POI counts once for each node it is in or under; a category whose parent
    /// has not arrived is shown at the top until it does.
    static func categoryTree(_ categories: [CategoryState], poiCategories: [[String]], language: String) -> [UInt8] {
        var counts: [String: Int] = [:]
        for paths in poiCategories {
            for node in CategoryState.pathsWithAncestors(paths) { counts[node, default: 0] += 1 }
        }
        let paths = Set(categories.map(\.path))
        func parent(_ path: String) -> String? {
            guard let slash = path.lastIndex(of: "/") else { return nil }
            let parent = String(path[..<slash])
            return paths.contains(parent) ? parent : nil
        }
        let children = Dictionary(grouping: categories) { parent($0.path) ?? "" }.mapValues { nodes in
            nodes.sorted { ($0.name.lowercased(), $0.name) < ($1.name.lowercased(), $1.name) }
        }
        var json = JSONWriter(capacity: 64 + categories.count * 96)
        func write(_ nodes: [CategoryState], to json: inout JSONWriter) {
            json.objects(nodes) { json, node in
                json.key("children"); write(children[node.path] ?? [], to: &json)
                json.key("name"); json.string(node.name)
                json.key("path"); json.string(node.path)
                json.key("poiCount"); json.number(counts[node.path] ?? 0)
            }
        }
        json.beginObject()
        json.key("categories"); write(children[""] ?? [], to: &json)
        json.key("language"); json.string(language)
        json.endObject()
        return json.bytes
    }
}
