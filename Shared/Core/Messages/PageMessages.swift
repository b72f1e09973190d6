import Foundation

// Content pages' messages (DESIGN.md, "Pages"): a page's content, as commands carry it; its state and events are
// catalog records (`page.changed` carries it under `page`).

/// What an editor writes on a content page (About, Research, Education, History).
public struct PageContent: CatalogRecordContent {
    public static var recordKind: String { "page" }
    public static var eventRecordKey: StaticString { "page" }
    public static var commandField: String { "page" }
    public static var commandContent: WritableKeyPath<CatalogCommand, Self?> { \.page }
    public static var resultState: WritableKeyPath<CatalogCommandResult, PageState?> { \.page }

    /// Its address on the feed: lower-case letters, digits and hyphens, e.g. `about`.
    public var slug: String
    public var title: String
    public var summary: String
    /// Markdown (the common subset: paragraphs, headings, emphasis, links, lists, quotes, code); HTML in it is shown
    /// as text.
    public var body: String
    /// Where it stands in the list of pages, smaller first.
    public var order: Int
    /// Its title, summary and text in other languages (DESIGN.md "Languages"); nil when none.
    public var translations: Translations?

    /// 1 to 100 lower-case ASCII letters, digits and hyphens.
    public static func isSlug(_ text: String) -> Bool {
        (1...100).contains(text.count) && text.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
    }

    public init(slug: String, title: String, summary: String = "", body: String = "", order: Int = 0, translations: Translations? = nil) {
        self.slug = slug
        self.title = title
        self.summary = summary
        self.body = body
        self.order = order
        self.translations = Self.tidy(translations)
    }

    private enum CodingKeys: String, CodingKey {
        case slug, title, summary, body, order, translations
    }

    /// Through `init`, as the codec's reader: translations are tidied the same way whichever reads them.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(slug: try container.decode(String.self, forKey: .slug), title: try container.decode(String.self, forKey: .title),
                  summary: try container.decode(String.self, forKey: .summary), body: try container.decode(String.self, forKey: .body),
                  order: try container.decode(Int.self, forKey: .order),
                  translations: try container.decodeIfPresent(Translations.self, forKey: .translations))
    }
}

public typealias PageState = CatalogRecordState<PageContent>
public typealias PageEvent = CatalogRecordEvent<PageContent>
