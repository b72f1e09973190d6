import Foundation
import Logging
import PostgresNIO
import Shared
import Synchronization

/// `analytics replay`: rebuilds every aggregate into fresh tables, for when report definitions change.
///
/// - `--from-beginning` reads `tracking.events` from the start of every partition up to its end at the
///   time of the call, and stores the offsets it reached with the tables.
/// - `--file F` reads events (or whole envelopes) from a JSON-lines file instead.
/// - `--activate` swaps the rebuilt schema in for `analytics` in one transaction, between two ingest
///   batches. A running service notices that the stored offsets moved back and reads on from them, so
///   what arrived after the replay stopped is counted in the new tables too.
struct ReplayTool {
    enum Command: Equatable {
        case fromBeginning(AnalyticsSchema)
        case file(String, AnalyticsSchema)
        case activate(AnalyticsSchema)
    }

    /// What a build did, printed at the end.
    struct Summary: Sendable, CustomStringConvertible {
        var read = 0
        var counted = 0
        var duplicates = 0
        var rejected: [String: Int] = [:]

        var description: String {
            var text = "read \(read), counted \(counted), duplicates \(duplicates), rejected \(rejected.values.reduce(0, +))"
            for (reason, count) in rejected.sorted(by: { $0.value > $1.value }).prefix(10) { text += "\n  \(count) × \(reason)" }
            return text
        }

        /// Counts the batch into `store`; events the database refuses are not counted, and listed with their reason.
        mutating func count(_ batch: DecodedBatch, into store: PostgresIngestStore, logger: Logger) async throws {
            let refused = Mutex<[String]>([])
            let outcome = try await TrackingIngest.applySettingAside(batch.batch, to: store, logger: logger) { _, reason in
                refused.withLock { $0.append(reason) }
            }
            add(batch, outcome)
            for reason in refused.withLock({ $0 }) { rejected[reason, default: 0] += 1 }
        }

        mutating func add(_ batch: DecodedBatch, _ outcome: ApplyOutcome) {
            read += batch.messageCount
            for (_, rejection) in batch.rejected { rejected[rejection.reason, default: 0] += 1 }
            if case .applied(let new, let duplicated) = outcome {
                counted += new
                duplicates += duplicated
            }
        }
    }

    let command: Command
    let settings: ServiceSettings
    /// The live service's (`ANALYTICS_ID_KEY`): the rebuilt tables must hold the same pseudonyms to be swapped in.
    let pseudonyms: IdPseudonyms
    var batchSize = 10_000

    func run() async throws {
        LoggingSetup.bootstrap(format: .text, level: settings.logLevel)
        var logger = Logger(label: "analytics-replay")
        logger.logLevel = settings.logLevel
        let client = settings.database.makeClient(logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            switch command {
            case .fromBeginning(let schema):
                let store = try await Self.freshStore(client: client, schema: schema, pseudonyms: pseudonyms, logger: logger)
                let summary = try await replayTopic(into: store, logger: logger)
                print("replayed \(settings.kafka.topic(Topic.trackingEvents)) into schema \(schema.name): \(summary)")
            case .file(let path, let schema):
                let store = try await Self.freshStore(client: client, schema: schema, pseudonyms: pseudonyms, logger: logger)
                let summary = try await replayFile(path, into: store, logger: logger)
                print("replayed \(path) into schema \(schema.name): \(summary)")
            case .activate(let schema):
                let previous = try await Self.activate(schema, client: client, pseudonyms: pseudonyms, logger: logger)
                print("schema \(schema.name) is now analytics; the previous tables are in schema \(previous)")
            }
        }
    }

