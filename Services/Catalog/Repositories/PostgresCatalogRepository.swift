import Foundation
import Logging
import PostgresNIO
import Shared

/// The catalog's SQL: every statement the catalog runs is in this file, parameterised by `PostgresQuery`
/// interpolation.
struct PostgresCatalogRepository: CatalogRepository {
    let client: PostgresClient
    let logger: Logger

    func withTransaction<T: Sendable>(_ body: @Sendable (any CatalogTransaction) async throws -> T) async throws -> T {
        try await client.withTransaction(logger: logger) { connection in
            try await body(PostgresCatalogTransaction(connection: connection, logger: logger))
        }
    }

    func outboxBacklog() async throws -> Int {
        try await client.fetch("SELECT count(*)::bigint FROM catalog.outbox", as: Int.self, logger: logger).first ?? 0
    }

    func toursDue(at now: Date) async throws -> [(id: UUID, version: Int, by: String)] {
        try await client.fetch("""
            SELECT id, version, COALESCE(schedule->>'by', '') FROM catalog.tours
            WHERE schedule_due <= \(now) AND deleted_at IS NULL ORDER BY schedule_due, id
            """, as: (UUID, Int, String).self, logger: logger).map { (id: $0.0, version: $0.1, by: $0.2) }
    }

    // MARK: outbox relay

    struct OutboxRow: Sendable {
        let id: Int64
        let entry: OutboxEntry
    }

    /// Publishes the oldest outbox rows with `publish` and deletes them, in one transaction guarded by an
    /// advisory lock so one relay at a time publishes (keeping per-key order). Returns how many were published,
    /// or nil when another relay holds the lock.
    func relayOutbox(limit: Int, publish: @Sendable ([OutboxEntry]) async throws -> Void) async throws -> Int? {
        try await client.withTransaction(logger: logger) { connection -> Int? in
            let locked = try await connection.fetch("SELECT pg_try_advisory_xact_lock(hashtext('itour.catalog.outbox'))", as: Bool.self,
                                                    logger: logger).first ?? false
            guard locked else { return nil }
            var rows: [OutboxRow] = []
            for (id, topic, key, partition, payload, requestId) in try await connection.fetch("""
                SELECT id, topic, key, partition, payload, request_id FROM catalog.outbox ORDER BY id LIMIT \(limit)
                """, as: (Int64, String, String?, Int32?, String, String?).self, logger: logger) {
                rows.append(OutboxRow(id: id, entry: OutboxEntry(topic: topic, key: key, partition: partition, payload: payload, requestId: requestId)))
            }
            guard !rows.isEmpty else { return 0 }
            try await publish(rows.map(\.entry))
            let ids = rows.map(\.id)
            try await connection.query("DELETE FROM catalog.outbox WHERE id = ANY(\(ids))", logger: logger)
            return rows.count
        }
    }
}

struct PostgresCatalogTransaction: CatalogTransaction {
    let connection: PostgresConnection
    let logger: Logger

    func lock(_ locks: [CommandLock]) async throws {
        for lock in locks {
            if lock.shared {
                _ = try await connection.query("SELECT pg_advisory_xact_lock_shared(hashtextextended(\(lock.key), 0))", logger: logger).collect()
            } else {
                _ = try await connection.query("SELECT pg_advisory_xact_lock(hashtextextended(\(lock.key), 0))", logger: logger).collect()
            }
        }
    }

    func processedResult(of commandId: UUID) async throws -> CatalogCommandResult? {
        let rows = try await connection.fetch(
            "SELECT result FROM catalog.processed_commands WHERE command_id = \(commandId)", as: String.self, logger: logger)
        return try rows.first.map { try JSONCoding.decoder.decode(CatalogCommandResult.self, from: Data($0.utf8)) }
    }

    func recordProcessed(_ result: CatalogCommandResult) async throws {
        let json = CatalogEventCodec.text(result)
        try await connection.query("""
            INSERT INTO catalog.processed_commands (command_id, outcome, result)
            VALUES (\(result.commandId), \(result.outcome.rawValue), \(json))
            """, logger: logger)
    }

