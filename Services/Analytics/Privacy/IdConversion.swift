import Foundation
import Logging
import PostgresNIO
import Shared

/// Converts the rows stored before ids were hashed (migration 12 renamed their tables `*_unhashed`): moves them into
/// the new tables in batches, each id replaced by its pseudonym, and drops each `*_unhashed` table once it is empty.
/// Runs at start-up after the migrations and before the ingest, the erasures and the pruning start. Idempotent and
/// resumable: a batch's DELETE and INSERT are one statement, so a crash leaves every row in exactly one of the two
/// tables, and the next start goes on. Two replicas starting together take turns on an advisory lock; the second
/// finds nothing left.
struct IdConversion: Sendable {
    let client: PostgresClient
    let schema: AnalyticsSchema
    let pseudonyms: IdPseudonyms
    let logger: Logger
    var batchSize = 5_000

    /// A table holding ids: its columns in order, and which of them hold a device or tourist id.
    struct Table: Sendable {
        let name: String
        let columns: [String]
        let ids: Set<String>
    }

    /// Every table that holds a device or tourist id (the event-level tables, docs/PRIVACY.md).
    static let tables: [Table] = [
        Table(name: "device_activity", columns: ["scope", "device_id", "days"], ids: ["device_id"]),
        Table(name: "tourist_activity", columns: ["scope", "tourist_id", "days"], ids: ["tourist_id"]),
        Table(name: "device_days", columns: ["scope", "day", "device_id"], ids: ["device_id"]),
        Table(name: "devices", columns: ["device_id", "registered_at", "event_id", "platform", "model", "os_version", "app_version"],
              ids: ["device_id"]),
        Table(name: "tour_marks", columns: ["device_id", "occurred_at", "event_id", "kind", "tour_id", "tourist_id"],
              ids: ["device_id", "tourist_id"]),
        Table(name: "untoured_events", columns: ["event_id", "device_id", "tourist_id", "occurred_at", "type", "poi_id", "dwell_seconds", "tour_id"],
              ids: ["device_id", "tourist_id"]),
        Table(name: "stop_visits", columns: ["tour_id", "poi_id", "day", "device_id"], ids: ["device_id"]),
        Table(name: "credited_members", columns: ["tour_id", "day", "kind", "member", "events"], ids: ["member"]),
    ]

    /// Converts what is left; returns the rows moved per table (empty when there was nothing to convert).
    @discardableResult
    func run() async throws -> [String: Int] {
        let schema = self.schema.name
        let logger = self.logger
        let lockKey = "itour.analytics.ids.\(schema)"
        return try await client.withConnection { connection in
            try await connection.query("SELECT pg_advisory_lock(hashtext(\(lockKey)))", logger: logger)
            do {
                var moved: [String: Int] = [:]
                for table in Self.tables {
                    let rows = try await convert(table, on: connection)
                    if rows > 0 { moved[table.name] = rows }
                }
                try await connection.query("SELECT pg_advisory_unlock(hashtext(\(lockKey)))", logger: logger)
                if !moved.isEmpty { logger.notice("stored ids converted to pseudonyms", metadata: ["rows": "\(moved)"]) }
                return moved
            } catch {
                _ = try? await connection.query("SELECT pg_advisory_unlock(hashtext(\(lockKey)))", logger: logger)
                throw error
            }
        }
    }

    private func convert(_ table: Table, on connection: PostgresConnection) async throws -> Int {
        let unhashed = "\(schema.name).\(table.name)_unhashed"
        let exists = try await connection.fetch("SELECT to_regclass(\(unhashed)) IS NOT NULL", as: Bool.self, logger: logger)
        guard exists.first == true else { return 0 }
        let columns = table.columns.joined(separator: ", ")
        let values = table.columns.map { table.ids.contains($0) ? IdPseudonyms.sqlPseudonym($0, inner: "$1", outer: "$2") : $0 }
            .joined(separator: ", ")
        // Identifiers come from the fixed list above and the checked schema name; the pads and the batch size are bound.
        let statement = """
            WITH moved AS (
                DELETE FROM \(unhashed) WHERE ctid = ANY(ARRAY(SELECT ctid FROM \(unhashed) LIMIT $3))
                RETURNING \(columns)
            )
            , inserted AS (
                INSERT INTO \(schema.name).\(table.name) (\(columns)) SELECT \(values) FROM moved RETURNING 1
            )
            SELECT count(*)::bigint FROM inserted
            """
        var total = 0
        while true {
            var binds = PostgresBindings()
            binds.append(ByteBuffer(bytes: pseudonyms.innerPad))
            binds.append(ByteBuffer(bytes: pseudonyms.outerPad))
            binds.append(batchSize)
            let moved = try await connection.fetch(PostgresQuery(unsafeSQL: statement, binds: binds), as: Int.self, logger: logger).first ?? 0
            total += moved
            if moved == 0 { break }
        }
        try await connection.query(PostgresQuery(unsafeSQL: "DROP TABLE \(unhashed)"), logger: logger)
        return total
    }
}
