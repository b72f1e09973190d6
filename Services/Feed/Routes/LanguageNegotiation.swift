import Hummingbird
import Shared

/// The language an answer is in (DESIGN.md "Languages"): one of the site's offered languages.
struct ContentLanguage: Sendable, Equatable {
    /// Its place in `SiteLanguages.offered`: 0 is the site's language.
    let index: Int
    let tag: String

    var isSite: Bool { index == 0 }

    static func site(of languages: SiteLanguages) -> ContentLanguage { ContentLanguage(index: 0, tag: languages.site) }
}

/// Which offered language answers a request: `?lang=` when given, else the best of `Accept-Language` (RFC 9110 q-values),
/// each range matched by RFC 4647 lookup (`es-MX`, then `es`), else the site's language.
enum LanguageNegotiation {
    static func choose(lang: String?, acceptLanguage: String?, among languages: SiteLanguages) throws -> ContentLanguage {
        if let lang {
            guard lang == "*" || LanguageTag.isWellFormed(lang) else {
                throw Problem.badRequest("lang must be a language tag such as es or pt-BR, got \"\(QueryParameters.shown(lang))\"")
            }
            return lookup(Substring(lang), among: languages) ?? .site(of: languages)
        }
        guard languages.offered.count > 1, let acceptLanguage else { return .site(of: languages) }
        for range in ranges(acceptLanguage) {
            if let found = lookup(range, among: languages) { return found }
        }
        return .site(of: languages)
    }

    /// A request's language, as the router sees it.
    static func choose(_ request: Request, among languages: SiteLanguages) throws -> ContentLanguage {
        try choose(lang: try QueryParameters(request.uri.query)["lang"], acceptLanguage: request.headers[.acceptLanguage], among: languages)
    }

    /// The last `Accept-Language` a connection sent and the language it chose: a phone sends the same header with every
    /// request on its connection, so the pipeline reads it once per connection.
    struct Memo {
        var header: String?
        var chosen = ContentLanguage(index: 0, tag: "")
    }

    /// `choose(uri:acceptLanguage:among:)`, remembered in `memo` for requests without a query.
    static func choose(uri: String, acceptLanguage: String?, among languages: SiteLanguages, memo: inout Memo) -> ContentLanguage? {
        let hasQuery = uri.utf8.contains(UInt8(ascii: "?"))
        if !hasQuery, let acceptLanguage, acceptLanguage == memo.header { return memo.chosen }
        let chosen = choose(uri: uri, acceptLanguage: acceptLanguage, among: languages)
        if !hasQuery, let acceptLanguage, let chosen { memo = Memo(header: acceptLanguage, chosen: chosen) }
        return chosen
    }

    /// A request's language as the pipeline sees it (NIO's head), nil when the router should answer (a malformed
    /// query or `lang`, for its 400). Requests without a query or `Accept-Language` are the site's at once.
    static func choose(uri: String, acceptLanguage: String?, among languages: SiteLanguages) -> ContentLanguage? {
        var lang: String?
        if let mark = uri.utf8.firstIndex(of: UInt8(ascii: "?")) {
            guard let query = try? QueryParameters(String(uri[uri.index(after: mark)...])) else { return nil }
            lang = query["lang"]
        }
        if lang == nil && (acceptLanguage == nil || languages.offered.count == 1) { return .site(of: languages) }
        return try? choose(lang: lang, acceptLanguage: acceptLanguage, among: languages)
    }

    /// RFC 4647 lookup: the range whole, then with its last subtag cut, until an offered tag equals it; `*` matches none
    /// (the caller's default answers it).
    static func lookup(_ range: Substring, among languages: SiteLanguages) -> ContentLanguage? {
        var range = range
        while !range.isEmpty, range != "*" {
            if let index = languages.offered.firstIndex(where: { LanguageTag.equal($0, range) }) {
                return ContentLanguage(index: index, tag: languages.offered[index])
            }
            guard let dash = range.lastIndex(of: "-") else { return nil }
            range = range[..<dash]
            // A single-letter subtag left at the end (`zh-Hant-x`) goes with the one it introduces (RFC 4647, 3.4).
            if let dash = range.lastIndex(of: "-"), range.distance(from: dash, to: range.endIndex) == 2 { range = range[..<dash] }
        }
        return nil
    }

    /// `Accept-Language`'s ranges, best first: q=0 dropped, equal q in the order sent. A range or q that does not read
    /// is skipped, as if not sent.
    static func ranges(_ header: String) -> [Substring] {
        var weighted: [(range: Substring, quality: Double, order: Int)] = []
        for (order, item) in header.split(separator: ",").prefix(32).enumerated() {
            let parts = item.split(separator: ";")
            guard let first = parts.first else { continue }
            let range = first.trimmingCharacters(in: .whitespaces)
            guard range == "*" || LanguageTag.isWellFormed(range) else { continue }
            var quality = 1.0
            for parameter in parts.dropFirst() {
                let parameter = parameter.trimmingCharacters(in: .whitespaces)
                guard parameter.lowercased().hasPrefix("q=") else { continue }
                guard let value = Double(parameter.dropFirst(2)), (0...1).contains(value) else { quality = -1; break }
                quality = value
            }
            if quality > 0 { weighted.append((Substring(range), quality, order)) }
        }
        return weighted.sorted { ($0.quality, -$0.order) > ($1.quality, -$1.order) }.map(\.range)
    }
}
