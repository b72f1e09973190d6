import Foundation
import HummingbirdTesting
import Shared
import Testing
import TestSupport
@testable import Catalog
@testable import Feed

/// The walking skeleton's thin path, with every part real: a command over `catalog.commands`, catalog's
/// transaction and outbox, the relay to `catalog.events`, the feed's projection on `GET /v1/tours`, and the
/// result on `catalog.command-results`.
@Suite("End to end", .serialized, .stopsIfHung)
struct ThinPathTests {
    struct TourList: Decodable {
        struct Tour: Decodable {
            let id: UUID
            let name: String
            let stopCount: Int
        }
        let tours: [Tour]
    }

    /// Runs catalog and feed on a fresh database and topic prefix, and a command client beside them.
    func withSuite(_ body: @Sendable (CatalogCommandClient, any TestClientProtocol) async throws -> Void) async throws {
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
                    try await body(commands, feedClient)
                }
            }
        }
    }

    func tours(_ client: any TestClientProtocol) async throws -> TourList {
        let response = try await client.execute(uri: "/v1/tours", method: .get)
        #expect(response.status == .ok)
        return try JSONDecoder().decode(TourList.self, from: Data(buffer: response.body))
    }

    @Test("a published tour created by command appears on the feed; a draft does not")
    func commandToFeed() async throws {
        try await withSuite { commands, feed in
            let draft = try await commands.executeInTest(CatalogCommand(action: .createTour, actor: "test", tour: TourContent(name: "Hidden draft")))
            #expect(draft.outcome == .applied)
            let created = try await commands.executeInTest(
                CatalogCommand(action: .createTour, actor: "test", tour: TourContent(name: "Night Walk", summary: "After dark"), status: .published))
            #expect(created.outcome == .applied)
            #expect(created.version == 1)
            let shown = try await TestServices.eventually(timeout: .seconds(10)) {
                try await tours(feed).tours.contains { $0.id == created.entityId && $0.name == "Night Walk" }
            }
            #expect(shown)
            #expect(try await tours(feed).tours.allSatisfy { $0.name != "Hidden draft" })

            let rejected = try await commands.executeInTest(CatalogCommand(action: .createTour, actor: "test", tour: TourContent(name: " ")))
            #expect(rejected.outcome == .rejected)
            #expect(rejected.errors.first?.field == "name")
        }
    }

    @Test("the demo content loads through the command path and the feed lists Students Tour (Beta); loading again changes nothing")
    func demoContent() async throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../deploy/demo/uncw-itour.json")
        let commandList = try ContentImport.commands(forJSON: try Data(contentsOf: file))
        try await withSuite { commands, feed in
            for command in commandList {
                #expect(try await commands.executeInTest(command).outcome == .applied)
            }
            let shown = try await TestServices.eventually(timeout: .seconds(10)) {
                try await tours(feed).tours.contains { $0.name == "Students Tour (Beta)" && $0.stopCount == 10 }
            }
            #expect(shown)
            // Same command ids: the stored results come back, nothing is applied twice.
            let again = try await commands.executeInTest(try #require(commandList.first { $0.action == .createPoi }))
            #expect(again.outcome == .applied)
            #expect(again.version == 1)
        }
    }
}
