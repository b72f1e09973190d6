import Foundation
import HummingbirdTesting
import Shared
import Testing
import TestSupport
@testable import Catalog
@testable import Feed

/// A feed that starts after the content was made learns it all from catalog's chunked snapshot: library media
/// items go out straight to the topic before the POI chunks, and a POI that names one shows it.
@Suite("Chunked snapshot with media to a new feed", .serialized, .stopsIfHung)
struct SnapshotMediaFeedTests {
    @Test("a feed started after a POI's narration and picture were made shows both, learned from the snapshot")
    func mediaInChunkedSnapshot() async throws {
        let audioHash = String(repeating: "a", count: 64), pictureHash = String(repeating: "b", count: 64)
        let base = FeedSite.defaultPublicURL + "/v1/media/"
        let database = try await TestServices.freshDatabase()
        let kafka = TestServices.kafka()
        let catalog = try Catalog.buildApplication(settings: TestServices.serviceSettings(name: "catalog", database: database, kafka: kafka))
        let producer = try KafkaProducer(configuration: kafka, logger: TestServices.logger)
        let startup = StartupBarrier()
        let commands = CatalogCommandClient(producer: producer, configuration: kafka, startup: startup, source: "test", logger: TestServices.logger)
        try await catalog.test(.router) { catalogClient in
            try await TestServices.waitUntilReady(catalogClient, "catalog")
            startup.open()
            try await TestServices.withServices([producer, commands]) {
                func applied(_ command: CatalogCommand) async throws -> CatalogCommandResult {
                    let result = try await commands.execute(command, timeout: .seconds(30))
                    guard result.outcome == .applied else { throw TestFailure("\(command.action): \(result.message ?? "") \(result.errors)") }
                    return result
                }
                _ = try await applied(CatalogCommand(action: .createMedia, actor: "a", entityId: UUID(), status: .published, media: MediaContent(
                    sha256: audioHash, format: .mp3, byteCount: 10, fileName: "welcome.mp3", title: "Welcome", transcript: "Welcome to the hall.")))
                _ = try await applied(CatalogCommand(action: .createMedia, actor: "a", entityId: UUID(), status: .published, media: MediaContent(
                    sha256: pictureHash, format: .jpeg, byteCount: 10, fileName: "hall.jpg", title: "Hall", altText: "Brick hall with white columns")))
                let hall = try await applied(CatalogCommand(action: .createPoi, actor: "a", poi: PoiContent(
                    name: "Hall", latitude: 34.2240, longitude: -77.8700, pictures: [base + pictureHash], narration: audioHash), status: .published))
                let gate = try await applied(CatalogCommand(action: .createPoi, actor: "a", poi: PoiContent(
                    name: "Gate", latitude: 34.2241, longitude: -77.8701), status: .published))
                let tour = try await applied(CatalogCommand(action: .createTour, actor: "a", tour: TourContent(name: "Media tour")))
                let stops = [hall.entityId, gate.entityId].compactMap { $0 }
                _ = try await applied(CatalogCommand(action: .setTourStops, actor: "a", entityId: tour.entityId, stops: stops))
                _ = try await applied(CatalogCommand(action: .setTourStatus, actor: "a", entityId: tour.entityId, status: .published))

                // Only now a feed: all it knows comes from the snapshot it asks for.
                let feed = try Feed.buildApplication(settings: TestServices.serviceSettings(name: "feed", database: database, kafka: kafka))
                try await feed.test(.router) { feedClient in
                    try await TestServices.waitUntilReady(feedClient, "feed")
                    let path = "/v1/pois/\(try #require(hall.entityId).uuidString.lowercased())"
                    let response = try await feedClient.execute(uri: path, method: .get)
                    try #require(response.status == .ok)
                    let poi = try #require(try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
                    let narration = try #require(poi["narration"] as? [String: Any], "\(String(buffer: response.body).prefix(600))")
                    #expect(narration["url"] as? String == base + audioHash && narration["type"] as? String == "audio/mpeg")
                    #expect(narration["transcript"] as? String == "Welcome to the hall.")
                    #expect(poi["pictureAlts"] as? [String] == ["Brick hall with white columns"])
                    let media = try #require(poi["media"] as? [[String: Any]])
                    #expect(media.compactMap { $0["sha256"] as? String } == [pictureHash, audioHash])
                }
            }
        }
    }
}
