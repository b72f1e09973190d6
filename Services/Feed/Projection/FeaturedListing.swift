import Foundation
import Shared

/// The published featured items (DESIGN.md, "Featured"), by `order`, then id. Each is shown only while what it
/// shows is on the feed (`FeaturedRoutes.target`).
typealias FeaturedListing = RecordListing<FeaturedContent>

extension FeaturedContent: ListedRecord {
    static func listedBefore(_ a: FeaturedState, _ b: FeaturedState) -> Bool { (a.content.order, a.id) < (b.content.order, b.id) }
}
