import Foundation
import Shared
import Testing
@testable import Feed

@Suite("Feed projection")
struct ProjectionTests {
    func tour(_ id: UUID, version: Int, name: String, status: ContentStatus = .published) -> CatalogEvent {
        .changed(TourState(id: id, version: version, status: status, content: TourContent(name: name), stops: [], updatedAt: Date()))
    }

    @Test("an older or repeated version never undoes a newer one; deletes stick")
    func versionOrder() {
        let projection = CatalogProjection()
        let id = UUID()
        #expect(projection.apply(tour(id, version: 2, name: "B")))
        #expect(!projection.apply(tour(id, version: 1, name: "A")))
        #expect(!projection.apply(tour(id, version: 2, name: "B again")))
        #expect(projection.content.publishedTours.map(\.content.name) == ["B"])
        #expect(projection.apply(CatalogEvent(kind: .tourDeleted, entityId: id, version: 3)))
        #expect(!projection.apply(tour(id, version: 2, name: "B")))
        #expect(projection.content.publishedTours.isEmpty)
    }

    @Test("only published tours are listed")
    func publishedOnly() {
        let projection = CatalogProjection()
        projection.apply(tour(UUID(), version: 1, name: "Draft", status: .draft))
        projection.apply(tour(UUID(), version: 1, name: "Archived", status: .archived))
        projection.apply(tour(UUID(), version: 1, name: "Live"))
        #expect(projection.content.publishedTours.map(\.content.name) == ["Live"])
    }
}
