import Foundation

/// The tracking event's one codec (DESIGN.md "Tracking events"): the feed reads phones' batches with it
/// and writes `tracking.events` messages with it; analytics reads those messages with it. Keys are
/// `TrackingEvent.Key`'s; JSON is read by `JSONReader`, dates by `RFC3339`. Written by hand rather than
/// through Codable because the feed reads and writes over a hundred thousand events a second, and
/// `JSONDecoder` alone cost more than the rest of a batch.
public enum TrackingCodec {
    /// Elements a batch may hold: reading stops at the first one past it.
    public static let maxEvents = 500

    /// Why a whole batch body is refused.
    public enum BatchFailure: Error, Equatable, Sendable {
        /// Not JSON at all; the detail says where.
        case malformed(String)
        case notAnObject
        case missingEvents
        case eventsNotAnArray
        /// More than `maxEvents` elements in `events`: reading stopped at the first one past the cap.
        case tooManyEvents
    }

    /// Why one element of a batch (or a message's `data`) is not a tracking event.
    public struct Rejection: Error, Sendable, Equatable {
        public let reason: String
        public init(_ reason: String) { self.reason = reason }
    }

    /// Every element of a phone's `{"events": [...]}`: the event, or why it cannot be one. One bad element
    /// does not spoil the rest; only a body that is not JSON, or has no `events` array, fails whole.
    /// Checks of content (time window, per-type fields) are `TrackingEvent.validationError`'s.
    public static func readBatch(_ body: UnsafeRawBufferPointer) throws(BatchFailure) -> [Result<TrackingEvent, Rejection>] {
        var reader = JSONReader(body.bindMemory(to: UInt8.self))
        let read: Result<[Result<TrackingEvent, Rejection>], BatchFailure>
        do {
            read = try reader.batch()
        } catch {
            throw .malformed(error.description)
        }
        return try read.get()
    }

    // MARK: - Messages on tracking.events

    /// A `tracking.events` message as analytics takes it: an event to count, or why not.
    public enum Message: Sendable {
        case event(TrackingEvent)
        case rejected(MessageRejection)
    }

    public struct MessageRejection: Error, Sendable {
        public enum Kind: String, Sendable {
            /// Not JSON, not an envelope, or not a tracking event (unknown type, wrong field types).
            case undecodable
            /// Decodes, but breaks the contract (a missing field for its type, a value out of range).
            case invalid
        }

        public let kind: Kind
        public let reason: String
    }

    public static let feedSource = "feed"

    /// The message for `event`: the suite's envelope (`Envelope<TrackingEvent>`, keys sorted) with the event
    /// as `data`. Its id is the event's, so a phone's retry and a broker redelivery dedupe the same way.
    public static func writeMessage(_ event: TrackingEvent, source: String = feedSource) -> [UInt8] {
        var bytes: [UInt8] = []
        writer.append(event, source: source, to: &bytes)
        return bytes
    }

    /// `writeMessage`'s bytes appended to `bytes`, for writing a batch's messages into one buffer.
    public static func appendMessage(_ event: TrackingEvent, source: String = feedSource, to bytes: inout [UInt8]) {
        writer.append(event, source: source, to: &bytes)
    }

    /// A message analytics can count: its envelope of a schema version this build reads, `type` the event's,
    /// the event valid by every rule but the age window (the feed applied that when it accepted the event;
    /// judged again now, a replay or a long lag would throw valid events away), and no NUL in its text
    /// (Postgres text cannot hold one: such an event could never be stored, and retrying forever would stop
    /// the ingest behind it).
    public static func readMessage(_ bytes: [UInt8]) -> Message {
        let read = bytes.withUnsafeBufferPointer { buffer -> Result<(type: String, event: TrackingEvent), MessageRejection> in
            var reader = JSONReader(buffer)
            return reader.envelope()
        }
        let type: String, event: TrackingEvent
        switch read {
        case .failure(let rejection): return .rejected(rejection)
        case .success(let message): (type, event) = message
        }
        guard type == event.type.rawValue else {
            return invalid("envelope type \(type) does not match event type \(event.type.rawValue)")
        }
        if let reason = event.validationError(now: event.occurredAt) { return invalid(reason) }
        for (key, value) in [(TrackingEvent.Key.deviceId, event.deviceId), (.touristId, event.touristId), (.platform, event.platform),
                             (.osVersion, event.osVersion), (.model, event.model), (.appVersion, event.appVersion), (.url, event.url),
                             (.query, event.query)]
        where value?.utf8.contains(0) == true {
            return invalid("\(key.name) must not contain NUL characters")
        }
        return .event(event)
    }

