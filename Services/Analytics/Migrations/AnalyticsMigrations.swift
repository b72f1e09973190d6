import Shared

/// The `analytics` schema, in order. Never edit a shipped migration; add one.
enum AnalyticsMigrations {
    static let runner = MigrationRunner(schema: "analytics", migrations: [
        Migration(1, "consumer offsets", """
            -- Offsets of tracking.events, written in the same transaction as the aggregates they produced.
            CREATE TABLE consumer_offsets (
                topic text NOT NULL,
                partition integer NOT NULL,
                next_offset bigint NOT NULL,
                PRIMARY KEY (topic, partition)
            );
            """),
    ])
}
