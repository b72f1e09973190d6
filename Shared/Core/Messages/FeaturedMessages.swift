import Foundation

// Featured items' messages (DESIGN.md, "Featured"): the home screen's slideshow, each a reference to a tour, a POI, a
// calendar event or a page with an image; catalog records (`featured.changed` carries one under `featured`).

/// What an editor puts on the home screen.
public struct FeaturedContent: CatalogRecordContent {
    public static var recordKind: String { "featured" }
    public static var eventRecordKey: StaticString { "featured" }
    public static var commandField: String { "featured" }
    public static var commandContent: WritableKeyPath<CatalogCommand, Self?> { \.featured }
    public static var resultState: WritableKeyPath<CatalogCommandResult, FeaturedState?> { \.featured }

    public enum TargetKind: String, Codable, Sendable, CaseIterable {
        case tour, poi, event, page
    }

    public var targetKind: TargetKind
    /// The tour's, POI's, calendar entry's or page's id.
    public var targetId: UUID
    /// Shown instead of the target's own name, when given.
    public var title: String?
    /// An http(s) image, and its text for people who cannot see it (required).
    public var imageUrl: String
    public var imageAlt: String
    /// Smaller first.
    public var order: Int
    /// Its title and image description in other languages (DESIGN.md "Languages"); nil when none.
    public var translations: Translations?

    public init(targetKind: TargetKind, targetId: UUID, title: String? = nil, imageUrl: String, imageAlt: String, order: Int = 0,
                translations: Translations? = nil) {
        self.targetKind = targetKind
        self.targetId = targetId
        self.title = title
        self.imageUrl = imageUrl
        self.imageAlt = imageAlt
        self.order = order
        self.translations = Self.tidy(translations)
    }

    private enum CodingKeys: String, CodingKey {
        case targetKind, targetId, title, imageUrl, imageAlt, order, translations
    }

    /// Through `init`, as the codec's reader: translations are tidied the same way whichever reads them.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(targetKind: try c.decode(TargetKind.self, forKey: .targetKind), targetId: try c.decode(UUID.self, forKey: .targetId),
                  title: try c.decodeIfPresent(String.self, forKey: .title), imageUrl: try c.decode(String.self, forKey: .imageUrl),
                  imageAlt: try c.decode(String.self, forKey: .imageAlt), order: try c.decode(Int.self, forKey: .order),
                  translations: try c.decodeIfPresent(Translations.self, forKey: .translations))
    }
}

public typealias FeaturedState = CatalogRecordState<FeaturedContent>
public typealias FeaturedEvent = CatalogRecordEvent<FeaturedContent>