    /// A bare event object (a replay file's line), or why it is not one.
    public static func readEvent(_ bytes: [UInt8]) -> Result<TrackingEvent, Rejection> {
        bytes.withUnsafeBufferPointer { buffer in
            var reader = JSONReader(buffer)
            do throws(JSONReader.Failure) {
                reader.skipWhitespace()
                guard reader.peek() == UInt8(ascii: "{") else { return .failure(Rejection("not a JSON object")) }
                var fields = try reader.eventFields(depth: 0)
                try reader.expectEnd()
                return Result { () throws(Rejection) in try fields.event() }
            } catch {
                return .failure(Rejection("malformed JSON (\(error.description))"))
            }
        }
    }

    private static func invalid(_ reason: String) -> Message { .rejected(MessageRejection(kind: .invalid, reason: reason)) }

    // MARK: - Writing

    private static let writer = MessageWriter()
}

/// Writes messages with keys made once from `TrackingEvent.Key`: in the order written (sorted, the suite's
/// convention for stable bytes, as `JSONCoding.encoder` does), each `,"name":` ready to copy in one go.
private struct MessageWriter: Sendable {
    typealias Key = TrackingEvent.Key
    let envelopeOrder: [Key], eventOrder: [Key]
    /// `,"name":` of each key, one after another; `starts[key.rawValue]` is where each begins, and one more the end.
    let quoted: [UInt8], starts: [Int]

    init() {
        func precedes(_ a: Key, _ b: Key) -> Bool {
            a.name.withUTF8Buffer { a in b.name.withUTF8Buffer { b in a.lexicographicallyPrecedes(b) } }
        }
        envelopeOrder = [.data, .id, .occurredAt, .schemaVersion, .source, .type].sorted(by: precedes)
        eventOrder = Key.eventKeys.sorted(by: precedes)
        var quoted: [UInt8] = [], starts: [Int] = []
        for key in Key.allCases {
            starts.append(quoted.count)
            quoted += Array(",\"".utf8) + key.name.withUTF8Buffer(Array.init) + Array("\":".utf8)
        }
        starts.append(quoted.count)
        self.quoted = quoted
        self.starts = starts
    }

    func append(_ event: TrackingEvent, source: String, to bytes: inout [UInt8]) {
        // Sized once, for the longest the message could be: every key (id, type and occurredAt are written
        // twice), every string escaped at its longest, every other value at its longest. A value `write`
        // writes and this leaves out trips the cursor's check in debug builds (the round-trip tests).
        func room(_ text: String?) -> Int { JSONBytes.quotedCapacity(utf8Count: text?.utf8.count ?? 0) }
        let strings = 2 * room(event.type.rawValue) + room(event.deviceId) + room(event.touristId) + room(event.platform)
            + room(event.osVersion) + room(event.model) + room(event.appVersion) + room(event.via?.rawValue) + room(event.url)
            + room(event.mediaType?.rawValue) + room(event.query) + room(event.language) + room(source)
        let capacity = 2 * quoted.count + 4 + strings + 7 * JSONBytes.quotedUUIDCapacity + 2 * JSONBytes.quotedDateCapacity
            + 4 * JSONBytes.numberCapacity
        quoted.withUnsafeBufferPointer { quoted in
            JSONBytes.append(capacity: capacity, to: &bytes) { cursor in
                var out = Output(quoted: quoted, starts: starts, cursor: cursor)
                write(event, source: source, to: &out)
                cursor = out.cursor
            }
        }
    }

