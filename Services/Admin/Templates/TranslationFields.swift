import Foundation
import Shared

/// The translation fields of the tour and POI forms (DESIGN.md "Languages"): each translatable field once per offered
/// language but the site's, named `field@tag` (as the CSV import's columns), the site language's text beside it.
enum TranslationFields {
    /// A translatable field as its form shows it.
    struct Field: Sendable {
        let name: String
        let label: String
        /// 1: a line; more: a text area of that many rows.
        let rows: Int
    }

    static func formName(_ field: String, _ language: String) -> String { "\(field)@\(language)" }

    /// `field@tag` → (field, tag), when the tag is well formed.
    static func split(_ name: String) -> (field: String, language: String)? {
        let parts = name.split(separator: "@", maxSplits: 1)
        guard parts.count == 2, LanguageTag.isWellFormed(parts[1]) else { return nil }
        return (String(parts[0]), String(parts[1]))
    }

    /// The form's values for the translations content holds.
    static func values(_ translations: Translations?) -> [String: String] {
        var values: [String: String] = [:]
        for (language, texts) in translations ?? [:] {
            for (field, text) in texts { values[formName(field, language)] = text }
        }
        return values
    }

    /// The `field@tag` values a form posted, of `fields`.
    static func values(_ form: FormData, fields: [String]) -> [String: String] {
        var values: [String: String] = [:]
        for (name, posted) in form.fields {
            guard let (field, _) = split(name), fields.contains(field), let text = posted.first else { continue }
            values[name] = text
        }
        return values
    }

    /// The translations to send: `stored` with each field the form posted replaced by its text, trimmed (emptied: not
    /// translated, the site language's text then serves). What the form did not show (a language no longer offered)
    /// stays as stored.
    static func translations(_ values: [String: String], over stored: Translations?) -> Translations? {
        var translations = stored ?? [:]
        for (name, text) in values {
            guard let (field, language) = split(name) else { continue }
            let key = translations.keys.first { LanguageTag.equal($0, language) } ?? LanguageTag.canonical(language)
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            translations[key, default: [:]][field] = trimmed.isEmpty ? nil : trimmed
        }
        return translations.isEmpty ? nil : translations
    }

    /// "Spanish (es)": the language's English name, and its tag.
    static func name(of language: String) -> String {
        let english = Locale(identifier: "en").localizedString(forIdentifier: language)
        return english.map { "\($0) (\(language))" } ?? language
    }

    /// One fieldset per language the site translates into: each field beside the site language's text.
    static func fieldsets(_ fields: [Field], languages: SiteLanguages, siteText: (String) -> String, values: [String: String],
                          errors: [String: String]) -> HTML {
        languages.translated.reduce(HTML.empty) { html, language in
            let inputs = fields.reduce(HTML.empty) { html, field in
                let name = formName(field.name, language)
                // A long text (a page's) is quoted by its start.
                let whole = siteText(field.name)
                let original = whole.count > 240 ? whole.prefix(240) + "\u{2026}" : whole
                let hint = original.isEmpty ? "Nothing in \(Self.name(of: languages.site)) yet."
                    : "\(Self.name(of: languages.site)): \u{201C}\(original)\u{201D}. Empty: phones asking for \(language) get this."
                let error = errors["translations.\(language).\(field.name)"] ?? errors[name]
                let value = values[name] ?? ""
                return html + (field.rows > 1
                    ? Forms.textarea("\(field.label) (\(language))", name: name, value: value, error: error, rows: field.rows, hint: hint)
                    : Forms.text("\(field.label) (\(language))", name: name, value: value, error: error, hint: hint,
                                 attributes: " lang=\"\(language)\""))
            }
            return html + """
                <fieldset class="translation" lang="\(language)"><legend>\(Self.name(of: language))</legend>
                <div lang="\(languages.site)" class="hint">Translations of the fields above; each empty field shows the \(Self.name(of: languages.site)) text.</div>
                \(inputs)
                </fieldset>
                """
        }
    }

    /// The fields each translated language leaves to the site's, for lists and Publish; only languages missing something.
    static func missing(_ content: some Translatable, languages: SiteLanguages) -> [(language: String, fields: [String])] {
        languages.translated.compactMap { language in
            let fields = content.untranslatedFields(in: language)
            return fields.isEmpty ? nil : (language, fields)
        }
    }

    /// A list's "Not translated" column heading; nothing when the site has one language.
    static func missingHeader(_ languages: SiteLanguages) -> HTML {
        languages.translated.isEmpty ? .empty : "<th scope=\"col\">Not translated</th>"
    }

    /// A list row's "Not translated" cell; nothing when the site has one language.
    static func missingCell(_ content: some Translatable, languages: SiteLanguages) -> HTML {
        languages.translated.isEmpty ? .empty : "<td>\(missingSummary(content, languages: languages))</td>"
    }

    /// "es: name, summary" per language, or "All translated"; nothing when the site has one language.
    static func missingSummary(_ content: some Translatable, languages: SiteLanguages) -> HTML {
        guard !languages.translated.isEmpty else { return .empty }
        let missing = missing(content, languages: languages)
        guard !missing.isEmpty else { return "<span class=\"muted\">All translated</span>" }
        let items: [HTML] = missing.map { "<li><span lang=\"\($0.language)\">\($0.language)</span>: \($0.fields.joined(separator: ", "))</li>" }
        return "<ul class=\"untranslated\">\(items)</ul>"
    }
}

/// A form with translation fieldsets: the fields it translates, and their site-language text as it holds them.
protocol TranslatingForm {
    static var translatedFields: [TranslationFields.Field] { get }
    /// Translations by form name, `name@es`.
    var translations: [String: String] { get }
    /// The site language's text of each translatable field, as typed.
    var siteTexts: [String: String] { get }
}

extension TranslatingForm {
    func translationFieldsets(languages: SiteLanguages, errors: [String: String]) -> HTML {
        TranslationFields.fieldsets(Self.translatedFields, languages: languages, siteText: { siteTexts[$0] ?? "" }, values: translations, errors: errors)
    }
}
