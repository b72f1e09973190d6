import Foundation
import Logging
import Shared

/// `catalog.snapshot` (DESIGN.md, "When the broker loses its log"): every live entity onto `catalog.events` again.
extension Work {
    /// Republishes every live entity, in chunks spread over the partitions when the asker reads them (media items,
    /// tours, POIs, then categories and the other records), else one event per entity (categories, records, POIs,
    /// tours, as before chunks); then a marker on each partition: a reader that saw every marker has read every entity
    /// before it.
    mutating func snapshot(partitions: Int) async throws -> CatalogCommandResult {
        let snapshotId = command.commandId
        let topic = topics.topic(Topic.catalogEvents), requestId = requestId
        let headers = requestId.map { [(MessageHeader.requestId, Array($0.utf8))] } ?? []
        let chunked = command.chunkedSnapshot == true
        // The first kind (media items) before the POIs: a POI shows the library files it names, so a reader that has them
        // renders each POI once. The other kinds follow the categories.
        let kinds = CatalogRecordKinds.all.compactMap { $0 as? any StoredRecord.Type }
        var recordCounts: [String] = []
        for kind in kinds.prefix(1) { recordCounts.append(try await republish(kind, snapshotId: snapshotId)) }
        let tours = try await transaction.liveTours()
        var poiCount = 0
        if chunked {
            // Straight to the topic: a city's chunks are tens of megabytes, which the outbox would write to Postgres
            // and read back only to send them. Nothing is lost: they are delivered before the command's transaction
            // commits (a failure redelivers the command), and the markers, in the outbox, go after them. Sent before
            // the categories and other records are read, so a reader starts on the POIs, most of its work, meanwhile.
            // Tours first: a reader can then show each POI as it arrives (a POI is visible through its tours).
            let pois = try await (snapshotCache ?? SnapshotCache()).poiPayloads(in: transaction) { pois in
                Work.chunkPayloads(pois: pois, snapshotId: snapshotId)
            }
            poiCount = pois.count
            sendOutboxDirectly(headers: headers)
            directSends.send((Work.chunkPayloads(tours: tours, snapshotId: snapshotId) + pois.payloads).enumerated().map { number, payload in
                KafkaOutgoingMessage(topic: topic, key: "\(CatalogEvent.Kind.snapshotChunk.rawValue)/\(number)", value: payload,
                                     partition: Int32(number % max(partitions, 1)), headers: headers)
            })
        }
        let categories = try await transaction.liveCategories()
        for category in categories { try publish(.changed(category, snapshotId: snapshotId)) }
        for kind in kinds.dropFirst() { recordCounts.append(try await republish(kind, snapshotId: snapshotId)) }
        if chunked {
            sendOutboxDirectly(headers: headers)
        } else {
            let pois = try await transaction.livePois()
            poiCount = pois.count
            let events = pois.map { CatalogEvent.changed($0, snapshotId: snapshotId) } + tours.map { CatalogEvent.changed($0, snapshotId: snapshotId) }
            outbox += await events.concurrentMapOffThePool { event in
                OutboxEntry(topic: topic, key: event.entityId?.uuidString.lowercased(), partition: nil, payload: Work.payload(event), requestId: requestId)
            }
        }
        for partition in 0..<Int32(partitions) {
            publish(CatalogEvent(kind: .snapshotMarker, snapshotId: snapshotId, partition: partition, partitionCount: partitions, answers: answers),
                        partition: partition)
        }
        return CatalogCommandResult(commandId: command.commandId, action: command.action, outcome: .applied,
                                    message: "republished \(tours.count) tours, \(poiCount) POIs, \(categories.count) categories, \(recordCounts.joined(separator: ", "))")
    }

    /// Every live record of a kind, as `<kind>.changed`; says how many, for the result's message.
    private mutating func republish<Content: StoredRecord>(_: Content.Type, snapshotId: UUID) async throws -> String {
        let records = try await transaction.liveRecords(Content.self)
        for record in records { publish(CatalogRecordEvent.changed(record, snapshotId: snapshotId)) }
        return "\(records.count) \(Content.plural)"
    }

    /// A chunked snapshot's categories and records go straight to the topic too (a city's ten thousand events and
    /// people), each keyed by its id as its later changes will be, with the chunks' guarantee: delivered before the commit.
    private mutating func sendOutboxDirectly(headers: [(String, [UInt8])]) {
        directSends.send(outbox.map { entry in
            KafkaOutgoingMessage(topic: entry.topic, key: entry.key, value: Array(entry.payload.utf8), partition: entry.partition, headers: headers)
        })
        outbox.removeAll()
    }
}
