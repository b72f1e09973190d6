import Foundation
import PostgresNIO
import Shared
import Testing
import TestSupport
@testable import Catalog

/// The command handler against the real Postgres: validation, at-most-once, optimistic concurrency and
/// the outbox written in the same transaction.
@Suite("Catalog commands", .stopsIfHung)
struct CommandHandlerTests {
    let logger = TestServices.logger

    /// A migrated database and a handler on it.
    func withHandler(_ body: @Sendable (CatalogCommandHandler, PostgresClient) async throws -> Void) async throws {
        try await HandlerFixture.with(body)
    }

    func outbox(_ client: PostgresClient) async throws -> [(topic: String, payload: String)] {
        try await client.fetch("SELECT topic, payload FROM catalog.outbox ORDER BY id", as: (String, String).self, logger: logger).map { ($0.0, $0.1) }
    }

    static let quad = PoiContent(name: "Historic Quad", latitude: 34.226101, longitude: -77.876705, buildings: ["James Hall"])

    @Test("a valid create is applied with version 1 and its event and result are in the outbox")
    func createWritesOutbox() async throws {
        try await withHandler { handler, client in
            let command = CatalogCommand(action: .createPoi, actor: "editor@example.edu", poi: Self.quad)
            let result = try await handler.handle(command)
            #expect(result.outcome == .applied)
            #expect(result.version == 1)
            #expect(result.poi?.content == Self.quad)
            let rows = try await outbox(client)
            #expect(rows.map(\.topic).map { $0.split(separator: ".", maxSplits: 1).last.map(String.init) } == ["catalog.events", "catalog.command-results"])
            let event = try EnvelopeDecoder.decode(CatalogEvent.self, from: Array(rows[0].payload.utf8))
            #expect(event.type == "poi.changed")
            #expect(event.data.poi?.content.name == "Historic Quad")
            let audit = try await client.fetch("SELECT actor, action FROM catalog.audit_log", as: (String, String).self, logger: logger)
            #expect(audit.map(\.0) == ["editor@example.edu"])
            #expect(audit.map(\.1) == ["poi.create"])
        }
    }

    @Test("invalid content is rejected with field errors naming the rule, and nothing is written but the result")
    func validation() async throws {
        try await withHandler { handler, client in
            var bad = Self.quad
            bad.latitude = 91
            bad.name = "  "
            bad.links = [MediaLink(name: "x", type: .page, url: "javascript:alert(1)")]
            let result = try await handler.handle(CatalogCommand(action: .createPoi, actor: "a", poi: bad))
            #expect(result.outcome == .rejected)
            #expect(result.errors.contains(FieldError(field: "latitude", message: "Latitude must be between -90 and 90")))
            #expect(result.errors.contains(FieldError(field: "name", message: "Name is required")))
            #expect(result.errors.contains(FieldError(field: "links[0].url", message: "URL must be an http or https URL")))
            #expect(try await outbox(client).count == 1)
            let pois = try await client.fetch("SELECT count(*)::bigint FROM catalog.pois", as: Int.self, logger: logger)
            #expect(pois == [0])
            let tour = try await handler.handle(CatalogCommand(action: .createTour, actor: "a", tour: TourContent(name: "")))
            #expect(tour.errors == [FieldError(field: "name", message: "Tour's Name is required")])
        }
    }

    @Test("a command delivered twice is applied once")
    func idempotent() async throws {
        try await withHandler { handler, client in
            let create = CatalogCommand(action: .createPoi, actor: "a", poi: Self.quad)
            let first = try await handler.handle(create)
            var renamed = Self.quad
            renamed.name = "Quad"
            let update = CatalogCommand(action: .updatePoi, actor: "a", entityId: first.entityId, poi: renamed)
            let once = try await handler.handle(update)
            var twice = try await handler.handle(update)
            #expect(twice.repeated == true, "the second answer says it is a repeat")
            twice.repeated = nil
            #expect(once == twice)
            #expect(once.version == 2)
            let versions = try await client.fetch("SELECT version FROM catalog.pois", as: Int.self, logger: logger)
            #expect(versions == [2])
            // create + update: two events and two results; the redelivery only answers again.
            let topics = try await outbox(client).map { $0.topic.split(separator: ".", maxSplits: 1).last.map(String.init) }
            #expect(topics == ["catalog.events", "catalog.command-results", "catalog.events", "catalog.command-results", "catalog.command-results"])
        }
    }

