import Logging
import PostgresNIO
import Shared

/// Every replica must make the same pseudonyms (docs/PRIVACY.md). The first to start after migration 12 stores its key's
/// fingerprint (`IdPseudonyms.fingerprint`) in the schema; any later one whose key gives another refuses to start, before
/// it counts a device under a second pseudonym.
enum IdKeyFingerprint {
    static func check(_ pseudonyms: IdPseudonyms, client: PostgresClient, schema: AnalyticsSchema, logger: Logger) async throws {
        let mine = pseudonyms.fingerprint
        let stored = try await client.fetch("""
            WITH added AS (
                INSERT INTO \(unescaped: schema.name).id_key (fingerprint) VALUES (\(mine)) ON CONFLICT DO NOTHING RETURNING fingerprint
            )
            SELECT fingerprint FROM added UNION ALL SELECT fingerprint FROM \(unescaped: schema.name).id_key
            """, as: String.self, logger: logger).first
        guard let stored, stored == mine else {
            throw ConfigurationError(name: ConfigVariable.analyticsIdKey.name, message: """
                is not the key the stored pseudonyms were made with (schema \(schema.name) holds key fingerprint \(stored ?? "none"), \
                this key gives \(mine)); every analytics replica and replay needs the same key
                """)
        }
    }
}
