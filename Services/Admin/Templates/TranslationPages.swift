import Foundation
import Shared

/// The Translations page: each language's XLIFF out to an agency, and the file back (`TranslationsController`).
enum TranslationPages {
    /// `missing`: per language, how many entities of each kind (by unit prefix) leave a text untranslated.
    static func page(languages: SiteLanguages, missing: [String: [String: Int]], outcome: TranslationsController.Outcome?,
                     error: String?, csrf: String) -> HTML {
        guard !languages.translated.isEmpty else {
            return """
                <h1>Translations</h1>
                <p>This site is in \(TranslationFields.name(of: languages.site)) only. Set <code>SITE_LANGUAGES</code> (for example
                <code>\(languages.site),es</code>) to offer phones more languages and translate content here.</p>
                """
        }
        let rows: [HTML] = languages.translated.map { language in
            let gaps = TranslationExchanges.all.compactMap { exchange -> String? in
                let count = missing[language]?[exchange.prefix] ?? 0
                return count == 0 ? nil : counted(count, exchange.counted.one, plural: exchange.counted.many)
            }
            return """
                <tr><td lang="\(language)">\(TranslationFields.name(of: language))</td>
                <td>\(gaps.isEmpty ? "All translated" : gaps.joined(separator: ", "))</td>
                <td><a href="/translations/\(language)/export" download>Export XLIFF</a></td></tr>
                """
        }
        let errorBox: HTML = error.map { "<div class=\"error-summary\" role=\"alert\"><p>Nothing was imported: \($0)</p></div>" } ?? .empty
        return """
            <h1>Translations</h1>
            <p>Each language's texts of every tour, point of interest, page, calendar event, person, featured item, media file and
            category, as an XLIFF file a translation agency or tool takes; the file they send back (XLIFF 1.2 or 2.0) fills the
            translations, as an import with its progress and report. Tours' and points of interest's are saved as drafts, like
            any edit of them: publish each tour to show them. The others have no drafts: theirs show at once. Staff can also translate on each form; CSV imports take
            columns such as <code>name@es</code>.</p>
            <table><thead><tr><th scope="col">Language</th><th scope="col">Not translated yet</th><th scope="col"><span class="visually-hidden">Export</span></th></tr></thead>
            <tbody>\(rows)</tbody></table>
            <h2>Import a translated file</h2>
            \(errorBox)
            \(outcome.map(report) ?? .empty)
            \(Forms.post("/translations/import", csrf: csrf, multipart: true, """
                <div class="field"><label for="field-file">XLIFF file (.xlf or .xliff)</label>\
                <input type="file" id="field-file" name="file" accept=".xlf,.xliff,.xml"></div>
                <div class="actions">\(Forms.submit("Import translations"))</div>
                """))
            """
    }

    /// A file that changed nothing: how much was already here, and what could not be read.
    static func report(_ outcome: TranslationsController.Outcome) -> HTML {
        let problems: [HTML] = outcome.problems.map { "<li>\($0.unit): \($0.reason)</li>" }
        return """
            <div class="notice" role="status"><p><strong>\(TranslationFields.name(of: outcome.language)): nothing to change\
            \(outcome.unchanged == 0 ? "" : ", \(counted(outcome.unchanged, "item")) already translated so")\
            \(outcome.problems.isEmpty ? "" : ", \(outcome.problems.count) not imported").</strong></p>
            \(problems.isEmpty ? .empty : "<p>Not imported:</p><ul>\(problems)</ul>" as HTML)
            </div>
            """
    }
}