    private func write(_ event: TrackingEvent, source: String, to out: inout Output) {
        out.cursor.byte(UInt8(ascii: "{"))
        for name in envelopeOrder {
            switch name {
            case .data:
                out.key(name)
                out.cursor.byte(UInt8(ascii: "{"))
                out.first = true
                for name in eventOrder {
                    switch name {
                    case .id: out.uuid(name, event.id)
                    case .tourId: out.uuid(name, event.tourId)
                    case .poiId: out.uuid(name, event.poiId)
                    case .durationSeconds: out.number(name, event.durationSeconds)
                    case .dwellSeconds: out.number(name, event.dwellSeconds)
                    case .occurredAt: out.date(name, event.occurredAt)
                    case .type: out.string(name, event.type.rawValue)
                    case .deviceId: out.string(name, event.deviceId)
                    case .touristId: out.string(name, event.touristId)
                    case .platform: out.string(name, event.platform)
                    case .osVersion: out.string(name, event.osVersion)
                    case .model: out.string(name, event.model)
                    case .appVersion: out.string(name, event.appVersion)
                    case .via: out.string(name, event.via?.rawValue)
                    case .url: out.string(name, event.url)
                    case .mediaType: out.string(name, event.mediaType?.rawValue)
                    case .query: out.string(name, event.query)
                    case .resultCount: out.number(name, event.resultCount.map(Double.init))
                    case .eventId: out.uuid(name, event.eventId)
                    case .pageId: out.uuid(name, event.pageId)
                    case .personId: out.uuid(name, event.personId)
                    case .language: out.string(name, event.language)
                    case .data, .schemaVersion, .source: break
                    }
                }
                out.cursor.byte(UInt8(ascii: "}"))
            case .id: out.uuid(name, event.id)
            case .occurredAt: out.date(name, event.occurredAt)
            case .schemaVersion:
                out.key(name)
                out.cursor.integer(Envelope<TrackingEvent>.currentSchemaVersion)
            case .source: out.string(name, source)
            default: out.string(name, event.type.rawValue)
            }
        }
        out.cursor.byte(UInt8(ascii: "}"))
    }

    /// The message so far. Its own mutating methods rather than closures over a local: those would pay
    /// for dynamic exclusivity checks on every write.
    private struct Output {
        let quoted: UnsafeBufferPointer<UInt8>, starts: [Int]
        var cursor: JSONBytes.Cursor
        /// The first member of an object goes without its comma.
        var first = true
        /// The last date written and where its text is: the envelope repeats the event's time.
        var lastDate: (value: Date, text: UnsafeBufferPointer<UInt8>)?

        mutating func key(_ key: Key) {
            cursor.bytes(UnsafeBufferPointer(rebasing: quoted[(starts[key.rawValue] + (first ? 1 : 0))..<starts[key.rawValue + 1]]))
            first = false
        }

        mutating func string(_ name: Key, _ value: String?) {
            guard let value else { return }
            key(name)
            cursor.quoted(value)
        }

        mutating func uuid(_ name: Key, _ value: UUID?) {
            guard let value else { return }
            key(name)
            cursor.quoted(value)
        }

        /// Validation admits finite values only; Swift's description reads back as the same Double.
        mutating func number(_ name: Key, _ value: Double?) {
            guard let value else { return }
            key(name)
            cursor.number(value)
        }

        mutating func date(_ name: Key, _ value: Date) {
            key(name)
            if let lastDate, lastDate.value == value {
                cursor.bytes(lastDate.text)
                return
            }
            let start = cursor.position
            cursor.quoted(value)
            lastDate = (value, UnsafeBufferPointer(start: start, count: cursor.position - start))
        }
    }
}

// MARK: - Reading

/// The fields of one event object as the reader found them. String values stay where they lie in the input
/// until the event is built, and ids, times and kinds are read from those bytes: a batch of 50 events
/// used to make some 300 short-lived strings.
struct EventFields {
    enum Value {
        case string(JSONString)
        case number(Double)
        /// Present but neither a string nor a number (null counts as absent).
        case otherType
    }

    /// By key; null is absent.
    /// One per event key (`TrackingEvent.Key.eventKeys`; a test checks the count).
    private var values = InlineArray<22, Value?>(repeating: nil)
    private var given: UInt32 = 0
    /// A known key given twice: refused, as readers disagree on which value counts (Foundation keeps the first).
    private(set) var repeated: TrackingEvent.Key?

