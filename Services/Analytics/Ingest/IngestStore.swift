import Foundation
import Shared

/// A batch read from `tracking.events`, ready to count.
struct IngestBatch: Sendable {
    /// Decoded, valid events, in the order they were read (the first of two with one id is kept).
    var events: [TrackingEvent]
    var topic: String
    /// Per partition, the next offset to read once this batch is counted.
    var nextOffsets: [Int32: Int64]
    /// Per partition, the next offset this reader believes is stored (from its assignment or its own
    /// last batch). A stored offset behind it means the tables were replaced under the reader (a replay
    /// was activated): the batch is not applied and the reader starts again from the stored offsets.
    var expectedOffsets: [Int32: Int64] = [:]
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
    /// Keeps the latest name of a tour or POI, for reports.
    func saveName(entityId: UUID, kind: String, name: String, version: Int) async throws
    /// How many event ids have been counted (for tests, benchmarks and the replay tool's summary).
    func countedEvents() async throws -> Int
}
