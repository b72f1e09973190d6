import Foundation
import Logging
import PostgresNIO

/// One stored file: its bytes, under their SHA-256.
public struct MediaBlob: Sendable, Equatable {
    public let sha256: String
    public let contentType: String
    public let bytes: [UInt8]

    public init(sha256: String, contentType: String, bytes: [UInt8]) {
        self.sha256 = sha256
        self.contentType = contentType
        self.bytes = bytes
    }
}

/// Where media bytes are kept (DESIGN.md, "Media library"): content-addressed, so a blob never changes once
/// stored and storing it twice is storing it once. Admin writes, the feed reads; an S3-compatible store can
/// stand in for the Postgres one.
public protocol MediaStore: Sendable {
    /// Stores the blob unless one with its hash is there already.
    func put(_ blob: MediaBlob) async throws
    /// The blob with this hash, or nil.
    func blob(_ sha256: String) async throws -> MediaBlob?
}

/// The media store in Postgres: schema `media`, each blob's bytes in 256 KiB chunks (a row stays far from
/// Postgres's 1 GB value limit, and a read streams chunk by chunk).
public struct PostgresMediaStore: MediaStore {
    public static let chunkBytes = 256 * 1_024
    public static let migrations = MigrationRunner(schema: "media", migrations: [
        Migration(1, "blobs", """
            -- Content-addressed media (DESIGN.md, "Media library"): written by admin, read by the feed.
            CREATE TABLE blobs (
                sha256 text PRIMARY KEY CHECK (sha256 ~ '^[0-9a-f]{64}$'),
                content_type text NOT NULL,
                byte_count bigint NOT NULL CHECK (byte_count >= 0),
                created_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE TABLE chunks (
                sha256 text NOT NULL REFERENCES blobs (sha256) ON DELETE CASCADE,
                index integer NOT NULL,
                bytes bytea NOT NULL,
                PRIMARY KEY (sha256, index)
            );
            """),
    ])

    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    public func put(_ blob: MediaBlob) async throws {
        try await client.withTransaction(logger: logger) { connection in
            // The blob row first, chunks only if it was new: two uploads of one file at once store it once.
            let inserted = try await connection.query("""
                INSERT INTO media.blobs (sha256, content_type, byte_count) VALUES (\(blob.sha256), \(blob.contentType), \(Int64(blob.bytes.count)))
                ON CONFLICT (sha256) DO NOTHING RETURNING 1
                """, logger: logger).collect()
            guard !inserted.isEmpty else { return }
            var index = 0
            for start in stride(from: 0, to: blob.bytes.count, by: Self.chunkBytes) {
                let chunk = ByteBuffer(bytes: blob.bytes[start..<min(start + Self.chunkBytes, blob.bytes.count)])
                _ = try await connection.query("INSERT INTO media.chunks (sha256, index, bytes) VALUES (\(blob.sha256), \(Int32(index)), \(chunk))",
                                           logger: logger).collect()
                index += 1
            }
        }
    }

    public func blob(_ sha256: String) async throws -> MediaBlob? {
        try await client.withConnection { connection in
            let head = try await connection.fetch("SELECT content_type, byte_count FROM media.blobs WHERE sha256 = \(sha256)",
                                                  as: (String, Int64).self, logger: logger)
            guard let (contentType, byteCount) = head.first else { return nil }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(Int(byteCount))
            let chunks = try await connection.query("SELECT bytes FROM media.chunks WHERE sha256 = \(sha256) ORDER BY index", logger: logger)
            for try await chunk in chunks.decode(ByteBuffer.self) {
                bytes.append(contentsOf: chunk.readableBytesView)
            }
            guard bytes.count == byteCount else {
                throw MediaStoreError(description: "media blob \(sha256) holds \(bytes.count) of its \(byteCount) bytes")
            }
            return MediaBlob(sha256: sha256, contentType: contentType, bytes: bytes)
        }
    }
}

public struct MediaStoreError: Error, CustomStringConvertible {
    public let description: String

    public init(description: String) {
        self.description = description
    }
}
