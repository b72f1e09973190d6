import Foundation
import PostgresNIO
import Shared
import Testing
import TestSupport
@testable import Catalog

@Suite("Catalog schema upgrades", .stopsIfHung)
struct CatalogMigrationTests {
    @Test("v14 keeps POIs stored as jsonb before it: their content, drafts and categories read the same, and each stop's place is its draft's")
    func poiContentAsText() async throws {
        let database = try await TestServices.freshDatabase()
        try await TestServices.withPostgres(database) { client in
            let logger = TestServices.logger
            let before = CatalogMigrations.runner.migrations.filter { $0.version <= 13 }
            try await MigrationRunner(schema: "catalog", migrations: before).run(on: client, logger: logger)
            let now = Date(timeIntervalSince1970: 1_700_000_000)
            let plain = PoiState(id: UUID.random(), version: 1, status: .published,
                                 content: PoiContent(name: "Café \"Brontë\"", latitude: 53.8, longitude: -1.55, category: "Eat/Café"), updatedAt: now)
            let drafted = PoiState(id: UUID.random(), version: 2, status: .published,
                                   content: PoiContent(name: "Old Hall", latitude: 53.7, longitude: -1.5, category: "See/Museum"), updatedAt: now,
                                   draft: PoiContent(name: "New Hall", latitude: 51.5, longitude: -0.12, category: "See/Gallery", categories: ["Eat/Pub"]))
            for poi in [plain, drafted] {
                let content = CatalogEventCodec.text(poi.content), draft = poi.draft.map(CatalogEventCodec.text)
                try await client.query("""
                    INSERT INTO catalog.pois (id, version, status, name, content, updated_at, draft)
                    VALUES (\(poi.id), \(poi.version), \(poi.status.rawValue), \(poi.content.name), \(content)::jsonb, \(poi.updatedAt), \(draft)::jsonb)
                    """, logger: logger)
            }

            // Every migration after 13 runs (14 and the ones added since).
            #expect(try await CatalogMigrations.runner.run(on: client, logger: logger) == CatalogMigrations.runner.migrations.map(\.version).filter { $0 > 13 })
            let types = try await client.fetch("""
                SELECT column_name, data_type FROM information_schema.columns
                WHERE table_schema = 'catalog' AND table_name = 'pois' AND column_name IN ('content', 'draft') ORDER BY 1
                """, as: (String, String).self, logger: logger)
            #expect(types.map(\.1) == ["text", "text"])
            let repository = PostgresCatalogRepository(client: client, logger: logger)
            try await repository.withTransaction { transaction in
                let read = try await transaction.pois([plain.id, drafted.id])
                #expect(read[plain.id]?.state == plain)
                #expect(read[drafted.id]?.state == drafted)
                let places = try await transaction.stopPlaces([plain.id, drafted.id])
                #expect(places[plain.id] == StopPlace(name: "Café \"Brontë\"", latitude: 53.8, longitude: -1.55, hasDraft: false, isDeleted: false))
                #expect(places[drafted.id] == StopPlace(name: "New Hall", latitude: 51.5, longitude: -0.12, hasDraft: true, isDeleted: false))
                // A category rename's scan: the draft's categories count, as before.
                #expect(try await transaction.poisInCategory("Eat").map(\.id).sorted { $0.uuidString < $1.uuidString }
                        == [plain.id, drafted.id].sorted { $0.uuidString < $1.uuidString })
                #expect(try await transaction.poisInCategory("See/Museum").map(\.id) == [drafted.id])
                #expect(try await transaction.poisInCategory("Shop").isEmpty)

                // Written after the upgrade: the place follows the draft, and goes back to the content when the draft goes.
                var published = drafted
                published.content = drafted.draft!
                published.draft = nil
                published.version = 3
                try await transaction.savePoi(published, deleted: false)
                #expect(try await transaction.stopPlaces([drafted.id])[drafted.id]
                        == StopPlace(name: "New Hall", latitude: 51.5, longitude: -0.12, hasDraft: false, isDeleted: false))
                var redrafted = published
                redrafted.draft = PoiContent(name: "Newer Hall", latitude: 51.6, longitude: -0.1)
                redrafted.version = 4
                try await transaction.write(CatalogChanges(pois: [Stored(state: redrafted, isDeleted: false)]))
                #expect(try await transaction.stopPlaces([drafted.id])[drafted.id]
                        == StopPlace(name: "Newer Hall", latitude: 51.6, longitude: -0.1, hasDraft: true, isDeleted: false))
                var moved = redrafted
                moved.content.latitude = 52.0
                moved.content.longitude = -0.2
                moved.draft = nil
                moved.version = 5
                try await transaction.write(CatalogChanges(pois: [Stored(state: moved, isDeleted: false)]))
                #expect(try await transaction.stopPlaces([drafted.id])[drafted.id]
                        == StopPlace(name: "New Hall", latitude: 52.0, longitude: -0.2, hasDraft: false, isDeleted: false))
            }
        }
    }
}
