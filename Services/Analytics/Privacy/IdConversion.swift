import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import Shared

/// Converts the rows stored before ids were hashed (migration 12 renamed their tables `*_unhashed`): moves them into
/// the new tables, each id replaced by its pseudonym, and drops each `*_unhashed` table once it is empty. Runs as a
/// service once the HTTP server is up (a big table takes longer than a startup probe waits); the ingest, the pruning and
/// the erasures wait for it, so no device-day is counted while its old row is still unconverted, and readiness reports
/// "ids converted" not ready meanwhile. Nothing writes an `*_unhashed` table any more, so it is walked once, a range of
/// pages per batch (a TID range scan: linear in the table, never a re-scan of the dead rows left by earlier batches).
/// Idempotent and resumable: a batch's DELETE and INSERT are one statement, so a crash leaves every row in exactly one
/// of the two tables, and the next run goes on. Two replicas take turns on an advisory lock; the second finds nothing.
struct IdConversion: Sendable {
    let client: PostgresClient
    let schema: AnalyticsSchema
    let pseudonyms: IdPseudonyms
    let logger: Logger
    /// Heap pages per batch (8 kB each).
    var batchPages = 64

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
        Table(name: "funnel_activity", columns: ["tour_id", "kind", "poi_id", "device_id", "days"], ids: ["device_id"]),
    ]

    /// Converts what is left; returns the rows moved per table (empty when there was nothing to convert).
    @discardableResult
    func run() async throws -> [String: Int] {
        let schema = self.schema.name
        let logger = self.logger
        let lockKey = "itour.analytics.ids.\(schema)"
        return try await client.withConnection { connection in
            // Polled rather than waited for in Postgres, so a replica stopping while another converts stops at once.
            while true {
                let locked = try await connection.fetch("SELECT pg_try_advisory_lock(hashtext(\(lockKey)))", as: Bool.self, logger: logger)
                if locked.first == true { break }
                try await Task.sleep(for: .seconds(1))
            }
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
        let pages = try await connection.fetch("""
            SELECT CASE WHEN to_regclass(\(unhashed)) IS NULL THEN NULL
                        ELSE pg_relation_size(to_regclass(\(unhashed))) / current_setting('block_size')::bigint END
            """, as: Int?.self, logger: logger)
        guard let pages = pages.first ?? nil else { return 0 }
        let columns = table.columns.joined(separator: ", ")
        let values = table.columns.map { table.ids.contains($0) ? IdPseudonyms.sqlPseudonym($0, inner: "$1", outer: "$2") : $0 }
            .joined(separator: ", ")
        // Identifiers come from the fixed list above and the checked schema name; the pads and the page range are bound.
        let statement = """
            WITH moved AS (
                DELETE FROM \(unhashed) WHERE ctid >= $3::tid AND ctid < $4::tid
                RETURNING \(columns)
            )
            , inserted AS (
                INSERT INTO \(schema.name).\(table.name) (\(columns)) SELECT \(values) FROM moved RETURNING 1
            )
            SELECT count(*)::bigint FROM inserted
            """
        var total = 0
        var page = 0
        while page < pages {
            var binds = PostgresBindings()
            binds.append(ByteBuffer(bytes: pseudonyms.innerPad))
            binds.append(ByteBuffer(bytes: pseudonyms.outerPad))
            binds.append("(\(page),0)")
            binds.append("(\(page + batchPages),0)")
            total += try await connection.fetch(PostgresQuery(unsafeSQL: statement, binds: binds), as: Int.self, logger: logger).first ?? 0
            page += batchPages
        }
        // Nothing writes the table any more: empty once walked, unless a row was not where the walk looked (it is not
        // dropped then, and the next run walks it again).
        let left = try await connection.fetch(PostgresQuery(unsafeSQL: "SELECT EXISTS (SELECT 1 FROM \(unhashed))"), as: Bool.self, logger: logger)
        guard left.first == false else {
            throw IdConversionError(description: "\(unhashed) still holds rows after its conversion; it is walked again")
        }
        try await connection.query(PostgresQuery(unsafeSQL: "DROP TABLE \(unhashed)"), logger: logger)
        return total
    }
}

/// `IdConversion` as a service: started after the migrations, retried until it finishes, then opens `converted`.
struct IdConversionService: Service {
    let conversion: IdConversion
    let startup: StartupBarrier
    let converted: StartupBarrier

    func run() async throws {
        do {
            try await convertUntilDone()
        } catch is CancellationError {
            return
        }
        converted.open()
        // A service that returns stops the group: wait for the shutdown.
        try? await gracefulShutdown()
    }

    private func convertUntilDone() async throws {
        try await cancelWhenGracefulShutdown {
            try await startup.wait()
            var attempt = 0
            while true {
                do {
                    try await conversion.run()
                    break
                } catch is CancellationError {
                    throw CancellationError()
                } catch {
                    attempt += 1
                    conversion.logger.error("converting stored ids failed; retrying", metadata: ["error": "\(String(reflecting: error))", "attempt": "\(attempt)"])
                    try await Task.sleep(for: .milliseconds(min(10_000, 200 << min(attempt, 6))))
                }
            }
        }
    }
}

struct IdConversionError: Error, CustomStringConvertible {
    let description: String
}