    @Test("a stale expectedVersion is a conflict carrying the current state, never an overwrite")
    func conflict() async throws {
        try await withHandler { handler, _ in
            let created = try await handler.handle(CatalogCommand(action: .createTour, actor: "a", tour: TourContent(name: "Campus")))
            let id = try #require(created.entityId)
            let first = try await handler.handle(CatalogCommand(action: .updateTour, actor: "a", entityId: id, expectedVersion: 1,
                                                                tour: TourContent(name: "Campus Tour")))
            #expect(first.outcome == .applied)
            let stale = try await handler.handle(CatalogCommand(action: .updateTour, actor: "b", entityId: id, expectedVersion: 1,
                                                                tour: TourContent(name: "Other")))
            #expect(stale.outcome == .conflict)
            #expect(stale.version == 2)
            #expect(stale.tour?.content.name == "Campus Tour")
        }
    }

    @Test("stops must be existing POIs, once each; deleting a POI removes it from tours")
    func stops() async throws {
        try await withHandler { handler, _ in
            let poiA = try #require(try await handler.handle(CatalogCommand(action: .createPoi, actor: "a", poi: Self.quad)).entityId)
            let poiB = try #require(try await handler.handle(CatalogCommand(action: .createPoi, actor: "a", poi: Self.quad)).entityId)
            let tour = try #require(try await handler.handle(CatalogCommand(action: .createTour, actor: "a", tour: TourContent(name: "T"))).entityId)
            let unknown = try await handler.handle(CatalogCommand(action: .setTourStops, actor: "a", entityId: tour, stops: [poiA, UUID()]))
            #expect(unknown.outcome == .rejected)
            let duplicate = try await handler.handle(CatalogCommand(action: .setTourStops, actor: "a", entityId: tour, stops: [poiA, poiA]))
            #expect(duplicate.outcome == .rejected)
            let ordered = try await handler.handle(CatalogCommand(action: .setTourStops, actor: "a", entityId: tour, stops: [poiB, poiA]))
            #expect(ordered.tour?.stops == [poiB, poiA])
            let deleted = try await handler.handle(CatalogCommand(action: .deletePoi, actor: "a", entityId: poiB))
            #expect(deleted.outcome == .applied)
            let snapshot = try await handler.handle(CatalogCommand(action: .snapshot, actor: "feed"))
            #expect(snapshot.message == "republished 1 tours, 1 POIs, 0 categories, 0 media items, 0 calendar entries, 0 people, 0 pages, 0 featured items")
            let again = try await handler.handle(CatalogCommand(action: .updateTour, actor: "a", entityId: tour, tour: TourContent(name: "T2")))
            #expect(again.tour?.stops == [poiA])
        }
    }