    /// Drops and recreates `schema` with the current migrations.
    static func freshStore(client: PostgresClient, schema: AnalyticsSchema, pseudonyms: IdPseudonyms, logger: Logger) async throws -> PostgresIngestStore {
        try await client.query("DROP SCHEMA IF EXISTS \(unescaped: schema.name) CASCADE", logger: logger)
        try await schema.migrations.run(on: client, logger: logger)
        try await IdConversion(client: client, schema: schema, pseudonyms: pseudonyms, logger: logger).run()
        try await Self.checkKey(pseudonyms, schemas: [.live, schema], client: client, logger: logger)
        // The live erasures first, so the rebuild drops the erased devices' events as the live ingest does.
        try await client.withConnection { connection in
            _ = try await Self.carryErasures(from: .live, into: schema, on: connection, logger: logger)
        }
        return PostgresIngestStore(client: client, schema: schema, logger: logger)
    }

    /// Reads every partition from its beginning to the end it had when the replay started.
    func replayTopic(into store: PostgresIngestStore, logger: Logger) async throws -> Summary {
        let topic = settings.kafka.topic(Topic.trackingEvents)
        let consumer = try await KafkaConsumer.open(configuration: settings.kafka, subscription: .allPartitions(topics: [topic], from: .beginning),
                                                    logger: logger)
        var summary = Summary()
        while true {
            let batch = DecodedBatch(try await consumer.poll(maxMessages: batchSize, timeout: .milliseconds(500)), topic: topic,
                                     pseudonyms: pseudonyms)
            if batch.isEmpty {
                // Lag is measured against each partition's end: zero everywhere and nothing more arriving means done.
                if try await consumer.lag().values.allSatisfy({ $0 == 0 }) { break }
                continue
            }
            try await summary.count(batch, into: store, logger: logger)
            FileHandle.standardError.write(Data("\rreplay: \(summary.read) messages".utf8))
        }
        FileHandle.standardError.write(Data("\n".utf8))
        await consumer.close()
        return summary
    }

    /// Reads a JSON-lines file: each line a tracking.events envelope or a bare event.
    func replayFile(_ path: String, into store: PostgresIngestStore, logger: Logger) async throws -> Summary {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw ReplayError(description: "cannot read \(path)") }
        defer { try? handle.close() }
        var summary = Summary()
        var lines: [[UInt8]] = []
        var carry: [UInt8] = []
        func flush() async throws {
            guard !lines.isEmpty else { return }
            let batch = DecodedBatch(lines: lines, pseudonyms: pseudonyms)
            try await summary.count(batch, into: store, logger: logger)
            lines.removeAll(keepingCapacity: true)
        }
        while let chunk = try handle.read(upToCount: 1 << 22), !chunk.isEmpty {
            carry.append(contentsOf: chunk)
            var start = carry.startIndex
            while let newline = carry[start...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(carry[start..<newline])
                start = newline + 1
                if !line.allSatisfy({ $0 == 32 || $0 == 9 || $0 == 13 }) { lines.append(line) }
                if lines.count >= batchSize { try await flush() }
            }
            carry.removeSubrange(..<start)
        }
        if !carry.allSatisfy({ $0 == 32 || $0 == 9 || $0 == 13 }) { lines.append(carry) }
        try await flush()
        return summary
    }

    /// Renames `analytics` to `analytics_previous_<unix time>` and `schema` to `analytics`, holding the
    /// ingest lock exclusively so no batch is half in one schema and half in the other.
    static func activate(_ schema: AnalyticsSchema, client: PostgresClient, pseudonyms: IdPseudonyms, logger: Logger) async throws -> String {
        let exists = try await client.fetch("SELECT count(*)::bigint FROM pg_namespace WHERE nspname = \(schema.name)", as: Int.self, logger: logger)
        guard exists.first == 1 else { throw ReplayError(description: "schema \(schema.name) does not exist; build it with replay first") }
        // Bring the rebuilt schema to the current version first (a no-op when it was built by this build).
        try await schema.migrations.run(on: client, logger: logger)
        try await IdConversion(client: client, schema: schema, pseudonyms: pseudonyms, logger: logger).run()
        try await Self.checkKey(pseudonyms, schemas: [.live, schema], client: client, logger: logger)
        let previous = "analytics_previous_\(Int(Date().timeIntervalSince1970))"
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(hashtext(\(AnalyticsSchema.ingestLockKey)))", logger: logger)
            // Erasures made while the replay ran: their rows leave the rebuilt tables too, and every audit row comes along.
            for pseudonym in try await Self.carryErasures(from: .live, into: schema, on: connection, logger: logger) {
                _ = try await PostgresErasureStore.removeRows(of: pseudonym, schema: schema, on: connection, logger: logger)
            }
            try await connection.query("ALTER SCHEMA \(unescaped: AnalyticsSchema.live.name) RENAME TO \(unescaped: previous)", logger: logger)
            try await connection.query("ALTER SCHEMA \(unescaped: schema.name) RENAME TO \(unescaped: AnalyticsSchema.live.name)", logger: logger)
        }
        return previous
    }
}

