import Foundation
import HummingbirdTesting
import Shared
import Testing
import TestSupport
@testable import Catalog
@testable import Feed

/// A bulk import too big for one message, sent as several `catalog.import` commands, all the way to the feed.
@Suite("Bulk import to the feed", .serialized, .stopsIfHung)
struct BulkImportFeedTests {
    @Test("a large import split into several commands arrives complete on the feed")
    func largeImportReachesFeed() async throws {
        let poiCount = 4_500
        let pois = (0..<poiCount).map { index in
            ContentImportFile.poiRow(label: "poi \(index)", legacyId: 60_000 + index, content: PoiContent(
                name: "Bulk place \(index)", summary: "Imported in bulk", description: String(repeating: "A place worth a look. ", count: 10),
                latitude: 34.2 + Double(index) / 1_000_000, longitude: -77.8, legacyId: 60_000 + index), actor: "import")
        }
        let poiIds = pois.compactMap { $0.commands.first?.entityId }
        // The feed shows a POI that a published tour stops at: one tour through the first and the last.
        let tour = ContentImportFile.tourRow(label: "tour", legacyId: 61_000, content: TourContent(name: "Bulk walk"),
                                             stops: [poiIds[0], poiIds[poiCount - 1]], status: .published, actor: "import")
        let phases = ContentImportFile.importCommands(pois + [tour], actor: "test", skipInvalidRows: false)
        #expect(phases.count == 2)
        #expect(phases[0].count >= 3, "more POIs than one command takes")

        let database = try await TestServices.freshDatabase()
        let kafka = TestServices.kafka()
        let catalog = try Catalog.buildApplication(settings: TestServices.serviceSettings(name: "catalog", database: database, kafka: kafka))
        let feed = try Feed.buildApplication(settings: TestServices.serviceSettings(name: "feed", database: database, kafka: kafka))
        let producer = try KafkaProducer(configuration: kafka, logger: TestServices.logger)
        let startup = StartupBarrier()
        let commands = CatalogCommandClient(producer: producer, configuration: kafka, startup: startup, source: "test", logger: TestServices.logger)
        try await catalog.test(.router) { _ in
            try await feed.test(.router) { feedClient in
                try await TestServices.waitUntilReady(feedClient, "feed")
                startup.open()
                try await TestServices.withServices([producer, commands]) {
                    let results = try await ContentImportFile.send(phases, client: commands, window: 3, timeout: .seconds(120))
                    #expect(results.count == phases.joined().count)
                    #expect(results.allSatisfy { $0.outcome == .applied })
                    #expect(results.flatMap { $0.rows ?? [] }.count == poiCount + 1)
                    let last = "/v1/pois/\(poiIds[poiCount - 1].uuidString.lowercased())"
                    let shown = try await TestServices.eventually(timeout: .seconds(60), interval: .milliseconds(200)) {
                        try await feedClient.execute(uri: last, method: .get).status == .ok
                    }
                    #expect(shown, "the last POI of the last chunk reached the feed")
                    let body = try await feedClient.execute(uri: last, method: .get).body
                    #expect(String(buffer: body).contains("Bulk place \(poiCount - 1)"))
                }
            }
        }
    }
}