    @Test("a snapshot asked for in chunks sends its entities in chunks on the partitions in turn, tours first, halving a chunk too large, then its records, then a marker on each partition")
    func snapshotInChunks() async throws {
        try await withHandler { handler, client in
            // 600 POIs: three chunks of 200 (as few as hold at most 256, of even size); descriptions of 3 000 bytes
            // make each pass 512 KiB, so each is halved. After the tours' chunk that is seven chunks on four partitions.
            var content = Self.quad
            content.description = String(repeating: "d", count: 3_000)
            let rows = (0..<600).map { n in
                var poi = content
                poi.name = "POI \(n)"
                return CatalogBatchRow(label: "row \(n)", commands: [CatalogCommand(action: .createPoi, actor: "a", poi: poi)])
            }
            let imported = try await handler.handle(CatalogCommand(action: .importBatch, actor: "a", rows: rows))
            #expect(imported.outcome == .applied, "\(imported.message ?? "")")
            let tour = try await handler.handle(CatalogCommand(action: .createTour, actor: "a", tour: TourContent(name: "T")))
            let category = try await handler.handle(CatalogCommand(action: .createCategory, actor: "a", category: .ensuring(path: "Eat/Cafe")))
            let before = try await outbox(client).count
            let reader = try await CatalogEventsReader(handler.topics)
            _ = try await reader.next()

            let snapshot = try await handler.handle(CatalogCommand(action: .snapshot, actor: "feed", chunkedSnapshot: true))
            #expect(snapshot.message == "republished 1 tours, 600 POIs, 2 categories, 0 media items, 0 calendar entries, 0 people, 0 pages, 0 featured items")
            let messages = try await reader.next()
            let chunks = try CatalogEventsReader.chunks(messages)
            await reader.close()
            // Categories and records go straight to the topic too, each keyed by its id as its later changes are.
            let records = messages.filter { !($0.keyString ?? "").hasPrefix("catalog.snapshot-chunk/") }
            #expect(records.count == 2 && records.contains { $0.keyString == category.entityId?.uuidString.lowercased() })
            // The chunks go out before catalog reads the categories and records, so on each partition they come first.
            let chunkMessages = messages.filter { ($0.keyString ?? "").hasPrefix("catalog.snapshot-chunk/") }
            #expect(records.allSatisfy { record in chunkMessages.allSatisfy { $0.partition != record.partition || $0.offset < record.offset } })
            #expect(chunks.map { $0.event.pois?.count ?? 0 } == [0, 100, 100, 100, 100, 100, 100])
            #expect(chunks.first?.event.tours?.map(\.id) == [tour.entityId].compactMap { $0 })
            #expect(chunks.map(\.number) == Array(0..<7))
            #expect(chunks.map(\.partition) == [0, 1, 2, 3, 0, 1, 2])
            #expect(chunks.allSatisfy { $0.bytes <= CatalogCommandHandler.snapshotChunkBytes })
            #expect(Set(chunks.flatMap { $0.event.entityEvents.compactMap(\.entityId) }).count == 601)
            #expect(chunks.allSatisfy { $0.event.entityEvents.allSatisfy { $0.snapshotId == snapshot.commandId } })
            // The markers, through the outbox, after the chunks were acknowledged.
            let written = try await client.fetch("SELECT key, partition, payload FROM catalog.outbox ORDER BY id OFFSET \(before)",
                                                 as: (String?, Int32?, String).self, logger: logger)
            let markers = try written.dropLast().map { try EnvelopeDecoder.decode(CatalogEvent.self, from: Array($0.2.utf8)).data }
            #expect(markers.map(\.kind) == Array(repeating: .snapshotMarker, count: 4))
            #expect(markers.compactMap(\.partition) == [0, 1, 2, 3])
        }
    }