extension ReplayTool {
    /// Copies the erasures of `source` that `target` lacks (same ids: `target` makes none of its own); returns the devices
    /// copied. Nothing when `source` has no erasures table (it predates them).
    static func carryErasures(from source: AnalyticsSchema, into target: AnalyticsSchema, on connection: PostgresConnection,
                              logger: Logger) async throws -> [String] {
        let exists = try await connection.fetch("SELECT to_regclass(\(source.name + ".erasures")) IS NOT NULL", as: Bool.self, logger: logger)
        guard exists.first == true else { return [] }
        let s = source.name, t = target.name
        let copied = try await connection.fetch("""
            WITH copied AS (
                INSERT INTO \(unescaped: t).erasures (id, device_id, erased_at, requested_by, reason, client_address, removed)
                SELECT id, device_id, erased_at, requested_by, reason, client_address, removed FROM \(unescaped: s).erasures
                ON CONFLICT (id) DO NOTHING
                RETURNING device_id
            )
            SELECT DISTINCT device_id FROM copied
            """, as: String.self, logger: logger)
        try await connection.query("""
            SELECT setval(pg_get_serial_sequence(\(t + ".erasures"), 'id'), GREATEST((SELECT max(id) FROM \(unescaped: t).erasures), 1))
            """, logger: logger)
        return copied
    }

    /// The replay's key must be the live service's: pseudonyms made with another could not be swapped in.
    static func checkKey(_ pseudonyms: IdPseudonyms, schemas: [AnalyticsSchema], client: PostgresClient, logger: Logger) async throws {
        for schema in schemas {
            let migrated = try await client.fetch("SELECT to_regclass(\(schema.name + ".id_key")) IS NOT NULL", as: Bool.self, logger: logger)
            if migrated.first == true { try await IdKeyFingerprint.check(pseudonyms, client: client, schema: schema, logger: logger) }
        }
    }
}

struct ReplayError: Error, CustomStringConvertible {
    let description: String
}

extension DecodedBatch {
    /// Lines of a replay file: envelopes as on the topic, or bare events (wrapped as the feed would).
    init(lines: [[UInt8]], pseudonyms: IdPseudonyms) {
        var wrapped: [[UInt8]] = []
        wrapped.reserveCapacity(lines.count)
        for line in lines {
            if case .rejected = TrackingCodec.readMessage(line), case .success(let event) = TrackingCodec.readEvent(line) {
                wrapped.append(TrackingCodec.writeMessage(event, source: "replay"))
            } else {
                wrapped.append(line)
            }
        }
        var events: [TrackingEvent] = []
        var rejected: [(KafkaMessage?, TrackingCodec.MessageRejection)] = []
        for line in wrapped {
            switch TrackingCodec.readMessage(line) {
            case .event(let event): events.append(event)
            case .rejected(let rejection): rejected.append((nil, rejection))
            }
        }
        self.init(batch: IngestBatch(events: pseudonyms.pseudonymized(events), topic: "file", nextOffsets: [:]), rejected: rejected, messageCount: lines.count)
    }
}
