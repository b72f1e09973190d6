import Foundation
import Shared

/// A batch read from `tracking.events`, ready to count. The work that needs no database (one event per
/// id, sorted ids, the aggregates' rows) is done when it is made, while the previous batch's transaction
/// runs, not inside this one's.
struct IngestBatch: Sendable {
    /// Valid events, one per id (the first of two with one id is kept), in the order they were read.
    let events: [TrackingEvent]
    /// How many valid events were read, repeats within the batch included.
    let received: Int
    /// The events' ids in byte order: the dedupe insert walks the index in order, and two writers lock
    /// in one order.
    let sortedIds: [UUID]
    /// What the events add if none of them was counted before, the usual case.
    let delta: AggregateDelta
    var topic: String
    /// Per partition, the next offset to read once this batch is counted.
    var nextOffsets: [Int32: Int64]
    /// Per partition, the next offset this reader believes is stored (from its assignment or its own
    /// last batch). A stored offset behind it means the tables were replaced under the reader (a replay
    /// was activated): the batch is not applied and the reader starts again from the stored offsets.
    var expectedOffsets: [Int32: Int64] = [:]
    /// Per partition, the start of a log that replaced the one the stored offsets were in (see
    /// `KafkaConsumer.LogMove`). Such a partition's offset is stored as is, not only moved forward: the batch's
    /// own next offset there when it read any of the new log (read after the move, so from the new log), else
    /// this start. Neither leaves the old log's offset behind, beyond the new log's end (issue 50), nor an
    /// offset behind what the batch counted (which would show as messages waiting that never drain).
    var resetOffsets: [Int32: Int64] = [:]

    init(events: [TrackingEvent], topic: String, nextOffsets: [Int32: Int64], expectedOffsets: [Int32: Int64] = [:]) {
        var seen = Set<UUID>(minimumCapacity: events.count)
        let unique = events.filter { seen.insert($0.id).inserted }
        self.events = unique
        received = events.count
        sortedIds = unique.map(\.id).sorted { $0.orderKey < $1.orderKey }
        delta = AggregateDelta(unique)
        self.topic = topic
        self.nextOffsets = nextOffsets
        self.expectedOffsets = expectedOffsets
    }
}

extension IngestBatch {
    /// The same batch (topic, offsets) with other events: a part of it, when its events are applied in halves.
    func with(events: [TrackingEvent]) -> IngestBatch {
        var part = IngestBatch(events: events, topic: topic, nextOffsets: nextOffsets, expectedOffsets: expectedOffsets)
        part.resetOffsets = resetOffsets
        return part
    }
}

enum ApplyOutcome: Sendable, Equatable {
    /// The batch is counted and its offsets stored. `new` events were counted; `duplicates` had been before.
    case applied(new: Int, duplicates: Int)
    /// Nothing was written: the stored offsets are behind what the reader expected.
    case offsetsMovedBack
}

/// Where the ingest keeps its aggregates, the ids it counted and its offsets. `apply` is one transaction,
/// so a crash at any point leaves either all of a batch counted with its offsets, or none of it.
protocol IngestStore: Sendable {
    /// Next offset to read per partition of `topic`, as stored with the aggregates.
    func storedOffsets(topic: String) async throws -> [Int32: Int64]
    /// Counts the batch's events whose ids were never counted and stores its offsets, in one transaction.
    func apply(_ batch: IngestBatch) async throws -> ApplyOutcome
    /// Keeps the latest name of each entity (and a tour's published stops), for reports: one statement for
    /// a snapshot chunk's entities. An older version than the stored one changes nothing.
    func saveNames(_ names: [CatalogName]) async throws
    /// How many event ids have been counted (for tests, benchmarks and the replay tool's summary).
    func countedEvents() async throws -> Int
}

/// The name analytics keeps of a tour, POI or record, as of one version.
struct CatalogName: Sendable, Equatable {
    var entityId: UUID
    var kind: String
    var name: String
    var version: Int
    /// A tour's published stops; nil for other kinds (and for tours named before analytics kept stops).
    var stops: [UUID]?
}

extension IngestStore {
    func saveName(entityId: UUID, kind: String, name: String, version: Int, stops: [UUID]?) async throws {
        try await saveNames([CatalogName(entityId: entityId, kind: kind, name: name, version: version, stops: stops)])
    }
}
