import Foundation

/// The site's language and the languages it offers (DESIGN.md "Languages"): the feed answers in them, the admin's
/// forms translate into them.
extension ConfigVariable {
    public static let siteLanguage = optional("SITE_LANGUAGE", default: "en", "the language content is written in first, a BCP 47 tag (en)")
    public static let siteLanguages = optional("SITE_LANGUAGES", default: "",
                                               "the languages the feed answers in, comma-separated (en,es); the site language is always one")
}

public struct SiteLanguages: Sendable, Equatable {
    /// The site's language, first in `offered`.
    public let site: String
    public let offered: [String]

    /// Tags are kept in their conventional case (`pt-br` is `pt-BR`), as content keeps them.
    public init(site: String, offered: [String] = []) {
        self.site = LanguageTag.canonical(site)
        self.offered = [self.site] + offered.filter { !LanguageTag.equal($0, site) }.map(LanguageTag.canonical)
    }

    public static let english = SiteLanguages(site: "en")

    /// The offered languages but the site's: the ones content is translated into.
    public var translated: ArraySlice<String> { offered.dropFirst() }
}

extension Environment {
    /// `SITE_LANGUAGE` and `SITE_LANGUAGES`, refused when a tag is malformed.
    public func siteLanguages() throws -> SiteLanguages {
        let site = string(.siteLanguage).trimmingCharacters(in: .whitespaces)
        guard LanguageTag.isWellFormed(site) else {
            throw ConfigurationError(name: ConfigVariable.siteLanguage.name, message: "must be a language tag such as en or pt-BR, got \"\(site)\"")
        }
        guard let offered = LanguageTag.list(string(.siteLanguages)) else {
            throw ConfigurationError(name: ConfigVariable.siteLanguages.name,
                                     message: "must be language tags separated by commas, such as en,es, got \"\(string(.siteLanguages))\"")
        }
        return SiteLanguages(site: site, offered: offered)
    }
}
