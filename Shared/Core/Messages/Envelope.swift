import Foundation

/// The JSON envelope every Kafka message carries (DESIGN.md "Topics").
public struct Envelope<Payload: Codable & Sendable>: Codable, Sendable {
    public var id: UUID
    public var type: String
    public var schemaVersion: Int
    public var occurredAt: Date
    public var source: String
    public var data: Payload

    public init(id: UUID = UUID.random(), type: String, schemaVersion: Int = Envelope.currentSchemaVersion,
                occurredAt: Date = Date(), source: String, data: Payload) {
        self.id = id
        self.type = type
        self.schemaVersion = schemaVersion
        self.occurredAt = occurredAt
        self.source = source
        self.data = data
    }

    public static var currentSchemaVersion: Int { 1 }

    public func encoded() throws -> [UInt8] { Array(try JSONCoding.encoder.encode(self)) }
}

/// The envelope without its payload: read first, to check the schema version and pick the payload type.
public struct EnvelopeHeader: Codable, Sendable {
    public var id: UUID
    public var type: String
    public var schemaVersion: Int
    public var occurredAt: Date
    public var source: String
}

public enum EnvelopeError: Error, CustomStringConvertible, Equatable {
    case undecodable(String)
    case unsupportedSchemaVersion(Int)
    case unexpectedType(String)

    public var description: String {
        switch self {
        case .undecodable(let detail): "undecodable message: \(detail)"
        case .unsupportedSchemaVersion(let version): "unsupported schemaVersion \(version) (this build reads up to \(Envelope<Int>.currentSchemaVersion))"
        case .unexpectedType(let type): "unexpected message type \(type)"
        }
    }
}

public enum EnvelopeDecoder {
    /// Decodes and checks the header: a newer schema version than this build knows is refused, not guessed at.
    public static func header(_ bytes: [UInt8]) throws(EnvelopeError) -> EnvelopeHeader {
        let header: EnvelopeHeader
        do {
            header = try JSONCoding.decoder.decode(EnvelopeHeader.self, from: Data(bytes))
        } catch {
            throw .undecodable(JSONCoding.describe(error))
        }
        guard (1...Envelope<Int>.currentSchemaVersion).contains(header.schemaVersion) else {
            throw .unsupportedSchemaVersion(header.schemaVersion)
        }
        return header
    }

    /// Decodes the whole envelope with `Payload`, checking the schema version.
    public static func decode<Payload>(_ payload: Payload.Type, from bytes: [UInt8]) throws(EnvelopeError) -> Envelope<Payload> {
        let envelope: Envelope<Payload>
        do {
            envelope = try JSONCoding.decoder.decode(Envelope<Payload>.self, from: Data(bytes))
        } catch {
            // A newer schema is the better explanation, when the header says so.
            _ = try header(bytes)
            throw .undecodable(JSONCoding.describe(error))
        }
        guard (1...Envelope<Int>.currentSchemaVersion).contains(envelope.schemaVersion) else {
            throw .unsupportedSchemaVersion(envelope.schemaVersion)
        }
        return envelope
    }
}

/// One JSON configuration for the whole suite: ISO 8601 dates, sorted keys (stable bytes, stable ETags).
public enum JSONCoding {
    public static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(RFC3339.format(date))
        }
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    public static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = RFC3339.parse(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an RFC 3339 date-time: \(text)")
            }
            return date
        }
        return decoder
    }()

    /// A one-line reason for a decoding error, naming the field, for problem details and dead letters.
    public static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        func path(_ context: DecodingError.Context) -> String {
            let joined = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
            return joined.isEmpty ? "body" : joined
        }
        switch error {
        case .keyNotFound(let key, let context):
            let parent = path(context)
            return "missing field \(parent == "body" ? key.stringValue : parent + "." + key.stringValue)"
        case .typeMismatch(let type, let context): return "\(path(context)): expected \(type)"
        case .valueNotFound(let type, let context): return "\(path(context)): expected \(type), found null"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "malformed JSON" : "\(path(context)): \(context.debugDescription)"
        @unknown default: return "\(error)"
        }
    }
}