    func tour(_ id: UUID) async throws -> Stored<TourState>? {
        let rows = try await connection.fetch("""
            SELECT version, status, content::text, updated_at, deleted_at IS NOT NULL,
                   COALESCE((SELECT array_agg(poi_id ORDER BY position) FROM catalog.tour_stops WHERE tour_id = t.id), '{}'), draft::text, schedule::text
            FROM catalog.tours t WHERE id = \(id) FOR UPDATE
            """, as: (Int, String, String, Date, Bool, [UUID], String?, String?).self, logger: logger)
        guard let (version, status, content, updatedAt, deleted, stops, draft, schedule) = rows.first else { return nil }
        let state = try tourState(id: id, version: version, status: status, content: content, updatedAt: updatedAt, stops: stops,
                                  draft: draft, schedule: schedule)
        return Stored(state: state, isDeleted: deleted)
    }

    func poi(_ id: UUID) async throws -> Stored<PoiState>? {
        try await pois([id])[id]
    }

    func saveTour(_ tour: TourState, deleted: Bool) async throws {
        let content = CatalogEventCodec.text(tour.content)
        let draft = tour.draft.map(CatalogEventCodec.text)
        let schedule = tour.schedule.map(CatalogEventCodec.text)
        let deletedAt: Date? = deleted ? tour.updatedAt : nil
        try await connection.query("""
            INSERT INTO catalog.tours (id, version, status, name, content, updated_at, deleted_at, draft, schedule, schedule_due)
            VALUES (\(tour.id), \(tour.version), \(tour.status.rawValue), \(tour.content.name), \(content)::jsonb, \(tour.updatedAt), \(deletedAt),
                    \(draft)::jsonb, \(schedule)::jsonb, \(tour.scheduleDue))
            ON CONFLICT (id) DO UPDATE SET version = EXCLUDED.version, status = EXCLUDED.status, name = EXCLUDED.name,
                content = EXCLUDED.content, updated_at = EXCLUDED.updated_at, deleted_at = EXCLUDED.deleted_at, draft = EXCLUDED.draft,
                schedule = EXCLUDED.schedule, schedule_due = EXCLUDED.schedule_due
            """, logger: logger)
        try await connection.query("DELETE FROM catalog.tour_stops WHERE tour_id = \(tour.id)", logger: logger)
        if !deleted && !tour.stops.isEmpty {
            let positions = Array(0..<tour.stops.count)
            try await connection.query("""
                INSERT INTO catalog.tour_stops (tour_id, position, poi_id)
                SELECT \(tour.id), position, poi_id FROM unnest(\(positions)::integer[], \(tour.stops)::uuid[]) AS s(position, poi_id)
                """, logger: logger)
        }
    }

    func savePoi(_ poi: PoiState, deleted: Bool) async throws {
        let content = CatalogEventCodec.text(poi.content)
        let draft = poi.draft.map(CatalogEventCodec.text)
        let deletedAt: Date? = deleted ? poi.updatedAt : nil
        try await connection.query("""
            INSERT INTO catalog.pois (id, version, status, name, content, updated_at, deleted_at, draft, latitude, longitude)
            VALUES (\(poi.id), \(poi.version), \(poi.status.rawValue), \(poi.content.name), \(content), \(poi.updatedAt), \(deletedAt),
                    \(draft), \(poi.content.latitude), \(poi.content.longitude))
            ON CONFLICT (id) DO UPDATE SET version = EXCLUDED.version, status = EXCLUDED.status, name = EXCLUDED.name, content = EXCLUDED.content,
                updated_at = EXCLUDED.updated_at, deleted_at = EXCLUDED.deleted_at, draft = EXCLUDED.draft,
                latitude = EXCLUDED.latitude, longitude = EXCLUDED.longitude
            """, logger: logger)
    }

    func livePoiIds(_ ids: [UUID]) async throws -> Set<UUID> {
        guard !ids.isEmpty else { return [] }
        return Set(try await connection.fetch(
            "SELECT id FROM catalog.pois WHERE id = ANY(\(ids)) AND deleted_at IS NULL FOR SHARE", as: UUID.self, logger: logger))
    }

    func toursWithStop(_ poiId: UUID) async throws -> [UUID] {
        try await connection.fetch("""
            SELECT t.id FROM catalog.tours t
            WHERE t.deleted_at IS NULL AND (EXISTS (SELECT 1 FROM catalog.tour_stops s WHERE s.tour_id = t.id AND s.poi_id = \(poiId))
                                            OR t.draft->'stops' ? \(poiId.uuidString.lowercased()))
            ORDER BY t.id
            """, as: UUID.self, logger: logger)
    }

