import Foundation
import Hummingbird
import Shared

/// The calendar's reads (DESIGN.md, "Calendar"): occurrences in a range of the site's days, and one entry with its
/// next occurrences. `calendar.ics` is a stored response (`FeedSnapshot.calendarFile`).
enum CalendarRoutes {
    static var maxDays: Int { 366 }

    /// `GET /v1/calendar?from=YYYY-MM-DD&to=YYYY-MM-DD&category=C`.
    static func occurrences(_ request: Request, _: Substring, _ snapshot: FeedSnapshot, _ site: FeedSite) throws -> Response {
        let query = try QueryParameters(request.uri.query)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = site.timeZone
        let today = calendar.dateComponents([.year, .month, .day], from: Date())
        let from = try day(query, "from", calendar) ?? calendar.date(from: today)!
        var to = try day(query, "to", calendar) ?? calendar.date(byAdding: .day, value: 30, to: from)!
        // A longer range is answered for its first maxDays days, and the answer's `to` says so.
        if (calendar.dateComponents([.day], from: from, to: to).day ?? 0) >= maxDays {
            to = calendar.date(byAdding: .day, value: maxDays - 1, to: from)!
        }
        let end = calendar.date(byAdding: .day, value: 1, to: to)!
        let category = try query.folded("category", meaning: "category is a category path such as Visit/Open days")
        let language = try LanguageNegotiation.choose(lang: query["lang"], acceptLanguage: request.headers[.acceptLanguage], among: snapshot.languages)
        var json = JSONWriter(capacity: 1_024)
        json.beginObject()
        json.key("from"); json.string(dateText(from, calendar))
        json.key("language"); json.string(language.tag)
        json.key("occurrences")
        // A `to` before `from` is an empty range.
        json.objects(end > from ? snapshot.calendar.occurrences(from: from, to: end, category: category) : []) { json, item in
            let (entry, occurrence) = item
            json.key("allDay"); json.bool(entry.content.allDay)
            writeTimes(occurrence, of: entry, to: &json)
            json.key("eventId"); json.uuid(entry.id)
            writePlace(snapshot.placeName(of: entry.content, in: language), to: &json)
            // Links that are not plain web URLs (stored before catalog refused them) are given as null.
            json.key("registrationUrl"); json.string(entry.content.registrationUrl.flatMap { TextRules.isWebURL($0) ? $0 : nil })
            json.key("timeZone"); json.string(entry.content.timeZone)
            json.key("title"); json.string(title(of: entry, in: language))
            json.key("url"); json.string(entry.content.url.flatMap { TextRules.isWebURL($0) ? $0 : nil })
        }
        json.key("to"); json.string(dateText(to, calendar))
        json.endObject()
        return DynamicResponse.make(json.bytes, contentType: MediaTypes.json, request: request, language: language)
    }

    /// The entry's title in `language`, the site's where it has none.
    static func title(of entry: CalendarListing.Entry, in language: ContentLanguage) -> String {
        guard !language.isSite, let title = entry.content.translated(in: language.tag)?["title"], !title.isEmpty else { return entry.content.title }
        return title
    }

    private static func dateText(_ date: Date, _ calendar: Calendar) -> String {
        let c = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0)
    }

    /// `GET /v1/calendar/{eventId}`.
    static func entry(_ request: Request, _ parameter: Substring, _ snapshot: FeedSnapshot, _: FeedSite) throws -> Response {
        let id = try PathParameter.uuid(parameter, naming: "an event")
        guard let entry = snapshot.calendar.byId[id] else { throw Problem.notFound("no published event has id \(id.uuidString)") }
        let language = try LanguageNegotiation.choose(request, among: snapshot.languages)
        let content = language.isSite ? entry.content : entry.content.localized(to: language.tag)
        var json = JSONWriter(capacity: 1_024 + content.description.utf8.count)
        json.beginObject()
        // Translations are answered one language at a time (DESIGN.md "Languages").
        json.members(of: content, except: ["placePoiId", "placeText", "translations"])
        json.key("id"); json.uuid(entry.id)
        json.key("language"); json.string(language.tag)
        json.key("languages"); json.strings(content.languages(site: snapshot.languages.site, offered: snapshot.languages.offered))
        json.key("nextOccurrences")
        json.objects(entry.schedule.occurrences(overlapping: Date(), .distantFuture, limit: 10)) { json, occurrence in
            writeTimes(occurrence, of: entry, to: &json)
        }
        writePlace(snapshot.placeName(of: content, in: language), to: &json)
        json.key("updatedAt"); json.date(entry.state.updatedAt)
        json.key("version"); json.number(entry.state.version)
        json.endObject()
        return DynamicResponse.make(json.bytes, contentType: MediaTypes.json, request: request, language: language)
    }

    /// `startsAt`/`endsAt`: RFC 3339 with the entry's offset then, or dates (the last day, inclusive) when all-day.
    static func writeTimes(_ occurrence: CalendarOccurrence, of entry: CalendarListing.Entry, to json: inout JSONWriter) {
        let zone = entry.schedule.timeZone
        if entry.content.allDay {
            json.key("endsAt"); json.string(String(localTime(occurrence.end.addingTimeInterval(-1), zone).prefix(10)))
            json.key("startsAt"); json.string(String(localTime(occurrence.start, zone).prefix(10)))
        } else {
            json.key("endsAt"); json.string(localTime(occurrence.end, zone))
            json.key("startsAt"); json.string(localTime(occurrence.start, zone))
        }
    }

    private static func writePlace(_ place: (poiId: UUID?, name: String)?, to json: inout JSONWriter) {
        json.key("place")
        guard let place else { return json.null() }
        json.beginObject()
        json.key("name"); json.string(place.name)
        if let id = place.poiId { json.key("poiId"); json.uuid(id) }
        json.endObject()
    }

    /// `2026-12-05T09:00:00-05:00`.
    static func localTime(_ date: Date, _ zone: TimeZone) -> String {
        RFC3339.formatLocal(date, offsetSeconds: zone.secondsFromGMT(for: date))
    }

    /// A `YYYY-MM-DD` parameter as that day's start in the site's zone; nil when absent.
    private static func day(_ query: QueryParameters, _ name: String, _ calendar: Calendar) throws -> Date? {
        guard let text = query[name] else { return nil }
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]), (1...12).contains(month), (1...31).contains(day),
              let date = calendar.date(from: DateComponents(year: year, month: month, day: day)), calendar.component(.day, from: date) == day else {
            throw Problem.badRequest("\(name) must be a date YYYY-MM-DD, got \"\(QueryParameters.shown(text))\"")
        }
        return date
    }
}
