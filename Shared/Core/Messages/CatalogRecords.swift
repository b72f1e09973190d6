import Foundation

// Catalog records (DESIGN.md, "Catalog records"): content kept whole as one JSON document per id (calendar entries,
// people, pages, featured items, media), versioned, draft or published, and published on `catalog.events` as `<kind>.changed` (the record under
// the kind's own key) and `<kind>.deleted`. One codec, `CatalogEventCodec`'s (CatalogRecordCodec.swift).

/// The content of one kind of record.
public protocol CatalogRecordContent: Codable, Sendable, Equatable {
    /// The events' type prefix: `calendar` gives `calendar.changed` and `calendar.deleted`.
    static var recordKind: String { get }
    /// The key a `.changed` event carries the record under (`entry` for the calendar, as first published).
    static var eventRecordKey: StaticString { get }
    /// The field of `catalog.commands` carrying its content (`calendarEntry`), its key path, and the result's field
    /// with its state: every `<recordKind>.<verb>` command (`CatalogAction.record`) uses these.
    static var commandField: String { get }
    static var commandContent: WritableKeyPath<CatalogCommand, Self?> { get }
    static var resultState: WritableKeyPath<CatalogCommandResult, CatalogRecordState<Self>?> { get }

    /// Writes the content as `JSONCoding.encoder` does (keys sorted, absent optionals left out): the codec's writing.
    func write(to out: inout JSONWriter)
    /// Reads the common form of what `write` and `JSONCoding.encoder` write; throws on anything else, which the
    /// caller hands to `JSONDecoder`.
    static func read(from reader: inout JSONReader, depth: Int) throws(JSONReader.Failure) -> Self
}

/// A record's full state after a change.
public struct CatalogRecordState<Content: CatalogRecordContent>: Codable, Sendable, Equatable {
    public var id: UUID
    public var version: Int
    /// `published`: on the feed; `draft`: not.
    public var status: ContentStatus
    public var content: Content
    public var updatedAt: Date

    public init(id: UUID, version: Int, status: ContentStatus, content: Content, updatedAt: Date) {
        self.id = id
        self.version = version
        self.status = status
        self.content = content
        self.updatedAt = updatedAt
    }
}

/// `<kind>.changed` / `<kind>.deleted` on `catalog.events`.
public struct CatalogRecordEvent<Content: CatalogRecordContent>: Codable, Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case changed, deleted
    }

    public var kind: Kind
    public var entityId: UUID
    public var version: Int
    public var record: CatalogRecordState<Content>?
    public var snapshotId: UUID?

    public init(kind: Kind, entityId: UUID, version: Int, record: CatalogRecordState<Content>? = nil, snapshotId: UUID? = nil) {
        self.kind = kind
        self.entityId = entityId
        self.version = version
        self.record = record
        self.snapshotId = snapshotId
    }

    public static func changed(_ record: CatalogRecordState<Content>, snapshotId: UUID? = nil) -> Self {
        Self(kind: .changed, entityId: record.id, version: record.version, record: record, snapshotId: snapshotId)
    }

    /// The envelope type: `calendar.changed`, `person.deleted`.
    public var type: String { Self.type(of: kind) }

    public static func type(of kind: Kind) -> String {
        switch kind {
        case .changed: "\(Content.recordKind).changed"
        case .deleted: "\(Content.recordKind).deleted"
        }
    }

    /// Whether an envelope of this type carries an event of this kind of record.
    public static func carries(type: String) -> Bool { type == Self.type(of: .changed) || type == Self.type(of: .deleted) }

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        let type = try container.decode(String.self, forKey: Key("kind"))
        guard let kind = [Kind.changed, .deleted].first(where: { Self.type(of: $0) == type }) else {
            throw DecodingError.dataCorruptedError(forKey: Key("kind"), in: container, debugDescription: "not a \(Content.recordKind) event: \(type)")
        }
        self.kind = kind
        entityId = try container.decode(UUID.self, forKey: Key("entityId"))
        version = try container.decode(Int.self, forKey: Key("version"))
        record = try container.decodeIfPresent(CatalogRecordState<Content>.self, forKey: Key("\(Content.eventRecordKey)"))
        snapshotId = try container.decodeIfPresent(UUID.self, forKey: Key("snapshotId"))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(type, forKey: Key("kind"))
        try container.encode(entityId, forKey: Key("entityId"))
        try container.encode(version, forKey: Key("version"))
        try container.encodeIfPresent(record, forKey: Key("\(Content.eventRecordKey)"))
        try container.encodeIfPresent(snapshotId, forKey: Key("snapshotId"))
    }
}