    // The whole catalog is read for a snapshot: its JSON is decoded on all cores.
    func liveTours() async throws -> [TourState] {
        let rows = try await connection.fetch("""
            SELECT id, version, status, content::text, updated_at,
                   COALESCE((SELECT array_agg(poi_id ORDER BY position) FROM catalog.tour_stops WHERE tour_id = t.id), '{}'), draft::text, schedule::text
            FROM catalog.tours t WHERE deleted_at IS NULL ORDER BY id
            """, as: (UUID, Int, String, String, Date, [UUID], String?, String?).self, logger: logger)
        return try await rows.concurrentMapOffThePool { id, version, status, content, updatedAt, stops, draft, schedule in
            Result {
                try tourState(id: id, version: version, status: status, content: content, updatedAt: updatedAt, stops: stops,
                              draft: draft, schedule: schedule)
            }
        }.map { try $0.get() }
    }

    func livePois() async throws -> [PoiState] {
        try await poiStates(try await connection.fetch("""
            SELECT \(unescaped: Self.poiColumns) FROM catalog.pois WHERE deleted_at IS NULL ORDER BY id
            """, as: PoiRow.self, logger: logger))
    }

    func livePoiBuckets() async throws -> [Int: (count: Int, fingerprint: String)] {
        let rows = try await connection.fetch("""
            SELECT hashtext(id::text) & 255, count(*), sum(hashtextextended(id::text || ':' || version, 0)::numeric)::text
            FROM catalog.pois WHERE deleted_at IS NULL GROUP BY 1
            """, as: (Int, Int, String).self, logger: logger)
        return Dictionary(rows.map { ($0.0, (count: $0.1, fingerprint: $0.2)) }, uniquingKeysWith: { first, _ in first })
    }

    func livePois(inBuckets buckets: [Int]) async throws -> [Int: [PoiState]] {
        let rows = try await connection.fetch("""
            SELECT \(unescaped: Self.poiColumns), hashtext(id::text) & 255 FROM catalog.pois
            WHERE deleted_at IS NULL AND hashtext(id::text) & 255 = ANY(\(buckets)) ORDER BY id
            """, as: (UUID, Int, String, String, Date, String?, Int).self, logger: logger)
        let pois = try await poiStates(rows.map { ($0.0, $0.1, $0.2, $0.3, $0.4, $0.5) })
        return Dictionary(grouping: zip(rows, pois)) { $0.0.6 }.mapValues { $0.map(\.1) }
    }

    /// A POI's row as `poiColumns` selects it.
    typealias PoiRow = (UUID, Int, String, String, Date, String?)
    static let poiColumns = "id, version, status, content::text, updated_at, draft::text"

    private static func poiState(_ row: PoiRow) throws -> PoiState {
        let (id, version, status, content, updatedAt, draft) = row
        return PoiState(id: id, version: version, status: ContentStatus(rawValue: status) ?? .draft,
                        content: try CatalogEventCodec.readPoiContent(Array(content.utf8)), updatedAt: updatedAt,
                        draft: try draft.map { try CatalogEventCodec.readPoiContent(Array($0.utf8)) })
    }

    private func poiStates(_ rows: [PoiRow]) async throws -> [PoiState] {
        try await rows.concurrentMapOffThePool { row in Result { try Self.poiState(row) } }.map { try $0.get() }
    }

    // MARK: categories

    func category(_ id: UUID) async throws -> Stored<CategoryState>? {
        let rows = try await connection.fetch("""
            SELECT version, name, parent_id, path, updated_at, translations, deleted_at IS NOT NULL FROM catalog.categories WHERE id = \(id) FOR UPDATE
            """, as: (Int, String, UUID?, String, Date, String?, Bool).self, logger: logger)
        guard let (version, name, parentId, path, updatedAt, translations, deleted) = rows.first else { return nil }
        return Stored(state: CategoryState(id: id, version: version, name: name, parentId: parentId, path: path, updatedAt: updatedAt,
                                           translations: Self.translations(translations)),
                      isDeleted: deleted)
    }

