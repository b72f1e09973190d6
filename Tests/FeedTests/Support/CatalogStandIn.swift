import Foundation
import Logging
import ServiceLifecycle
import Shared
import Synchronization
import TestSupport

/// Plays catalog's part on the real broker, so the feed can be tested without Postgres: it answers the
/// feed's `catalog.snapshot` command the way catalog does (every entity in chunks when asked so, then a marker on
/// each partition of `catalog.events`) and publishes live changes on request.
final class CatalogStandIn: Service, Sendable {
    let configuration: KafkaConfiguration
    let producer: KafkaProducer
    private let content: Mutex<[UUID: CatalogEvent]>
    private let logger = TestServices.logger

    init(configuration: KafkaConfiguration, content: [CatalogEvent]) throws {
        self.configuration = configuration
        producer = try KafkaProducer(configuration: configuration, logger: TestServices.logger)
        self.content = Mutex(Dictionary(content.compactMap { event in event.entityId.map { ($0, event) } }, uniquingKeysWith: { $1 }))
    }

    /// Creates the suite's topics; call before the feed and `run` start.
    func prepare() async throws {
        try await producer.createTopics(Topic.all)
    }

    /// Publishes a change now and keeps it for later snapshots.
    func publish(_ event: CatalogEvent) async throws {
        if let id = event.entityId { content.withLock { $0[id] = event } }
        try await producer.send(message(event))
    }

    func message(_ event: CatalogEvent, partition: Int32? = nil) -> KafkaOutgoingMessage {
        KafkaOutgoingMessage(topic: configuration.topic(Topic.catalogEvents), key: event.entityId?.uuidString.lowercased(),
                             value: CatalogEventCodec.write(Envelope(type: event.kind.rawValue, source: "catalog", data: event)), partition: partition)
    }

    func run() async throws {
        let commands = try await KafkaConsumer.open(configuration: configuration,
                                                    subscription: .allPartitions(topics: [configuration.topic(Topic.catalogCommands)], from: .beginning),
                                                    logger: logger)
        try await cancelWhenGracefulShutdown {
            for try await message in commands {
                guard let command = try? EnvelopeDecoder.decode(CatalogCommand.self, from: message.value).data,
                      command.action == .snapshot else { continue }
                try await self.answerSnapshot(command.commandId, chunked: command.chunkedSnapshot == true)
            }
        }
        await commands.close()
    }

    private func answerSnapshot(_ snapshotId: UUID, chunked: Bool) async throws {
        let topic = configuration.topic(Topic.catalogEvents)
        let partitions = try await producer.partitionCounts(topics: [topic])[topic] ?? 1
        // In chunks of a few entities spread over the partitions, tours first, as catalog does.
        let events = content.withLock { Array($0.values) }
        let pois = events.compactMap { $0.kind == .poiChanged ? $0.poi : nil }
        let tours = events.compactMap { $0.kind == .tourChanged ? $0.tour : nil }
        let chunks = !chunked ? pois.map { CatalogEvent.changed($0, snapshotId: snapshotId) } + tours.map { CatalogEvent.changed($0, snapshotId: snapshotId) }
            : stride(from: 0, to: tours.count, by: 3).map { CatalogEvent.snapshotChunk(tours: Array(tours[$0..<min($0 + 3, tours.count)]), snapshotId: snapshotId) }
            + stride(from: 0, to: pois.count, by: 3).map { CatalogEvent.snapshotChunk(pois: Array(pois[$0..<min($0 + 3, pois.count)]), snapshotId: snapshotId) }
        var messages = chunks.enumerated().map { number, chunk in message(chunk, partition: Int32(number % partitions)) }
        for partition in 0..<Int32(partitions) {
            messages.append(message(CatalogEvent(kind: .snapshotMarker, snapshotId: snapshotId, partition: partition, partitionCount: partitions),
                                        partition: partition))
        }
        _ = try await producer.send(messages)
    }
}

/// The demo content (deploy/demo/uncw-itour.json) as catalog publishes it after `catalog load-demo`:
/// the same stable ids, every tour published.
enum DemoContent {
    static let file: ContentImportFile.JSONFile = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../deploy/demo/uncw-itour.json")
        do {
            return try JSONDecoder().decode(ContentImportFile.JSONFile.self, from: Data(contentsOf: url))
        } catch {
            fatalError("demo content unreadable at \(url.path): \(error)")
        }
    }()

    static var tourId: UUID { tours[0].id }
    static func poiId(_ legacyId: Int) -> UUID { ContentImportFile.stableId(ContentImportFile.Kind.poi.rawValue, legacyId) }

    static var pois: [PoiState] {
        (file.pois ?? []).map { poi in
            PoiState(id: poiId(poi.legacyId!), version: 1,
                     content: PoiContent(name: poi.name, summary: poi.summary ?? "", description: poi.description ?? "",
                                         latitude: poi.latitude, longitude: poi.longitude, category: poi.category,
                                         buildings: poi.buildings ?? [], pictures: poi.pictures ?? [], links: poi.links ?? [],
                                         legacyId: poi.legacyId),
                     updatedAt: Date(timeIntervalSince1970: 1_700_000_000))
        }
    }

    static var tours: [TourState] {
        (file.tours ?? []).map { tour in
            TourState(id: ContentImportFile.stableId(ContentImportFile.Kind.tour.rawValue, tour.legacyId!), version: 3, status: .published,
                      content: TourContent(name: tour.name, summary: tour.summary ?? "", purpose: tour.purpose ?? "", legacyId: tour.legacyId),
                      stops: (tour.stops ?? []).map(poiId), updatedAt: Date(timeIntervalSince1970: 1_700_000_000))
        }
    }

    static var events: [CatalogEvent] { pois.map { .changed($0) } + tours.map { .changed($0) } }
}