    @Test("a snapshot reuses chunks encoded before (by a snapshot or ahead) when no POI changed, and never a chunk whose POIs changed or were deleted")
    func snapshotReusesChunks() async throws {
        try await withHandler { handler, client in
            var ids: [UUID] = []
            for n in 0..<5 {
                var poi = Self.quad
                poi.name = "POI \(n)"
                ids.append(try #require(try await handler.handle(CatalogCommand(action: .createPoi, actor: "a", poi: poi)).entityId))
            }
            let reader = try await CatalogEventsReader(handler.topics)
            func snapshot() async throws -> (id: UUID, pois: [PoiState], chunkSnapshotIds: Set<UUID>) {
                _ = try await reader.next()
                let result = try await handler.handle(CatalogCommand(action: .snapshot, actor: "feed", chunkedSnapshot: true))
                let chunks = try CatalogEventsReader.chunks(try await reader.next()).map(\.event)
                return (result.commandId, chunks.flatMap { $0.pois ?? [] }, Set(chunks.compactMap(\.snapshotId)))
            }
            let first = try await snapshot()
            #expect(first.pois.map(\.id) == ids.sorted { $0.uuidString < $1.uuidString } && first.chunkSnapshotIds == [first.id])
            let unchanged = try await snapshot()
            #expect(unchanged.pois == first.pois && unchanged.chunkSnapshotIds == [first.id], "chunks encoded again though nothing changed")

            var renamed = Self.quad
            renamed.name = "Renamed"
            _ = try await handler.handle(CatalogCommand(action: .updatePoi, actor: "a", entityId: ids[1], poi: renamed))
            _ = try await handler.handle(CatalogCommand(action: .deletePoi, actor: "a", entityId: ids[2]))
            let changed = try await snapshot()
            #expect(changed.chunkSnapshotIds == [changed.id])
            #expect(Set(changed.pois.map(\.id)) == Set(ids).subtracting([ids[2]]))
            #expect(changed.pois.first { $0.id == ids[1] }.map { ($0.version, $0.content.name) } ?? (0, "") == (2, "Renamed"))

            // Encoded ahead (the warmer, after commands pause): the next snapshot sends those chunks, which name no snapshot.
            #expect(try await handler.warmSnapshotCache() == 0)
            _ = try await handler.handle(CatalogCommand(action: .deletePoi, actor: "a", entityId: ids[3]))
            #expect(try await handler.warmSnapshotCache() == 1)
            let warmed = try await snapshot()
            #expect(warmed.chunkSnapshotIds.isEmpty && Set(warmed.pois.map(\.id)) == Set(ids).subtracting([ids[2], ids[3]]))
            await reader.close()
        }
    }

    @Test("a snapshot asked for without chunks (a reader built before them) sends one event per entity, POIs before tours, then the markers")
    func snapshotPerEntity() async throws {
        try await withHandler { handler, client in
            var pois: [CatalogCommandResult] = []
            for n in 0..<3 {
                var poi = Self.quad
                poi.name = "POI \(n)"
                pois.append(try await handler.handle(CatalogCommand(action: .createPoi, actor: "a", poi: poi)))
            }
            let tour = try await handler.handle(CatalogCommand(action: .createTour, actor: "a", tour: TourContent(name: "T")))
            let before = try await outbox(client).count

            let snapshot = try await handler.handle(CatalogCommand(action: .snapshot, actor: "feed"))
            #expect(snapshot.message == "republished 1 tours, 3 POIs, 0 categories, 0 media items, 0 calendar entries, 0 people, 0 pages, 0 featured items")
            let written = try await client.fetch("SELECT key, partition, payload FROM catalog.outbox ORDER BY id OFFSET \(before)",
                                                 as: (String?, Int32?, String).self, logger: logger)
            let envelopes = try written.dropLast().map { try EnvelopeDecoder.decode(CatalogEvent.self, from: Array($0.2.utf8)) }
            #expect(envelopes.map(\.data.kind) == [.poiChanged, .poiChanged, .poiChanged, .tourChanged] + Array(repeating: .snapshotMarker, count: 4))
            #expect(Set(envelopes.prefix(3).compactMap(\.data.entityId)) == Set(pois.compactMap(\.entityId)))
            #expect(envelopes[3].data.entityId == tour.entityId)
            #expect(written.prefix(4).map(\.0) == envelopes.prefix(4).map { $0.data.entityId?.uuidString.lowercased() })
            #expect(envelopes.allSatisfy { $0.data.snapshotId == snapshot.commandId })
        }
    }

    @Test("characters a URI cannot hold are percent-encoded in links, pictures and website")
    func urlsEncoded() async throws {
        try await withHandler { handler, _ in
            var poi = Self.quad
            poi.links = [MediaLink(name: "x", type: .page, url: "https://example.edu/?q=<script> x")]
            poi.pictures = ["https://example.edu/a b.jpg"]
            poi.website = "https://example.edu/%7Ealready"
            let result = try await handler.handle(CatalogCommand(action: .createPoi, actor: "a", poi: poi))
            #expect(result.outcome == .applied)
            #expect(result.poi?.content.links.first?.url == "https://example.edu/?q=%3Cscript%3E%20x")
            #expect(result.poi?.content.pictures == ["https://example.edu/a%20b.jpg"])
            #expect(result.poi?.content.website == "https://example.edu/%7Ealready")
        }
    }
}

@Suite("Catalog's stored record kinds")
struct CatalogStoredKindsTests {
    @Test("catalog keeps every kind of catalog record: each has its table, commands and snapshot")
    func everyKindStored() {
        #expect(CatalogRecordKinds.all.filter { !($0 is any StoredRecord.Type) }.isEmpty)
    }
}