    func category(path: String) async throws -> CategoryState? {
        try await categories("""
            SELECT id, version, name, parent_id, path, updated_at, translations FROM catalog.categories
            WHERE lower(path) = lower(\(path)) AND deleted_at IS NULL
            """).first
    }

    func saveCategory(_ category: CategoryState, deleted: Bool) async throws {
        let deletedAt: Date? = deleted ? category.updatedAt : nil
        try await connection.query("""
            INSERT INTO catalog.categories (id, version, name, parent_id, path, updated_at, deleted_at, translations)
            VALUES (\(category.id), \(category.version), \(category.name), \(category.parentId), \(category.path), \(category.updatedAt), \(deletedAt),
                    \(Self.translationsText(category.translations)))
            ON CONFLICT (id) DO UPDATE SET version = EXCLUDED.version, name = EXCLUDED.name, parent_id = EXCLUDED.parent_id,
                path = EXCLUDED.path, updated_at = EXCLUDED.updated_at, deleted_at = EXCLUDED.deleted_at, translations = EXCLUDED.translations
            """, logger: logger)
    }

    func descendantCategories(of path: String) async throws -> [CategoryState] {
        let prefix = path + "/"
        return try await categories("""
            SELECT id, version, name, parent_id, path, updated_at, translations FROM catalog.categories
            WHERE left(path, length(\(prefix))) = \(prefix) AND deleted_at IS NULL ORDER BY length(path), path FOR UPDATE
            """)
    }

    func poisInCategory(_ path: String) async throws -> [PoiState] {
        let prefix = path + "/"
        var pois: [PoiState] = []
        // Content and draft parsed once a row (`OFFSET 0` keeps the subquery from being folded into each use).
        for row in try await connection.fetch("""
            SELECT \(unescaped: Self.poiColumns) FROM catalog.pois
            WHERE deleted_at IS NULL AND EXISTS (
                SELECT 1 FROM (SELECT content::jsonb AS content, draft::jsonb AS draft OFFSET 0) AS parsed,
                    LATERAL (SELECT parsed.content->>'category' UNION ALL SELECT jsonb_array_elements_text(COALESCE(parsed.content->'categories', '[]'))
                             UNION ALL SELECT parsed.draft->>'category' UNION ALL SELECT jsonb_array_elements_text(COALESCE(parsed.draft->'categories', '[]'))
                            ) AS used(path)
                WHERE used.path = \(path) OR left(used.path, length(\(prefix))) = \(prefix))
            ORDER BY id FOR UPDATE
            """, as: PoiRow.self, logger: logger) {
            pois.append(try Self.poiState(row))
        }
        return pois
    }

    func liveCategories() async throws -> [CategoryState] {
        try await categories("""
            SELECT id, version, name, parent_id, path, updated_at, translations FROM catalog.categories
            WHERE deleted_at IS NULL ORDER BY length(path) - length(replace(path, '/', '')), path
            """)
    }

    func record<Content: StoredRecord>(_: Content.Type, _ id: UUID) async throws -> Stored<CatalogRecordState<Content>>? {
        let rows = try await connection.fetch("""
            SELECT id, version, status, content::text, updated_at, deleted_at IS NOT NULL FROM catalog.\(unescaped: Content.table)
            WHERE id = \(id) FOR UPDATE
            """, as: (UUID, Int, String, String, Date, Bool).self, logger: logger)
        guard let row = rows.first else { return nil }
        return Stored(state: try Self.record((row.0, row.1, row.2, row.3, row.4)), isDeleted: row.5)
    }

    func saveRecord<Content: StoredRecord>(_ record: CatalogRecordState<Content>, deleted: Bool) async throws {
        let content = CatalogEventCodec.text(record.content)
        let deletedAt: Date? = deleted ? record.updatedAt : nil
        try await connection.query("""
            INSERT INTO catalog.\(unescaped: Content.table) (id, version, status, content, updated_at, deleted_at)
            VALUES (\(record.id), \(record.version), \(record.status.rawValue), \(content)::jsonb, \(record.updatedAt), \(deletedAt))
            ON CONFLICT (id) DO UPDATE SET version = EXCLUDED.version, status = EXCLUDED.status, content = EXCLUDED.content,
                updated_at = EXCLUDED.updated_at, deleted_at = EXCLUDED.deleted_at
            """, logger: logger)
    }

