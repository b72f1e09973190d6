import Foundation
import Logging
import Shared

/// A media library file for the feed's media benchmark: random bytes signed as a JPEG, put in the media store
/// (POSTGRES_*) and published as a library item through catalog (KAFKA_*), as the admin's upload does. Writes the
/// bytes to a file too (for nginx) and prints the SHA-256.
enum MediaFile {
    static func run(bytes count: Int, out: String) async throws {
        LoggingSetup.bootstrap(format: .text, level: .warning)
        let logger = Logger(label: "media-file")
        let environment = Environment()
        var random = SystemRandomNumberGenerator()
        let bytes = [0xFF, 0xD8, 0xFF, 0xE0] + (0..<max(0, count - 4)).map { _ in UInt8.random(in: 0...255, using: &random) }
        let sha256 = MediaHash.of(bytes)
        try Data(bytes).write(to: URL(fileURLWithPath: out))

        let database = try DatabaseSettings(environment: environment).makeClient(logger: logger)
        let databaseTask = Task { await database.run() }
        defer { databaseTask.cancel() }
        try await PostgresMediaStore.migrations.run(on: database, logger: logger)
        try await PostgresMediaStore(client: database, logger: logger).put(MediaBlob(sha256: sha256, contentType: "image/jpeg", bytes: bytes))

        let kafka = try BenchProgram.commandsKafka(environment, clientId: "itour-bench-media")
        let producer = try KafkaProducer(configuration: kafka, logger: logger)
        let startup = StartupBarrier()
        let client = CatalogCommandClient(producer: producer, configuration: kafka, startup: startup, source: "itour-bench", logger: logger)
        startup.open()
        let listener = Task { try await client.run() }
        defer { listener.cancel() }
        let result = try await client.execute(CatalogCommand(action: .createMedia, actor: FeedCityGenerator.actor, entityId: UUID.random(), status: .published,
                                                             media: MediaContent(sha256: sha256, format: .jpeg, byteCount: bytes.count,
                                                                                 fileName: "bench.jpg", title: "Benchmark picture")),
                                              timeout: .seconds(60))
        guard result.outcome == .applied else { throw MediaStoreError(description: "media.create was \(result.outcome): \(result.errors)") }
        print(sha256)
    }
}
