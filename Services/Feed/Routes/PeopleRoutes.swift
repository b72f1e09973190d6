import Foundation
import Hummingbird
import Shared

/// The people directory's reads (DESIGN.md, "People"): published entries only.
enum PeopleRoutes {
    static var maxLimit: Int { 500 }

    /// `GET /v1/people?q=TEXT&department=D&limit=N&offset=K`.
    static func list(_ request: Request, _: Substring, _ snapshot: FeedSnapshot, _: FeedSite) throws -> Response {
        let query = try QueryParameters(request.uri.query)
        let text = try query.folded("q", meaning: "q is the text to look for")
        let department = try query.folded("department", meaning: "department is a department's name")
        let limit = try query.int("limit", in: 1...maxLimit, default: 100)
        let offset = try query.int("offset", in: 0...1_000_000, default: 0)
        let language = try LanguageNegotiation.choose(lang: query["lang"], acceptLanguage: request.headers[.acceptLanguage], among: snapshot.languages)
        let matches = snapshot.people.matches(query: text, department: department)
        var json = JSONWriter(capacity: 256 + min(limit, matches.count) * 320)
        json.beginObject()
        json.key("language"); json.string(language.tag)
        json.key("people")
        json.objects(matches.dropFirst(offset).prefix(limit)) { json, entry in writeMembers(entry, snapshot, in: language, to: &json) }
        json.key("total"); json.number(matches.count)
        json.endObject()
        return DynamicResponse.make(json.bytes, contentType: MediaTypes.json, request: request, language: language)
    }

    /// `GET /v1/people/{id}`.
    static func entry(_ request: Request, _ parameter: Substring, _ snapshot: FeedSnapshot, _: FeedSite) throws -> Response {
        let id = try PathParameter.uuid(parameter, naming: "a person")
        guard let entry = snapshot.people.byId[id] else { throw Problem.notFound("no published person has id \(id.uuidString)") }
        let language = try LanguageNegotiation.choose(request, among: snapshot.languages)
        var json = JSONWriter(capacity: 512)
        json.beginObject()
        json.key("language"); json.string(language.tag)
        writeMembers(entry, snapshot, in: language, to: &json)
        json.key("updatedAt"); json.date(entry.state.updatedAt)
        json.key("version"); json.number(entry.state.version)
        json.endObject()
        return DynamicResponse.make(json.bytes, contentType: MediaTypes.json, request: request, language: language)
    }

    /// An entry's members in `language`: its content as the content's codec names them, then its id, its languages and its
    /// office by name.
    static func writeMembers(_ entry: PeopleListing.Entry, _ snapshot: FeedSnapshot, in language: ContentLanguage, to json: inout JSONWriter) {
        let content = language.isSite ? entry.content : entry.content.localized(to: language.tag)
        // Translations are answered one language at a time (DESIGN.md "Languages").
        json.members(of: content, except: ["officePoiId", "officeText", "translations"])
        json.key("id"); json.uuid(entry.id)
        json.key("languages"); json.strings(content.languages(site: snapshot.languages.site, offered: snapshot.languages.offered))
        json.key("office")
        if let id = content.officePoiId, let poi = snapshot.pois[id] {
            json.beginObject()
            json.key("name"); json.string(poi.name)
            json.key("poiId"); json.uuid(id)
            json.endObject()
        } else if let office = content.officeText, !office.isEmpty {
            json.beginObject()
            json.key("name"); json.string(office)
            json.endObject()
        } else {
            json.null()
        }
    }
}