    func liveRecords<Content: StoredRecord>(_: Content.Type) async throws -> [CatalogRecordState<Content>] {
        try await connection.fetch("""
            SELECT id, version, status, content::text, updated_at FROM catalog.\(unescaped: Content.table) WHERE deleted_at IS NULL ORDER BY id
            """, as: (UUID, Int, String, String, Date).self, logger: logger).map(Self.record)
    }

    func liveMedia(sha256s: [String]) async throws -> [String: MediaState] {
        guard !sha256s.isEmpty else { return [:] }
        let rows = try await connection.fetch("""
            SELECT id, version, status, content::text, updated_at FROM catalog.media_items
            WHERE deleted_at IS NULL AND content->>'sha256' = ANY(\(sha256s))
            """, as: (UUID, Int, String, String, Date).self, logger: logger)
        let items: [MediaState] = try rows.map(Self.record)
        return Dictionary(items.map { ($0.content.sha256, $0) }, uniquingKeysWith: { first, _ in first })
    }

    private static func record<Content: StoredRecord>(_ row: (UUID, Int, String, String, Date)) throws -> CatalogRecordState<Content> {
        CatalogRecordState(id: row.0, version: row.1, status: ContentStatus(rawValue: row.2) ?? .draft,
                           content: try CatalogEventCodec.readRecordContent(Content.self, from: Array(row.3.utf8)), updatedAt: row.4)
    }

    private func categories(_ query: PostgresQuery) async throws -> [CategoryState] {
        try await connection.fetch(query, as: (UUID, Int, String, UUID?, String, Date, String?).self, logger: logger).map {
            CategoryState(id: $0.0, version: $0.1, name: $0.2, parentId: $0.3, path: $0.4, updatedAt: $0.5, translations: Self.translations($0.6))
        }
    }

    /// A category's translations as its column keeps them: JSON text, or NULL for none.
    private static func translationsText(_ translations: Translations?) -> String? {
        guard let translations else { return nil }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return (try? encoder.encode(translations)).map { String(decoding: $0, as: UTF8.self) }
    }

    private static func translations(_ text: String?) -> Translations? {
        text.flatMap { try? JSONDecoder().decode(Translations.self, from: Data($0.utf8)) }
    }

    // MARK: savepoints

    func savepoint(_ name: String) async throws {
        try await connection.query(PostgresQuery(unsafeSQL: "SAVEPOINT \(try Self.identifier(name))"), logger: logger)
    }

    func rollback(toSavepoint name: String) async throws {
        try await connection.query(PostgresQuery(unsafeSQL: "ROLLBACK TO SAVEPOINT \(try Self.identifier(name))"), logger: logger)
    }

    func release(savepoint name: String) async throws {
        try await connection.query(PostgresQuery(unsafeSQL: "RELEASE SAVEPOINT \(try Self.identifier(name))"), logger: logger)
    }

    /// Savepoint names cannot be bound; these are fixed names from the handler, checked anyway.
    private static func identifier(_ name: String) throws -> String {
        guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0 == "_") }) else {
            throw ImportError(message: "invalid savepoint name \(name)")
        }
        return name
    }

    func appendOutbox(_ entries: [OutboxEntry]) async throws {
        guard !entries.isEmpty else { return }
        // Arrays cannot hold NULL here, so absent values travel as '' and -1. In the entries' order: the relay
        // publishes by id, and one entity's events must keep theirs.
        try await connection.query("""
            INSERT INTO catalog.outbox (topic, key, partition, payload, request_id)
            SELECT topic, NULLIF(key, ''), NULLIF(partition, -1), payload, NULLIF(request_id, '')
            FROM unnest(\(entries.map(\.topic))::text[], \(entries.map { $0.key ?? "" })::text[], \(entries.map { $0.partition ?? -1 })::integer[],
                        \(entries.map(\.payload))::text[], \(entries.map { $0.requestId ?? "" })::text[])
                 WITH ORDINALITY AS e(topic, key, partition, payload, request_id, n)
            ORDER BY n
            """, logger: logger)
    }

    func audit(commandId: UUID, actor: String, action: CatalogAction, entityId: UUID?, before: String?, after: String?) async throws {
        try await connection.query("""
            INSERT INTO catalog.audit_log (command_id, actor, action, entity_id, before, after)
            VALUES (\(commandId), \(actor), \(action.rawValue), \(entityId), \(before), \(after))
            """, logger: logger)
    }
}

