import Foundation
import Hummingbird
import Shared

/// A language out to a translation agency and back (DESIGN.md "Languages"): every translatable text (`TranslationExchanges`)
/// as XLIFF 1.2, and an XLIFF file (1.2 or 2.0) read back into their translations: the entities it changes go to catalog
/// as one bulk import (a row each, bad rows skipped), so a whole city's file has the import's progress and report.
struct TranslationsController {
    let projection: AdminCatalogProjection
    let editors: any TourEditorRepository
    let languages: SiteLanguages
    /// An import's changes run as a bulk import does: one `catalog.import`, its progress and report on `/import/{id}`.
    let jobs: any ImportJobRepository
    let runner: ImportRunner

    static let uploadPaths: [String: Int] = ["/translations/import": XLIFF.maxBytes]

    func register(on router: RouterGroup<AdminRequestContext>) {
        router.get("/translations", use: page)
        router.get("/translations/:language/export", use: export)
        router.post("/translations/import", use: importFile)
    }

    /// What a file that changes nothing held, for the Translations page (a file that changes something is an import job).
    struct Outcome: Sendable {
        struct Problem: Sendable {
            /// The unit, or the entity, it is about.
            let unit: String
            let reason: String
        }

        var language: String
        var unchanged = 0
        var problems: [Problem] = []
    }

    @Sendable func page(_ request: Request, context: AdminRequestContext) async throws -> Response {
        try await context.access(editors).requireOwner("translate content")
        return render(context: context, outcome: nil, error: nil)
    }

    private func render(context: AdminRequestContext, outcome: Outcome?, error: String?, status: HTTPResponse.Status = .ok) -> Response {
        AdminPage(title: "Translations", context: context, breadcrumbs: [("Translations", nil)],
                  body: TranslationPages.page(languages: languages, missing: missingCounts(), outcome: outcome, error: error, csrf: context.csrfToken),
                  status: status).response()
    }

    /// Per translated language, how many entities of each kind leave a text to the site's language, by unit prefix.
    private func missingCounts() -> [String: [String: Int]] {
        let content = projection.content
        var counts: [String: [String: Int]] = [:]
        for language in languages.translated {
            for exchange in TranslationExchanges.all { counts[language, default: [:]][exchange.prefix] = exchange.untranslated(content, language: language) }
        }
        return counts
    }

    @Sendable func export(_ request: Request, context: AdminRequestContext) async throws -> Response {
        try await context.access(editors).requireOwner("translate content")
        let asked = try context.parameters.require("language")
        guard let language = languages.translated.first(where: { LanguageTag.equal($0, asked) }) else {
            throw AdminError.notFound("This site does not translate into \(asked); its languages are \(languages.offered.joined(separator: ", ")).")
        }
        let content = projection.content
        let units = TranslationExchanges.all.flatMap { $0.units(content, language: language) }
        let document = XLIFF.write(XLIFF.Document(sourceLanguage: languages.site, targetLanguage: language, units: units))
        return Response(status: .ok, headers: [.contentType: "application/x-xliff+xml; charset=utf-8",
                                               .contentDisposition: "attachment; filename=\"itour-\(language).xlf\""],
                        body: .init(byteBuffer: ByteBuffer(string: document)))
    }

    /// A unit's translated text as a file brings it back.
    struct ImportedText: Sendable {
        let field: String
        /// The site language's text the translation was made from.
        let source: String
        let text: String
    }

    /// What importing changes of one entity: the command saving its translations (nil when they are as they were), and
    /// the fields whose site-language text changed since the export.
    struct Change: Sendable {
        let name: String
        let sourceChanged: [String]
        let command: CatalogCommand?
    }

    @Sendable func importFile(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let access = try await context.access(editors)
        try access.requireOwner("translate content")
        guard let file = context.form.files["file"], !file.data.isEmpty else {
            return render(context: context, outcome: nil, error: "Choose an XLIFF file (.xlf or .xliff).", status: .unprocessableContent)
        }
        let document: XLIFF.Document
        do {
            document = try XLIFF.read(file.data)
        } catch {
            return render(context: context, outcome: nil, error: "\(file.fileName): \(error.description)", status: .unprocessableContent)
        }
        guard let target = document.targetLanguage,
              let language = languages.translated.first(where: { LanguageTag.equal($0, target) }) else {
            let offered = languages.translated.joined(separator: ", ")
            return render(context: context, outcome: nil,
                          error: "\(file.fileName): its target language is \(document.targetLanguage ?? "not given"); this site translates into \(offered.isEmpty ? "no language (SITE_LANGUAGES)" : offered).",
                          status: .unprocessableContent)
        }
        var outcome = Outcome(language: language)
        // The units by kind and entity, each target trimmed; an empty or missing target translates nothing.
        var texts: [String: [UUID: [ImportedText]]] = [:]
        for unit in document.units {
            let parts = unit.id.split(separator: "/").map(String.init)
            guard parts.count == 3, let id = UUID(uuidString: parts[1]), let exchange = TranslationExchanges.exchange(parts[0]) else {
                let kinds = TranslationExchanges.all.map(\.prefix).joined(separator: ", ")
                outcome.problems.append(.init(unit: "Unit \(unit.id)", reason: "not a unit of this site's export (<kind>/<id>/<field>, the kind one of \(kinds))."))
                continue
            }
            guard exchange.fields.contains(parts[2]) else {
                outcome.problems.append(.init(unit: "Unit \(unit.id)", reason: "\(parts[2]) is not translated here; these are: \(exchange.fields.joined(separator: ", "))."))
                continue
            }
            let text = (unit.target ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            guard !text.isEmpty else { continue }
            texts[parts[0], default: [:]][id, default: []].append(ImportedText(field: parts[2], source: unit.source, text: text))
        }
        // Each entity whose translations change is a row of one import, saved as any edit of it is.
        var plan = ContentImportFile.Plan()
        let content = projection.content
        for exchange in TranslationExchanges.all {
            for (id, entityTexts) in (texts[exchange.prefix] ?? [:]).sorted(by: { $0.key.uuidString < $1.key.uuidString }) {
                guard let change = exchange.change(id, texts: entityTexts, language: language, actor: access.user.email, in: content) else {
                    outcome.problems.append(.init(unit: "\(exchange.prefix)/\(id.uuidString.lowercased())", reason: "not here (deleted since the export?)."))
                    continue
                }
                guard let command = change.command else {
                    outcome.unchanged += 1
                    continue
                }
                let check = change.sourceChanged.isEmpty ? ""
                    : " (check: its \(languages.site) \(change.sourceChanged.joined(separator: ", ")) changed since the export)"
                plan.rows.append(CatalogBatchRow(label: change.name + check, commands: [command]))
            }
        }
        guard !plan.rows.isEmpty else {
            return render(context: context, outcome: outcome, error: nil, status: outcome.problems.isEmpty ? .ok : .unprocessableContent)
        }
        plan = ContentImportFile.Plan(rows: plan.rows, unreadable: outcome.problems.map { CatalogBatchRowResult(label: $0.unit, outcome: .failed, message: $0.reason) })
        let job = try await runner.start(plan, fileName: file.fileName, skipBadRows: true, by: access.user, jobs: jobs,
                                         requestId: RequestIdMiddleware.id(of: context))
        return .redirect(to: "/import/\(job.uuidString.lowercased())")
    }
}