    /// Read through `mutating` methods: read from a borrowed `self`, the compiler copied all of `values`
    /// (half a kilobyte) for each field, a fifth of reading a batch.
    subscript(key: TrackingEvent.Key) -> Value? {
        mutating get { values[key.rawValue] }
        set {
            if given & (1 << key.rawValue) != 0, repeated == nil { repeated = key }
            given |= 1 << key.rawValue
            values[key.rawValue] = newValue
        }
    }

    /// The event these fields make, or the first reason they do not make one.
    mutating func event() throws(TrackingCodec.Rejection) -> TrackingEvent {
        if let repeated { throw TrackingCodec.Rejection("field \(repeated.name) given twice") }
        guard let id = try uuid(.id) else { throw missing(.id) }
        let typeText = try required(.type)
        guard let type = typeText.matching(Self.kinds) else {
            throw TrackingCodec.Rejection("unknown \(TrackingEvent.Key.type.name) \"\(Self.shown(typeText.string))\"; known types: "
                                          + TrackingEvent.Kind.allCases.map(\.rawValue).joined(separator: ", "))
        }
        let deviceId = try required(.deviceId).string
        guard let occurredAt = try required(.occurredAt).withUTF8({ RFC3339.parse(utf8: $0) }) else {
            throw TrackingCodec.Rejection("\(TrackingEvent.Key.occurredAt.name) must be an RFC 3339 date-time such as 2025-05-01T14:30:00Z")
        }
        let via = try one(of: Self.vias, .via), mediaType = try one(of: Self.mediaTypes, .mediaType)
        return TrackingEvent(id: id, type: type, deviceId: deviceId, touristId: try string(.touristId), occurredAt: occurredAt,
                             platform: try string(.platform), osVersion: try string(.osVersion), model: try string(.model),
                             appVersion: try string(.appVersion), tourId: try uuid(.tourId), poiId: try uuid(.poiId),
                             durationSeconds: try number(.durationSeconds), dwellSeconds: try number(.dwellSeconds),
                             via: via, url: try string(.url), mediaType: mediaType, query: try string(.query), resultCount: try count(.resultCount),
                             eventId: try uuid(.eventId), pageId: try uuid(.pageId), personId: try uuid(.personId),
                             language: try string(.language))
    }

    private static let kinds = TrackingEvent.Kind.allCases.map { (Array($0.rawValue.utf8), $0) }
    private static let vias = TrackingEvent.Via.allCases.map { (Array($0.rawValue.utf8), $0) }
    private static let mediaTypes = MediaType.allCases.map { (Array($0.rawValue.utf8), $0) }

    /// A text quoted back in a reason, shortened so a huge value does not make a huge answer.
    private static func shown(_ text: String) -> String {
        text.count > 64 ? String(text.prefix(64)) + "…" : text
    }

    private func missing(_ key: TrackingEvent.Key) -> TrackingCodec.Rejection { TrackingCodec.Rejection("missing field \(key.name)") }

    private mutating func required(_ key: TrackingEvent.Key) throws(TrackingCodec.Rejection) -> JSONString {
        guard let value = try text(key) else { throw missing(key) }
        return value
    }

    /// The field's value when `typed` takes it; nil when absent, a rejection naming `kind` when of another kind.
    private mutating func field<T>(_ key: TrackingEvent.Key, _ kind: String, _ typed: (Value) -> T?) throws(TrackingCodec.Rejection) -> T? {
        guard let value = self[key] else { return nil }
        guard let typed = typed(value) else { throw TrackingCodec.Rejection("\(key.name) must be \(kind)") }
        return typed
    }

    private mutating func text(_ key: TrackingEvent.Key) throws(TrackingCodec.Rejection) -> JSONString? {
        try field(key, "a string") { if case .string(let value) = $0 { value } else { nil } }
    }

    private mutating func string(_ key: TrackingEvent.Key) throws(TrackingCodec.Rejection) -> String? {
        try text(key)?.string
    }

    private mutating func uuid(_ key: TrackingEvent.Key) throws(TrackingCodec.Rejection) -> UUID? {
        guard let text = try text(key) else { return nil }
        guard let value = text.withUTF8({ UUID(bytes: UnsafeRawBufferPointer($0)) }) else { throw TrackingCodec.Rejection("\(key.name) must be a UUID") }
        return value
    }