extension PostgresCatalogTransaction {
    // MARK: history

    func auditTrail(of id: UUID, limit: Int) async throws -> [AuditRow] {
        try await connection.fetch("""
            SELECT at, actor, action, after FROM catalog.audit_log WHERE entity_id = \(id) ORDER BY id DESC LIMIT \(limit)
            """, as: (Date, String, String, String?).self, logger: logger).map { AuditRow(at: $0, actor: $1, action: $2, after: $3) }
    }

    func recentDeletes(since: Date, limit: Int) async throws -> [AuditRow] {
        try await connection.fetch("""
            SELECT d.at, d.actor, d.action,
                   (SELECT a.after FROM catalog.audit_log a WHERE a.entity_id = d.entity_id AND a.after IS NOT NULL ORDER BY a.id DESC LIMIT 1)
            FROM catalog.audit_log d
            WHERE d.after IS NULL AND d.action IN ('tour.delete', 'poi.delete') AND d.at >= \(since)
              AND d.id = (SELECT max(l.id) FROM catalog.audit_log l WHERE l.entity_id = d.entity_id)
            ORDER BY d.id DESC LIMIT \(limit)
            """, as: (Date, String, String, String?).self, logger: logger).map { AuditRow(at: $0, actor: $1, action: $2, after: $3) }
    }

    func auditedState(of id: UUID, version: Int) async throws -> String? {
        try await connection.fetch("""
            SELECT after FROM catalog.audit_log
            WHERE entity_id = \(id) AND after IS NOT NULL AND (after::jsonb->>'version')::integer = \(version)
            ORDER BY id DESC LIMIT 1
            """, as: String.self, logger: logger).first
    }
}

extension PostgresCatalogTransaction {
    // MARK: set-based, for imports

    func processedResults(of commandIds: [UUID]) async throws -> [UUID: CatalogCommandResult] {
        guard !commandIds.isEmpty else { return [:] }
        var results: [UUID: CatalogCommandResult] = [:]
        for (id, result) in try await connection.fetch("""
            SELECT command_id, result FROM catalog.processed_commands WHERE command_id = ANY(\(commandIds))
            """, as: (UUID, String).self, logger: logger) {
            results[id] = try JSONCoding.decoder.decode(CatalogCommandResult.self, from: Data(result.utf8))
        }
        return results
    }

    func pois(_ ids: [UUID]) async throws -> [UUID: Stored<PoiState>] {
        guard !ids.isEmpty else { return [:] }
        var pois: [UUID: Stored<PoiState>] = [:]
        for (id, version, status, content, updatedAt, draft, deleted) in try await connection.fetch("""
            SELECT \(unescaped: Self.poiColumns), deleted_at IS NOT NULL FROM catalog.pois WHERE id = ANY(\(ids)) FOR UPDATE
            """, as: (UUID, Int, String, String, Date, String?, Bool).self, logger: logger) {
            pois[id] = Stored(state: try Self.poiState((id, version, status, content, updatedAt, draft)), isDeleted: deleted)
        }
        return pois
    }

    func stopPlaces(_ ids: [UUID]) async throws -> [UUID: StopPlace] {
        guard !ids.isEmpty else { return [:] }
        var places: [UUID: StopPlace] = [:]
        // `OFFSET 0` keeps the subquery apart, so a draft is parsed once, not once for each field read from it.
        for (id, name, latitude, longitude, hasDraft, deleted) in try await connection.fetch("""
            SELECT id, COALESCE(d.draft->>'name', name), COALESCE((d.draft->>'latitude')::float8, latitude),
                   COALESCE((d.draft->>'longitude')::float8, longitude), d.draft IS NOT NULL, deleted_at IS NOT NULL
            FROM catalog.pois, LATERAL (SELECT draft::jsonb AS draft OFFSET 0) AS d WHERE id = ANY(\(ids)) FOR SHARE OF pois
            """, as: (UUID, String, Double, Double, Bool, Bool).self, logger: logger) {
            places[id] = StopPlace(name: name, latitude: latitude, longitude: longitude, hasDraft: hasDraft, isDeleted: deleted)
        }
        return places
    }

