import Foundation
import Hummingbird
import Shared

/// A language out to a translation agency and back (DESIGN.md "Languages"): every tour's and POI's translatable texts
/// as XLIFF 1.2, and an XLIFF file (1.2 or 2.0) read back into their translations, as drafts as any edit is.
struct TranslationsController {
    let projection: AdminCatalogProjection
    let writer: any CatalogWriter
    let editors: any TourEditorRepository
    let languages: SiteLanguages

    static let uploadPaths: [String: Int] = ["/translations/import": XLIFF.maxBytes]

    func register(on router: RouterGroup<AdminRequestContext>) {
        router.get("/translations", use: page)
        router.get("/translations/:language/export", use: export)
        router.post("/translations/import", use: importFile)
    }

    /// What a file changed, for the page after an import.
    struct Outcome: Sendable {
        var language: String
        var updated: [String] = []
        var unchanged = 0
        var problems: [String] = []
        var warnings: [String] = []
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

    /// Per translated language, the tours and POIs that leave something to the site's language.
    private func missingCounts() -> [String: (tours: Int, pois: Int)] {
        let content = projection.content
        var counts: [String: (tours: Int, pois: Int)] = [:]
        for language in languages.translated {
            counts[language] = (content.sortedTours.filter { !$0.working.content.untranslatedFields(in: language).isEmpty }.count,
                                content.sortedPois.filter { !$0.working.untranslatedFields(in: language).isEmpty }.count)
        }
        return counts
    }

    /// The fields an agency translates: the texts (a POI's narration is a file, chosen on its form).
    static func exchangedFields<Content: Translatable>(_: Content.Type) -> [String] {
        Content.translatableFields.filter { $0 != "narration" }
    }

    @Sendable func export(_ request: Request, context: AdminRequestContext) async throws -> Response {
        try await context.access(editors).requireOwner("translate content")
        let asked = try context.parameters.require("language")
        guard let language = languages.translated.first(where: { LanguageTag.equal($0, asked) }) else {
            throw AdminError.notFound("This site does not translate into \(asked); its languages are \(languages.offered.joined(separator: ", ")).")
        }
        let content = projection.content
        var units: [XLIFF.Unit] = []
        func add<Content: Translatable>(_ kind: String, _ id: UUID, _ working: Content, name: String) {
            let texts = working.translated(in: language) ?? [:]
            for field in Self.exchangedFields(Content.self) {
                guard let source = working.text(of: field), !source.isEmpty else { continue }
                units.append(XLIFF.Unit(id: "\(kind)/\(id.uuidString.lowercased())/\(field)", source: source, target: texts[field],
                                        note: "\(kind == "tour" ? "Tour" : "Point of interest") \u{201C}\(name)\u{201D}: \(field)"))
            }
        }
        for tour in content.sortedTours { add("tour", tour.id, tour.working.content, name: tour.working.content.name) }
        for poi in content.sortedPois { add("poi", poi.id, poi.working, name: poi.working.name) }
        let document = XLIFF.write(XLIFF.Document(sourceLanguage: languages.site, targetLanguage: language, units: units))
        return Response(status: .ok, headers: [.contentType: "application/x-xliff+xml; charset=utf-8",
                                               .contentDisposition: "attachment; filename=\"itour-\(language).xlf\""],
                        body: .init(byteBuffer: ByteBuffer(string: document)))
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
        // The units by entity, each target trimmed; an empty or missing target translates nothing.
        var tours: [UUID: [(field: String, source: String, text: String)]] = [:], pois: [UUID: [(field: String, source: String, text: String)]] = [:]
        for unit in document.units {
            let parts = unit.id.split(separator: "/").map(String.init)
            guard parts.count == 3, let id = UUID(uuidString: parts[1]), ["tour", "poi"].contains(parts[0]) else {
                outcome.problems.append("Unit \(unit.id): not a unit of this site's export (tour/<id>/<field> or poi/<id>/<field>).")
                continue
            }
            let fields = parts[0] == "tour" ? Self.exchangedFields(TourContent.self) : Self.exchangedFields(PoiContent.self)
            guard fields.contains(parts[2]) else {
                outcome.problems.append("Unit \(unit.id): \(parts[2]) is not translated here; these are: \(fields.joined(separator: ", ")).")
                continue
            }
            let text = (unit.target ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            guard !text.isEmpty else { continue }
            if parts[0] == "tour" { tours[id, default: []].append((parts[2], unit.source, text)) } else { pois[id, default: []].append((parts[2], unit.source, text)) }
        }
        for (id, texts) in tours.sorted(by: { $0.key.uuidString < $1.key.uuidString }) {
            await apply(texts, to: id, language: language, actor: access.user.email, context: context, outcome: &outcome,
                        current: { projection.tour($0).map { ($0.version, $0.working.content, $0.working.content.name) } },
                        command: { content, version in
                            CatalogCommand(action: .updateTour, actor: access.user.email, entityId: id, expectedVersion: version, tour: content, asDraft: true)
                        })
        }
        for (id, texts) in pois.sorted(by: { $0.key.uuidString < $1.key.uuidString }) {
            await apply(texts, to: id, language: language, actor: access.user.email, context: context, outcome: &outcome,
                        current: { projection.poi($0).map { ($0.version, $0.working, $0.working.name) } },
                        command: { content, version in
                            CatalogCommand(action: .updatePoi, actor: access.user.email, entityId: id, expectedVersion: version, poi: content, asDraft: true)
                        })
        }
        let status: HTTPResponse.Status = outcome.problems.isEmpty ? .ok : .unprocessableContent
        return render(context: context, outcome: outcome, error: nil, status: status)
    }

    /// One entity's translated texts, merged into its working content and sent as a draft; a lost race is tried once more
    /// on the newer version.
    private func apply<Content: Translatable>(_ texts: [(field: String, source: String, text: String)], to id: UUID, language: String, actor: String,
                                              context: AdminRequestContext, outcome: inout Outcome,
                                              current: (UUID) -> (version: Int, content: Content, name: String)?,
                                              command: (Content, Int) -> CatalogCommand) async {
        for attempt in 0..<2 {
            guard let (version, working, name) = current(id) else {
                outcome.problems.append("\(id.uuidString.lowercased()): no such tour or point of interest (deleted since the export?).")
                return
            }
            var content = working
            var translated = content.translations ?? [:]
            for text in texts {
                if attempt == 0, let now = working.text(of: text.field), now != text.source {
                    outcome.warnings.append("\(name), \(text.field): the \(languages.site) text changed since the export; check the translation.")
                }
                translated[language, default: [:]][text.field] = text.text
            }
            content.translations = translated
            guard content.translations != working.translations else {
                outcome.unchanged += 1
                return
            }
            let result: CatalogCommandResult
            do {
                result = try await writer.execute(command(content, version), for: context)
            } catch {
                outcome.problems.append("\(name): not saved, \(error.description)")
                return
            }
            switch result.outcome {
            case .applied:
                outcome.updated.append(name)
                return
            case .rejected:
                outcome.problems.append("\(name): " + result.errors.map(\.message).joined(separator: "; "))
                return
            case .conflict:
                if attempt == 1 { outcome.problems.append("\(name): changed by someone else while importing; import the file again.") }
            }
        }
    }
}