    private mutating func number(_ key: TrackingEvent.Key) throws(TrackingCodec.Rejection) -> Double? {
        try field(key, "a number") { if case .number(let value) = $0 { value } else { nil } }
    }

    /// A whole number (`resultCount`), written as one without a fraction.
    private mutating func count(_ key: TrackingEvent.Key) throws(TrackingCodec.Rejection) -> Int? {
        guard let value = try number(key) else { return nil }
        guard value == value.rounded(), abs(value) <= 1e15 else { throw TrackingCodec.Rejection("\(key.name) must be a whole number") }
        return Int(value)
    }

    /// An enumerated field: absent, or one of `table`'s names.
    private mutating func one<T>(of table: [([UInt8], T)], _ key: TrackingEvent.Key) throws(TrackingCodec.Rejection) -> T? {
        guard let text = try text(key) else { return nil }
        guard let value = text.matching(table) else {
            throw TrackingCodec.Rejection("\(key.name) must be one of " + table.map { String(decoding: $0.0, as: UTF8.self) }.joined(separator: ", "))
        }
        return value
    }
}

extension TrackingEvent.Key {
    /// Keys by length, for finding the key a JSON key names without making a string of it.
    private static let byLength: [[TrackingEvent.Key]] = {
        var table = [[TrackingEvent.Key]](repeating: [], count: 16)
        for key in allCases { table[key.name.utf8CodeUnitCount].append(key) }
        return table
    }()

    /// The key these bytes spell, if any.
    static func named(_ bytes: UnsafeBufferPointer<UInt8>) -> TrackingEvent.Key? {
        guard bytes.count < byLength.count else { return nil }
        for key in byLength[bytes.count] where memcmp(bytes.baseAddress!, key.name.utf8Start, bytes.count) == 0 {
            return key
        }
        return nil
    }
}

extension JSONString {
    /// The value whose UTF-8 these bytes are, from a table of (UTF-8, value).
    func matching<T>(_ table: [([UInt8], T)]) -> T? {
        withUTF8 { utf8 in
            for (name, value) in table where name.count == utf8.count && name.withUnsafeBufferPointer({ memcmp($0.baseAddress!, utf8.baseAddress!, utf8.count) == 0 }) {
                return value
            }
            return nil
        }
    }
}

extension JSONReader {
    private static let eventsKey: StaticString = "events"

    /// The batch's elements, or why the body is refused whole though it is JSON (the reader's own errors:
    /// it is not).
    mutating func batch() throws(Failure) -> Result<[Result<TrackingEvent, TrackingCodec.Rejection>], TrackingCodec.BatchFailure> {
        skipWhitespace()
        guard peek() == UInt8(ascii: "{") else {
            try skipValue(depth: 0)
            try expectEnd()
            return .failure(.notAnObject)
        }
        offset += 1
        var events: [Result<TrackingEvent, TrackingCodec.Rejection>]?
        var sawEventsOfAnotherKind = false
        let complete = try members { reader, key throws(Failure) in
            guard key.equals(Self.eventsKey) else {
                try reader.skipValue(depth: 1)
                return true
            }
            if reader.peek() == UInt8(ascii: "[") {
                events = try reader.eventArray()
                sawEventsOfAnotherKind = false
                return events != nil
            }
            try reader.skipValue(depth: 1)
            events = nil
            sawEventsOfAnotherKind = true
            return true
        }
        guard complete else { return .failure(.tooManyEvents) }
        try expectEnd()
        if sawEventsOfAnotherKind { return .failure(.eventsNotAnArray) }
        guard let events else { return .failure(.missingEvents) }
        return .success(events)
    }

    /// Nil at the comma that would start element `maxEvents + 1`: nothing past the cap is read, so a body
    /// of a million tiny elements costs no more than one of `maxEvents`.
    private mutating func eventArray() throws(Failure) -> [Result<TrackingEvent, TrackingCodec.Rejection>]? {
        offset += 1
        var events: [Result<TrackingEvent, TrackingCodec.Rejection>] = []
        // Room for as many events as the rest of the body could hold at a modest 128 bytes each: no regrowth
        // (each moving every event so far) in a batch of ordinary events.
        events.reserveCapacity(min(TrackingCodec.maxEvents, max(1, (bytes.count - offset) / 128)))
        let complete = try elements { reader throws(Failure) in
            guard events.count < TrackingCodec.maxEvents else { return false }
            guard reader.peek() == UInt8(ascii: "{") else {
                try reader.skipValue(depth: 1)
                events.append(.failure(TrackingCodec.Rejection("an event must be a JSON object")))
                return true
            }
            var fields = try reader.eventFields(depth: 1)
            events.append(Result { () throws(TrackingCodec.Rejection) in try fields.event() })
            return true
        }
        return complete ? events : nil
    }