    func tours(_ ids: [UUID]) async throws -> [UUID: Stored<TourState>] {
        guard !ids.isEmpty else { return [:] }
        var tours: [UUID: Stored<TourState>] = [:]
        for (id, version, status, content, updatedAt, deleted, stops, draft, schedule) in try await connection.fetch("""
            SELECT id, version, status, content::text, updated_at, deleted_at IS NOT NULL,
                   COALESCE((SELECT array_agg(poi_id ORDER BY position) FROM catalog.tour_stops WHERE tour_id = t.id), '{}'), draft::text,
                   schedule::text
            FROM catalog.tours t WHERE id = ANY(\(ids)) FOR UPDATE
            """, as: (UUID, Int, String, String, Date, Bool, [UUID], String?, String?).self, logger: logger) {
            let state = try tourState(id: id, version: version, status: status, content: content, updatedAt: updatedAt, stops: stops,
                                      draft: draft, schedule: schedule)
            tours[id] = Stored(state: state, isDeleted: deleted)
        }
        return tours
    }

    func categories(paths: [String]) async throws -> [String: CategoryState] {
        guard !paths.isEmpty else { return [:] }
        var categories: [String: CategoryState] = [:]
        for (asked, id, version, name, parentId, path, updatedAt, translations) in try await connection.fetch("""
            SELECT a.path, c.id, c.version, c.name, c.parent_id, c.path, c.updated_at, c.translations
            FROM unnest(\(paths)::text[]) AS a(path) JOIN catalog.categories c ON lower(c.path) = lower(a.path) AND c.deleted_at IS NULL
            """, as: (String, UUID, Int, String, UUID?, String, Date, String?).self, logger: logger) {
            categories[asked] = CategoryState(id: id, version: version, name: name, parentId: parentId, path: path, updatedAt: updatedAt,
                                              translations: Self.translations(translations))
        }
        return categories
    }

