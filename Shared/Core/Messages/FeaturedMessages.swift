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

    public init(targetKind: TargetKind, targetId: UUID, title: String? = nil, imageUrl: String, imageAlt: String, order: Int = 0) {
        self.targetKind = targetKind
        self.targetId = targetId
        self.title = title
        self.imageUrl = imageUrl
        self.imageAlt = imageAlt
        self.order = order
    }
}

public typealias FeaturedState = CatalogRecordState<FeaturedContent>
public typealias FeaturedEvent = CatalogRecordEvent<FeaturedContent>