    /// An event object at `depth` (the reader at its brace): its known fields kept, the rest read and dropped.
    mutating func eventFields(depth: Int) throws(Failure) -> EventFields {
        offset += 1
        var fields = EventFields()
        _ = try members { reader, key throws(Failure) in
            if let field = key.withUTF8({ TrackingEvent.Key.named($0) }), field.rawValue < TrackingEvent.Key.data.rawValue {
                fields[field] = try reader.fieldValue(depth: depth + 1)
            } else {
                try reader.skipValue(depth: depth + 1)
            }
            return true
        }
        return fields
    }

    /// A field's value: a string, a number, nil for null, `.otherType` for anything else (read and dropped).
    private mutating func fieldValue(depth: Int) throws(Failure) -> EventFields.Value? {
        switch peek() ?? 0 {
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        case UInt8(ascii: "n"):
            try literal("null")
            return nil
        default:
            try skipValue(depth: depth)
            return .otherType
        }
    }

    /// A `tracking.events` envelope: its `type`, and the event its `data` makes. A schema version newer than
    /// this build's is named as the reason before anything else, as the event's shape may have changed.
    mutating func envelope() -> Result<(type: String, event: TrackingEvent), TrackingCodec.MessageRejection> {
        typealias Key = TrackingEvent.Key
        func undecodable(_ reason: String) -> Result<(type: String, event: TrackingEvent), TrackingCodec.MessageRejection> {
            .failure(TrackingCodec.MessageRejection(kind: .undecodable, reason: "undecodable message: " + reason))
        }
        var type: EventFields.Value?, schemaVersion: EventFields.Value?, event = EventFields()
        var dataIsObject: Bool?  // nil while absent
        do {
            skipWhitespace()
            guard peek() == UInt8(ascii: "{") else {
                try skipValue(depth: 0)
                try expectEnd()
                return undecodable("not a JSON object")
            }
            offset += 1
            _ = try members { reader, key throws(Failure) in
                switch key.withUTF8({ Key.named($0) }) {
                case .type?: type = try reader.fieldValue(depth: 1)
                case .schemaVersion?: schemaVersion = try reader.fieldValue(depth: 1)
                case .data? where reader.peek() == UInt8(ascii: "{"):
                    event = try reader.eventFields(depth: 1)
                    dataIsObject = true
                case .data?: dataIsObject = try reader.fieldValue(depth: 1).map { _ in false }
                default: try reader.skipValue(depth: 1)
                }
                return true
            }
            try expectEnd()
        } catch {
            return undecodable("malformed JSON (\(error.description))")
        }
        let version: Int
        switch schemaVersion {
        case .number(let number)? where number == number.rounded() && abs(number) < 1e15: version = Int(number)
        case nil: return undecodable("missing field \(Key.schemaVersion.name)")
        default: return undecodable("\(Key.schemaVersion.name) must be an integer")
        }
        guard (1...Envelope<TrackingEvent>.currentSchemaVersion).contains(version) else {
            return .failure(TrackingCodec.MessageRejection(kind: .undecodable, reason: EnvelopeError.unsupportedSchemaVersion(version).description))
        }
        let typeName: String
        switch type {
        case .string(let text)?: typeName = text.string
        case nil: return undecodable("missing field \(Key.type.name)")
        default: return undecodable("\(Key.type.name) must be a string")
        }
        switch dataIsObject {
        case true?: break
        case false?: return undecodable("\(Key.data.name) must be an object")
        case nil: return undecodable("missing field \(Key.data.name)")
        }
        do {
            return .success((typeName, try event.event()))
        } catch {
            return undecodable("\(Key.data.name): \(error.reason)")
        }
    }
}
