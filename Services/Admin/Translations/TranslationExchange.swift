import Foundation
import Shared

/// One kind of content a language's XLIFF file carries (DESIGN.md "Languages"): its units are
/// `<prefix>/<uuid>/<field>`, one per text field (files — a narration, captions — are chosen on forms, not translated
/// by an agency).
protocol TranslationExchange: Sendable {
    /// The units' id prefix: `tour`, `poi`, `page`, …
    var prefix: String { get }
    /// What the Translations page counts them as: ("POI", "POIs").
    var counted: (one: String, many: String) { get }
    /// The text fields a unit may name.
    var fields: [String] { get }
    /// Every entity's units in `language`, each its working text as source and its translation as target.
    func units(_ content: AdminCatalogProjection.Content, language: String) -> [XLIFF.Unit]
    /// How many entities leave a text to the site language.
    func untranslated(_ content: AdminCatalogProjection.Content, language: String) -> Int
    /// One entity's translated texts merged into its working content, as the command that saves them; nil when it is gone.
    func change(_ id: UUID, texts: [TranslationsController.ImportedText], language: String, actor: String,
                in content: AdminCatalogProjection.Content) -> TranslationsController.Change?
}

/// A kind of translatable content: where the admin's projection keeps it and how a change of it is sent.
struct ExchangedContent<Content: Translatable>: TranslationExchange {
    struct Entity {
        let id: UUID
        let version: Int
        /// The text staff edit (a tour's or POI's draft when it has one).
        let working: Content
        let name: String
    }

    let prefix: String
    /// "Tour", "Point of interest", …: a unit's note names its entity with it.
    let noun: String
    let counted: (one: String, many: String)
    let all: @Sendable (AdminCatalogProjection.Content) -> [Entity]
    let one: @Sendable (AdminCatalogProjection.Content, UUID) -> Entity?
    let command: @Sendable (_ entity: Entity, _ changed: Content, _ actor: String) -> CatalogCommand

    var fields: [String] { Content.textFields }

    func units(_ content: AdminCatalogProjection.Content, language: String) -> [XLIFF.Unit] {
        all(content).flatMap { entity in
            let texts = entity.working.translated(in: language) ?? [:]
            return fields.compactMap { field -> XLIFF.Unit? in
                guard let source = entity.working.text(of: field), !source.isEmpty else { return nil }
                return XLIFF.Unit(id: "\(prefix)/\(entity.id.uuidString.lowercased())/\(field)", source: source, target: texts[field],
                                  note: "\(noun) \u{201C}\(entity.name)\u{201D}: \(field)")
            }
        }
    }

    func untranslated(_ content: AdminCatalogProjection.Content, language: String) -> Int {
        all(content).filter { entity in entity.working.untranslatedFields(in: language).contains { fields.contains($0) } }.count
    }

    func change(_ id: UUID, texts: [TranslationsController.ImportedText], language: String, actor: String,
                in content: AdminCatalogProjection.Content) -> TranslationsController.Change? {
        guard let entity = one(content, id) else { return nil }
        var changed = entity.working
        var translations = changed.translations ?? [:]
        let key = translations.keys.first { LanguageTag.equal($0, language) } ?? language
        var sourceChanged: [String] = []
        for text in texts {
            if let now = entity.working.text(of: text.field), now != text.source { sourceChanged.append(text.field) }
            translations[key, default: [:]][text.field] = text.text
        }
        changed.translations = Content.tidy(translations)
        return TranslationsController.Change(name: entity.name, sourceChanged: sourceChanged,
                                             command: changed.translations == entity.working.translations ? nil : command(entity, changed, actor))
    }
}

extension ExchangedContent where Content: CatalogRecordContent {
    /// A record kind (pages, the calendar, people, featured items, media): no drafts, so a change is live at once.
    init(records prefix: String, noun: String, counted: (one: String, many: String), _ records: @escaping @Sendable (AdminCatalogProjection.Content) -> [UUID: CatalogRecordState<Content>],
         name: @escaping @Sendable (Content) -> String) {
        let entity: @Sendable (CatalogRecordState<Content>) -> Entity = { state in
            Entity(id: state.id, version: state.version, working: state.content, name: name(state.content))
        }
        self.init(prefix: prefix, noun: noun, counted: counted,
                  all: { content in records(content).values.sorted { ($0.updatedAt, $0.id.uuidString) < ($1.updatedAt, $1.id.uuidString) }.map(entity) },
                  one: { content, id in records(content)[id].map(entity) },
                  command: { entity, changed, actor in
                      var command = CatalogCommand(action: .record(Content.self, .update), actor: actor, entityId: entity.id, expectedVersion: entity.version)
                      command[keyPath: Content.commandContent] = changed
                      return command
                  })
    }
}

enum TranslationExchanges {
    /// Every kind the exchange carries, in the file's order.
    static let all: [any TranslationExchange] = [
        ExchangedContent<TourContent>(
            prefix: "tour", noun: "Tour", counted: ("tour", "tours"),
            all: { $0.sortedTours.map(tour) }, one: { content, id in content.tours[id].map(tour) },
            command: { entity, changed, actor in
                CatalogCommand(action: .updateTour, actor: actor, entityId: entity.id, expectedVersion: entity.version, tour: changed, asDraft: true)
            }),
        ExchangedContent<PoiContent>(
            prefix: "poi", noun: "Point of interest", counted: ("POI", "POIs"),
            all: { $0.sortedPois.map(poi) }, one: { content, id in content.pois[id].map(poi) },
            command: { entity, changed, actor in
                CatalogCommand(action: .updatePoi, actor: actor, entityId: entity.id, expectedVersion: entity.version, poi: changed, asDraft: true)
            }),
        ExchangedContent<PageContent>(records: "page", noun: "Page", counted: ("page", "pages"), { $0.pages }, name: { $0.title }),
        ExchangedContent<CalendarEntryContent>(records: "event", noun: "Calendar event", counted: ("calendar event", "calendar events"), { $0.calendar }, name: { $0.title }),
        ExchangedContent<PersonContent>(records: "person", noun: "Person", counted: ("person", "people"), { $0.people }, name: { $0.name }),
        ExchangedContent<FeaturedContent>(records: "featured", noun: "Featured item", counted: ("featured item", "featured items"), { $0.featured }, name: { $0.title ?? "Featured item" }),
        ExchangedContent<MediaContent>(records: "media", noun: "Media file", counted: ("media file", "media files"), { $0.media }, name: { $0.title }),
        ExchangedContent<CategoryState>(
            prefix: "category", noun: "Category", counted: ("category", "categories"),
            all: { $0.sortedCategories.map(category) }, one: { content, id in content.categories[id].map(category) },
            command: { entity, changed, actor in
                CatalogCommand(action: .renameCategory, actor: actor, entityId: entity.id, expectedVersion: entity.version,
                               category: CategoryContent(name: changed.name, translations: changed.translations))
            }),
    ]

    static func exchange(_ prefix: some StringProtocol) -> (any TranslationExchange)? { all.first { $0.prefix == prefix } }

    private static func tour(_ state: TourState) -> ExchangedContent<TourContent>.Entity {
        .init(id: state.id, version: state.version, working: state.working.content, name: state.working.content.name)
    }

    private static func poi(_ state: PoiState) -> ExchangedContent<PoiContent>.Entity {
        .init(id: state.id, version: state.version, working: state.working, name: state.working.name)
    }

    private static func category(_ state: CategoryState) -> ExchangedContent<CategoryState>.Entity {
        .init(id: state.id, version: state.version, working: state, name: state.path)
    }
}