    func write(_ changes: CatalogChanges) async throws {
        if !changes.pois.isEmpty {
            let pois = changes.pois.map(\.state)
            let contents = pois.map { CatalogEventCodec.text($0.content) }
            let drafts = pois.map { $0.draft.map(CatalogEventCodec.text) ?? "" }
            try await connection.query("""
                INSERT INTO catalog.pois (id, version, status, name, content, updated_at, deleted_at, draft, latitude, longitude)
                SELECT id, version, status, name, content, updated_at, CASE WHEN deleted THEN updated_at END, NULLIF(draft, ''), latitude, longitude
                FROM unnest(\(pois.map(\.id))::uuid[], \(pois.map(\.version))::integer[], \(pois.map(\.status.rawValue))::text[],
                            \(pois.map(\.content.name))::text[], \(contents)::text[], \(pois.map(\.updatedAt))::timestamptz[],
                            \(changes.pois.map(\.isDeleted))::boolean[], \(drafts)::text[],
                            \(pois.map(\.content.latitude))::float8[], \(pois.map(\.content.longitude))::float8[])
                     AS p(id, version, status, name, content, updated_at, deleted, draft, latitude, longitude)
                ON CONFLICT (id) DO UPDATE SET version = EXCLUDED.version, status = EXCLUDED.status, name = EXCLUDED.name,
                    content = EXCLUDED.content, updated_at = EXCLUDED.updated_at, deleted_at = EXCLUDED.deleted_at, draft = EXCLUDED.draft,
                    latitude = EXCLUDED.latitude, longitude = EXCLUDED.longitude
                """, logger: logger)
        }
        if !changes.tours.isEmpty {
            let tours = changes.tours.map(\.state)
            let contents = tours.map { CatalogEventCodec.text($0.content) }
            let drafts = tours.map { $0.draft.map(CatalogEventCodec.text) ?? "" }
            let schedules = tours.map { $0.schedule.map(CatalogEventCodec.text) ?? "" }
            try await connection.query("""
                INSERT INTO catalog.tours (id, version, status, name, content, updated_at, deleted_at, draft, schedule, schedule_due)
                SELECT id, version, status, name, content::jsonb, updated_at, CASE WHEN deleted THEN updated_at END, NULLIF(draft, '')::jsonb,
                       NULLIF(schedule, '')::jsonb,
                       CASE WHEN schedule <> '' AND NULLIF(schedule, '')::jsonb->>'failure' IS NULL THEN (NULLIF(schedule, '')::jsonb->>'at')::timestamptz END
                FROM unnest(\(tours.map(\.id))::uuid[], \(tours.map(\.version))::integer[], \(tours.map(\.status.rawValue))::text[],
                            \(tours.map(\.content.name))::text[], \(contents)::text[],
                            \(tours.map(\.updatedAt))::timestamptz[], \(changes.tours.map(\.isDeleted))::boolean[], \(drafts)::text[],
                            \(schedules)::text[])
                     AS t(id, version, status, name, content, updated_at, deleted, draft, schedule)
                ON CONFLICT (id) DO UPDATE SET version = EXCLUDED.version, status = EXCLUDED.status, name = EXCLUDED.name,
                    content = EXCLUDED.content, updated_at = EXCLUDED.updated_at, deleted_at = EXCLUDED.deleted_at, draft = EXCLUDED.draft,
                    schedule = EXCLUDED.schedule, schedule_due = EXCLUDED.schedule_due
                """, logger: logger)
            try await connection.query("DELETE FROM catalog.tour_stops WHERE tour_id = ANY(\(tours.map(\.id)))", logger: logger)
            let live = changes.tours.filter { !$0.isDeleted }.map(\.state)
            let stopTours = live.flatMap { tour in tour.stops.map { _ in tour.id } }
            if !stopTours.isEmpty {
                try await connection.query("""
                    INSERT INTO catalog.tour_stops (tour_id, position, poi_id)
                    SELECT * FROM unnest(\(stopTours)::uuid[], \(live.flatMap { Array(0..<$0.stops.count) })::integer[], \(live.flatMap(\.stops))::uuid[])
                    """, logger: logger)
            }
        }
        if !changes.audit.isEmpty {
            let audit = changes.audit
            try await connection.query("""
                INSERT INTO catalog.audit_log (command_id, actor, action, entity_id, before, after)
                SELECT command_id, actor, action, CASE WHEN has_entity THEN entity_id END, NULLIF(before, ''), NULLIF(after, '')
                FROM unnest(\(audit.map(\.commandId))::uuid[], \(audit.map(\.actor))::text[], \(audit.map(\.action.rawValue))::text[],
                            \(audit.map { $0.entityId ?? UUID.random() })::uuid[], \(audit.map { $0.entityId != nil })::boolean[],
                            \(audit.map { $0.before ?? "" })::text[], \(audit.map { $0.after ?? "" })::text[])
                     WITH ORDINALITY AS a(command_id, actor, action, entity_id, has_entity, before, after, n)
                ORDER BY n
                """, logger: logger)
        }
        if !changes.processed.isEmpty {
            let results = changes.processed
            let texts = results.map { CatalogEventCodec.text($0) }
            try await connection.query("""
                INSERT INTO catalog.processed_commands (command_id, outcome, result)
                SELECT command_id, outcome, result
                FROM unnest(\(results.map(\.commandId))::uuid[], \(results.map(\.outcome.rawValue))::text[], \(texts)::text[])
                     AS r(command_id, outcome, result)
                """, logger: logger)
        }
        try await appendOutbox(changes.outbox)
    }
}

/// A tour from its stored columns.
private func tourState(id: UUID, version: Int, status: String, content: String, updatedAt: Date, stops: [UUID], draft: String?,
                       schedule: String?) throws -> TourState {
    TourState(id: id, version: version, status: ContentStatus(rawValue: status) ?? .draft,
              content: try CatalogEventCodec.readTourContent(Array(content.utf8)), stops: stops, updatedAt: updatedAt,
              draft: try draft.map { try CatalogEventCodec.readTourDraft(Array($0.utf8)) },
              schedule: try schedule.map { try CatalogEventCodec.readTourSchedule(Array($0.utf8)) })
}

private extension TourState {
    /// When the scheduler is to act on this tour (a pending schedule's time); nil for none.
    var scheduleDue: Date? { schedule.flatMap { $0.isPending ? $0.at : nil } }
}

func jsonText<T: Encodable>(_ value: T) throws -> String {
    String(decoding: try JSONCoding.encoder.encode(value), as: UTF8.self)
}
