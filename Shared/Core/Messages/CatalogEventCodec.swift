import Foundation

/// The one codec of `catalog.events` messages (`Envelope<CatalogEvent>`, and the catalog records' events in
/// CatalogRecordCodec.swift), of `catalog.commands`, and of the tour, POI and record content catalog stores: written and
/// read straight from bytes; and the writer of command results (stored, and on `catalog.command-results`), which an
/// import makes one of per row. A snapshot is a whole city of them, and through `JSONEncoder` and `JSONDecoder`
/// encoding and decoding were most of a new feed's wait.
///
/// It writes what `JSONCoding.encoder` writes for the same values, up to number formatting (sorted keys, absent
/// optionals left out, RFC 3339 dates): `JSONDecoder` reads the two to equal values. A number that is not
/// finite, which catalog's validation never lets into content, is written as null (`JSONEncoder` throws), and
/// such a message is then refused by readers. It reads what `JSONCoding.decoder` reads to the same values: the fast reader takes the
/// common form, and anything it does not take (unknown enum values, a wrong type, malformed JSON) goes to
/// `JSONDecoder`, whose answer or error stands. `CatalogEventCodecTests` checks both directions against
/// Foundation on random and damaged input.
public enum CatalogEventCodec {
    /// What a `catalog.events` message holds: a catalog event, or another type (a category's or a record's event,
    /// read by its type).
    public enum Message: Sendable {
        case catalog(Envelope<CatalogEvent>)
        case other(type: String)
    }

    // MARK: writing

    public static func write(_ envelope: Envelope<CatalogEvent>) -> [UInt8] {
        write(envelope) { out, event in out.event(event) }
    }

    /// An envelope, its `data` written by `data`.
    static func write<Payload>(_ envelope: Envelope<Payload>, data: (inout JSONWriter, Payload) -> Void) -> [UInt8] {
        var out = JSONWriter(capacity: 1_024)
        out.beginObject()
        out.key("data"); data(&out, envelope.data)
        out.key("id"); out.uuid(envelope.id)
        out.key("occurredAt"); out.date(envelope.occurredAt)
        out.key("schemaVersion"); out.number(envelope.schemaVersion)
        out.key("source"); out.string(envelope.source)
        out.key("type"); out.string(envelope.type)
        out.endObject()
        return out.bytes
    }

    /// A POI's content as catalog stores it (JSON text).
    public static func text(_ content: PoiContent) -> String {
        var out = JSONWriter()
        out.poiContent(content)
        return String(decoding: out.bytes, as: UTF8.self)
    }

    public static func text(_ content: TourContent) -> String {
        var out = JSONWriter()
        out.tourContent(content)
        return String(decoding: out.bytes, as: UTF8.self)
    }

    /// A tour's draft as catalog stores it.
    public static func text(_ draft: TourDraft) -> String {
        var out = JSONWriter()
        out.tourDraft(draft)
        return String(decoding: out.bytes, as: UTF8.self)
    }

    /// A tour's schedule as catalog stores it.
    public static func text(_ schedule: TourSchedule) -> String {
        var out = JSONWriter()
        out.tourSchedule(schedule)
        return String(decoding: out.bytes, as: UTF8.self)
    }

    /// A POI's whole state as JSON text (catalog's audit rows keep these).
    public static func text(_ state: PoiState) -> String {
        var out = JSONWriter(capacity: 512)
        out.poiState(state)
        return String(decoding: out.bytes, as: UTF8.self)
    }

    public static func text(_ state: TourState) -> String {
        var out = JSONWriter(capacity: 512)
        out.tourState(state)
        return String(decoding: out.bytes, as: UTF8.self)
    }

    /// A command's result as catalog stores it (`processed_commands`: an import stores one per row).
    public static func text(_ result: CatalogCommandResult) -> String {
        var out = JSONWriter(capacity: 512)
        out.commandResult(result)
        return String(decoding: out.bytes, as: UTF8.self)
    }

    /// A `catalog.command-results` message.
    public static func write(_ envelope: Envelope<CatalogCommandResult>) -> [UInt8] {
        write(envelope) { out, result in out.commandResult(result) }
    }

    /// A `catalog.commands` message: an import's command is a megabyte of rows, and `JSONEncoder` made the
    /// sender (the admin, `catalog import`, the city generator) as busy as catalog applying them.
    public static func write(_ envelope: Envelope<CatalogCommand>) -> [UInt8] {
        write(envelope) { out, command in out.command(command) }
    }

    /// The bytes one import row takes in its command, for cutting imports into commands of a message's size.
    public static func byteCount(of row: CatalogBatchRow) -> Int {
        var out = JSONWriter(capacity: 1_024)
        out.batchRow(row)
        return out.bytes.count
    }

    // MARK: reading

    /// Reads a message of `catalog.events`; an error says why it is not one (as `EnvelopeDecoder` would).
    public static func read(_ bytes: [UInt8]) throws(EnvelopeError) -> Message {
        if let message = readFast(bytes) { return message }
        let header = try EnvelopeDecoder.header(bytes)
        guard CatalogEvent.Kind(rawValue: header.type) != nil else { return .other(type: header.type) }
        return .catalog(try EnvelopeDecoder.decode(CatalogEvent.self, from: bytes))
    }

    /// Reads a message of `catalog.commands`, as `EnvelopeDecoder.decode` would: an import's command is a
    /// megabyte of rows, which JSONDecoder took 50–90 ms over while catalog waited.
    public static func readCommand(_ bytes: [UInt8]) throws(EnvelopeError) -> Envelope<CatalogCommand> {
        if let envelope = readFastCommand(bytes) { return envelope }
        return try EnvelopeDecoder.decode(CatalogCommand.self, from: bytes)
    }

    /// The fast command reader alone: nil for anything it does not take. Internal, for the tests.
    static func readFastCommand(_ bytes: [UInt8]) -> Envelope<CatalogCommand>? {
        bytes.withUnsafeBufferPointer { buffer in
            var reader = JSONReader(buffer)
            return try? reader.whole { (reader: inout JSONReader) throws(JSONReader.Failure) in
                try reader.envelope { r throws(JSONReader.Failure) in try r.command(depth: 1) }
            }
        }
    }

    public static func readPoiContent(_ bytes: [UInt8]) throws -> PoiContent {
        try readFastPoiContent(bytes) ?? JSONCoding.decoder.decode(PoiContent.self, from: Data(bytes))
    }

    public static func readTourContent(_ bytes: [UInt8]) throws -> TourContent {
        try readFastTourContent(bytes) ?? JSONCoding.decoder.decode(TourContent.self, from: Data(bytes))
    }

    public static func readTourSchedule(_ bytes: [UInt8]) throws -> TourSchedule {
        let fast = bytes.withUnsafeBufferPointer { buffer in
            var reader = JSONReader(buffer)
            return try? reader.whole { (reader: inout JSONReader) throws(JSONReader.Failure) in try reader.tourSchedule() }
        }
        return try fast ?? JSONCoding.decoder.decode(TourSchedule.self, from: Data(bytes))
    }

    public static func readTourDraft(_ bytes: [UInt8]) throws -> TourDraft {
        let fast = bytes.withUnsafeBufferPointer { buffer in
            var reader = JSONReader(buffer)
            return try? reader.whole { (reader: inout JSONReader) throws(JSONReader.Failure) in try reader.tourDraft() }
        }
        return try fast ?? JSONCoding.decoder.decode(TourDraft.self, from: Data(bytes))
    }

    /// The fast readers of content alone: nil for anything they do not take. Internal, for the tests.
    static func readFastPoiContent(_ bytes: [UInt8]) -> PoiContent? {
        bytes.withUnsafeBufferPointer { buffer in
            var reader = JSONReader(buffer)
            return try? reader.whole { (reader: inout JSONReader) throws(JSONReader.Failure) in try reader.poiContent() }
        }
    }

    static func readFastTourContent(_ bytes: [UInt8]) -> TourContent? {
        bytes.withUnsafeBufferPointer { buffer in
            var reader = JSONReader(buffer)
            return try? reader.whole { (reader: inout JSONReader) throws(JSONReader.Failure) in try reader.tourContent() }
        }
    }

    /// An entity of a snapshot chunk that could not be read: its JSON and why.
    public struct UnreadEntity: Error, Sendable {
        public let json: [UInt8]
        public let reason: String
    }

    /// A snapshot chunk that does not read whole, read entity by entity, so a bad entity costs only itself:
    /// the chunk's envelope (without its entities) and each entity's event or why it is not one. Nil when
    /// the message is not a chunk or its envelope cannot be read. Slow (JSONSerialization), for damaged chunks only.
    public static func readChunkByEntity(_ bytes: [UInt8]) -> (envelope: Envelope<CatalogEvent>, entities: [Result<CatalogEvent, UnreadEntity>])? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
              var data = object["data"] as? [String: Any], data["kind"] as? String == CatalogEvent.Kind.snapshotChunk.rawValue
        else { return nil }
        let pois = data.removeValue(forKey: "pois"), tours = data.removeValue(forKey: "tours")
        guard pois == nil || pois is [Any], tours == nil || tours is [Any] else { return nil }
        var header = object
        header["data"] = data
        guard let headerBytes = try? JSONSerialization.data(withJSONObject: header),
              let envelope = try? EnvelopeDecoder.decode(CatalogEvent.self, from: Array(headerBytes)),
              envelope.type == CatalogEvent.Kind.snapshotChunk.rawValue
        else { return nil }
        let snapshotId = envelope.data.snapshotId
        func entity<State: Decodable>(_ value: Any, as type: State.Type, _ event: (State) -> CatalogEvent) -> Result<CatalogEvent, UnreadEntity> {
            guard let json = try? JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed, .sortedKeys]) else {
                return .failure(UnreadEntity(json: Array("\(value)".utf8), reason: "not JSON"))
            }
            do {
                return .success(event(try JSONCoding.decoder.decode(State.self, from: json)))
            } catch {
                return .failure(UnreadEntity(json: Array(json), reason: JSONCoding.describe(error)))
            }
        }
        let entities = (pois as? [Any] ?? []).map { entity($0, as: PoiState.self) { .changed($0, snapshotId: snapshotId) } }
            + (tours as? [Any] ?? []).map { entity($0, as: TourState.self) { .changed($0, snapshotId: snapshotId) } }
        return (envelope, entities)
    }

    /// The fast reader alone: nil for anything it does not take. Internal, for the tests.
    static func readFast(_ bytes: [UInt8]) -> Message? {
        bytes.withUnsafeBufferPointer { buffer in
            var reader = JSONReader(buffer)
            return try? reader.whole { (reader: inout JSONReader) throws(JSONReader.Failure) in try reader.envelope() }
        }
    }
}

// MARK: - writer

/// The codec's writing: keys in sorted order, as `JSONCoding.encoder` sorts them; absent optionals left out.
extension JSONWriter {
    mutating func event(_ event: CatalogEvent) {
        beginObject()
        if let answers = event.answers { key("answers"); uuids(answers) }
        if let entityId = event.entityId { key("entityId"); uuid(entityId) }
        key("kind"); string(event.kind.rawValue)
        if let partition = event.partition { key("partition"); number(Int(partition)) }
        if let partitionCount = event.partitionCount { key("partitionCount"); number(partitionCount) }
        if let poi = event.poi { key("poi"); poiState(poi) }
        if let pois = event.pois {
            key("pois"); beginArray()
            for poi in pois { poiState(poi) }
            endArray()
        }
        if let snapshotId = event.snapshotId { key("snapshotId"); uuid(snapshotId) }
        if let tour = event.tour { key("tour"); tourState(tour) }
        if let tours = event.tours {
            key("tours"); beginArray()
            for tour in tours { tourState(tour) }
            endArray()
        }
        if let version = event.version { key("version"); number(version) }
        endObject()
    }

    mutating func commandResult(_ result: CatalogCommandResult) {
        beginObject()
        key("action"); string(result.action.rawValue)
        if let entry = result.calendarEntry { key("calendarEntry"); recordState(entry) }
        if let category = result.category {
            key("category"); beginObject()
            key("id"); uuid(category.id)
            key("name"); string(category.name)
            if let parentId = category.parentId { key("parentId"); uuid(parentId) }
            key("path"); string(category.path)
            if let translations = category.translations { key("translations"); self.translations(translations) }
            key("updatedAt"); date(category.updatedAt)
            key("version"); number(category.version)
            endObject()
        }
        key("commandId"); uuid(result.commandId)
        if let entityId = result.entityId { key("entityId"); uuid(entityId) }
        key("errors"); fieldErrors(result.errors)
        if let featured = result.featured { key("featured"); recordState(featured) }
        if let history = result.history {
            key("history"); beginArray()
            for entry in history {
                beginObject()
                key("action"); string(entry.action.rawValue)
                key("actor"); string(entry.actor)
                key("at"); date(entry.at)
                if let poi = entry.poi { key("poi"); poiState(poi) }
                if let tour = entry.tour { key("tour"); tourState(tour) }
                endObject()
            }
            endArray()
        }
        if let media = result.media { key("media"); recordState(media) }
        if let message = result.message { key("message"); string(message) }
        key("outcome"); string(result.outcome.rawValue)
        if let page = result.page { key("page"); recordState(page) }
        if let person = result.person { key("person"); recordState(person) }
        if let poi = result.poi { key("poi"); poiState(poi) }
        if let pois = result.pois {
            key("pois"); beginArray()
            for poi in pois { poiState(poi) }
            endArray()
        }
        if let repeated = result.repeated { key("repeated"); bool(repeated) }
        if let rows = result.rows {
            key("rows"); beginArray()
            for row in rows {
                beginObject()
                key("entityIds"); beginArray()
                for id in row.entityIds { uuid(id) }
                endArray()
                key("errors"); fieldErrors(row.errors)
                key("label"); string(row.label)
                if let message = row.message { key("message"); string(message) }
                key("outcome"); string(row.outcome.rawValue)
                endObject()
            }
            endArray()
        }
        if let tour = result.tour { key("tour"); tourState(tour) }
        if let version = result.version { key("version"); number(version) }
        endObject()
    }

    /// A command, keys sorted.
    mutating func command(_ command: CatalogCommand) {
        func record(_ name: StaticString, _ value: (some CatalogRecordContent)?) {
            guard let value else { return }
            key(name); value.write(to: &self)
        }
        beginObject()
        key("action"); string(command.action.rawValue)
        key("actor"); string(command.actor)
        if let asDraft = command.asDraft { key("asDraft"); bool(asDraft) }
        record("calendarEntry", command.calendarEntry)
        if let category = command.category {
            key("category"); beginObject()
            key("name"); string(category.name)
            if let parentId = category.parentId { key("parentId"); uuid(parentId) }
            if let path = category.path { key("path"); string(path) }
            if let translations = category.translations { key("translations"); self.translations(translations) }
            endObject()
        }
        if let chunkedSnapshot = command.chunkedSnapshot { key("chunkedSnapshot"); bool(chunkedSnapshot) }
        key("commandId"); uuid(command.commandId)
        if let confirmFarStops = command.confirmFarStops { key("confirmFarStops"); bool(confirmFarStops) }
        if let entityId = command.entityId { key("entityId"); uuid(entityId) }
        if let expectedVersion = command.expectedVersion { key("expectedVersion"); number(expectedVersion) }
        record("featured", command.featured)
        record("media", command.media)
        record("page", command.page)
        record("person", command.person)
        if let poi = command.poi { key("poi"); poiContent(poi) }
        if let revertToVersion = command.revertToVersion { key("revertToVersion"); number(revertToVersion) }
        if let rows = command.rows {
            key("rows"); beginArray()
            for row in rows { batchRow(row) }
            endArray()
        }
        if let scheduleAt = command.scheduleAt { key("scheduleAt"); date(scheduleAt) }
        if let sharedSnapshot = command.sharedSnapshot { key("sharedSnapshot"); bool(sharedSnapshot) }
        if let skipInvalidRows = command.skipInvalidRows { key("skipInvalidRows"); bool(skipInvalidRows) }
        if let status = command.status { key("status"); string(status.rawValue) }
        if let stops = command.stops { key("stops"); uuids(stops) }
        if let tour = command.tour { key("tour"); tourContent(tour) }
        endObject()
    }

    mutating func batchRow(_ row: CatalogBatchRow) {
        beginObject()
        key("commands"); beginArray()
        for command in row.commands { self.command(command) }
        endArray()
        key("label"); string(row.label)
        endObject()
    }

    private mutating func fieldErrors(_ errors: [FieldError]) {
        beginArray()
        for error in errors {
            beginObject()
            key("field"); string(error.field)
            key("message"); string(error.message)
            endObject()
        }
        endArray()
    }

    mutating func poiState(_ poi: PoiState) {
        beginObject()
        key("content"); poiContent(poi.content)
        if let draft = poi.draft { key("draft"); poiContent(draft) }
        key("id"); uuid(poi.id)
        key("status"); string(poi.status.rawValue)
        key("updatedAt"); date(poi.updatedAt)
        key("version"); number(poi.version)
        endObject()
    }

    mutating func tourDraft(_ draft: TourDraft) {
        beginObject()
        key("content"); tourContent(draft.content)
        key("stops"); uuids(draft.stops)
        endObject()
    }

    mutating func tourSchedule(_ schedule: TourSchedule) {
        beginObject()
        key("at"); date(schedule.at)
        key("by"); string(schedule.by)
        if let confirmed = schedule.confirmedFarStops { key("confirmedFarStops"); uuids(confirmed) }
        if let failure = schedule.failure { key("failure"); string(failure) }
        key("status"); string(schedule.status.rawValue)
        endObject()
    }

    mutating func tourState(_ tour: TourState) {
        beginObject()
        key("content"); tourContent(tour.content)
        if let draft = tour.draft { key("draft"); tourDraft(draft) }
        key("id"); uuid(tour.id)
        if let schedule = tour.schedule { key("schedule"); tourSchedule(schedule) }
        key("status"); string(tour.status.rawValue)
        key("stops"); uuids(tour.stops)
        key("updatedAt"); date(tour.updatedAt)
        key("version"); number(tour.version)
        endObject()
    }

    mutating func poiContent(_ poi: PoiContent) {
        beginObject()
        if let accessibility = poi.accessibility { key("accessibility"); string(accessibility) }
        if let address = poi.address { key("address"); string(address) }
        key("buildings"); strings(poi.buildings)
        if poi.categories.count > 1 { key("categories"); strings(poi.categories) }
        if let category = poi.category { key("category"); string(category) }
        key("description"); string(poi.description)
        key("latitude"); number(poi.latitude)
        if let legacyId = poi.legacyId { key("legacyId"); number(legacyId) }
        key("links"); beginArray()
        for link in poi.links {
            beginObject()
            key("name"); string(link.name)
            key("type"); string(link.type.rawValue)
            key("url"); string(link.url)
            endObject()
        }
        endArray()
        key("longitude"); number(poi.longitude)
        key("name"); string(poi.name)
        if let narration = poi.narration { key("narration"); string(narration) }
        if let openingHours = poi.openingHours { key("openingHours"); string(openingHours) }
        if let phone = poi.phone { key("phone"); string(phone) }
        if poi.pictureAlts.contains(where: { !$0.isEmpty }) { key("pictureAlts"); strings(poi.pictureAlts) }
        key("pictures"); strings(poi.pictures)
        if let priceLevel = poi.priceLevel { key("priceLevel"); number(priceLevel) }
        key("summary"); string(poi.summary)
        if let translations = poi.translations { key("translations"); self.translations(translations) }
        if let radius = poi.triggerRadiusMeters { key("triggerRadiusMeters"); number(radius) }
        if let website = poi.website { key("website"); string(website) }
        endObject()
    }

    mutating func tourContent(_ tour: TourContent) {
        beginObject()
        if let color = tour.color { key("color"); string(color) }
        if let coverImage = tour.coverImage { key("coverImage"); string(coverImage) }
        if let coverImageAlt = tour.coverImageAlt { key("coverImageAlt"); string(coverImageAlt) }
        if let minutes = tour.estimatedMinutes { key("estimatedMinutes"); number(minutes) }
        if let legacyId = tour.legacyId { key("legacyId"); number(legacyId) }
        key("name"); string(tour.name)
        key("purpose"); string(tour.purpose)
        if let route = tour.route { key("route"); lineString(route) }
        key("summary"); string(tour.summary)
        if let translations = tour.translations { key("translations"); self.translations(translations) }
        endObject()
    }

    /// Language → field → text, each level's keys in order (as `JSONEncoder`'s sorted keys write them).
    mutating func translations(_ translations: Translations) {
        beginObject()
        for language in translations.keys.sorted() {
            key(dynamic: language)
            beginObject()
            let texts = translations[language]!
            for field in texts.keys.sorted() {
                key(dynamic: field); string(texts[field]!)
            }
            endObject()
        }
        endObject()
    }

    /// GeoJSON, as `LineString`'s `Codable` writes it (the feed's tour answers too).
    public mutating func lineString(_ line: LineString) {
        beginObject()
        key("coordinates")
        beginArray()
        for point in line.coordinates {
            beginArray()
            number(point.longitude)
            number(point.latitude)
            endArray()
        }
        endArray()
        key("type"); string("LineString")
        endObject()
    }
}

// MARK: - reader

/// The fast reader's parts: each throws on anything unexpected, and the caller falls back to `JSONDecoder`.
extension JSONReader {
    mutating func whole<T>(_ read: (inout JSONReader) throws(Failure) -> T) throws(Failure) -> T {
        skipWhitespace()
        let value = try read(&self)
        try expectEnd()
        return value
    }

    /// Reads `{ … }`, handing each member whose key is in `keys` to `member` with the key's index; other keys
    /// are skipped. A key twice is refused: JSONDecoder keeps the first value, and the fallback gives that.
    mutating func object(depth: Int, keys: [StaticString], _ member: (inout JSONReader, Int) throws(Failure) -> Void) throws(Failure) {
        guard depth <= Self.maxDepth else { throw malformed("nesting deeper than \(Self.maxDepth)") }
        try expect(UInt8(ascii: "{"))
        var seen: UInt32 = 0
        _ = try members { reader, key throws(Failure) in
            guard let index = keys.firstIndex(where: { key.equals($0) }) else {
                try reader.skipValue(depth: depth + 1)
                return true
            }
            guard seen & (1 << index) == 0 else { throw reader.malformed("duplicate key") }
            seen |= 1 << index
            try member(&reader, index)
            return true
        }
    }

    mutating func array<T>(_ element: (inout JSONReader) throws(Failure) -> T) throws(Failure) -> [T] {
        try expect(UInt8(ascii: "["))
        var values: [T] = []
        _ = try elements { reader throws(Failure) in
            values.append(try element(&reader))
            return true
        }
        return values
    }

    /// True (and the null read) when the value is null: an optional that is absent.
    mutating func null() throws(Failure) -> Bool {
        guard peek() == UInt8(ascii: "n") else { return false }
        try literal("null")
        return true
    }

    mutating func text() throws(Failure) -> String { try string().string }

    mutating func uuid() throws(Failure) -> UUID {
        guard let uuid = try string().withUTF8({ UUID(bytes: UnsafeRawBufferPointer($0)) }) else { throw malformed("not a UUID") }
        return uuid
    }

    mutating func date() throws(Failure) -> Date {
        guard let date = try string().withUTF8({ RFC3339.parse(utf8: $0) }) else { throw malformed("not an RFC 3339 date") }
        return date
    }

    mutating func double() throws(Failure) -> Double {
        let value = try number()
        guard value.isFinite else { throw malformed("number out of range") }
        return value
    }

    /// Digits only (JSONDecoder's reading of "1.0" or "1e2" as an Int is left to it).
    mutating func int() throws(Failure) -> Int {
        let start = offset
        let value = try number()
        for byte in bytes[start..<offset] where byte != UInt8(ascii: "-") && !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
            throw malformed("not an integer")
        }
        guard abs(value) < 9_007_199_254_740_992 else { throw malformed("integer out of range") }
        return Int(value)
    }

    mutating func optional<T>(_ read: (inout JSONReader) throws(Failure) -> T) throws(Failure) -> T? {
        try null() ? nil : try read(&self)
    }

    static func required<T>(_ value: T?) throws(Failure) -> T {
        guard let value else { throw Failure(offset: 0, what: "a required field is missing") }
        return value
    }

    /// A catalog event, or the type of another message (a record's or a category's event, whose data the caller
    /// reads by its type; `type` follows `data` in the sorted keys, so the data is read as a catalog event first).
    mutating func envelope() throws(Failure) -> CatalogEventCodec.Message {
        var event: CatalogEvent?
        let envelope = try envelope { r throws(Failure) in
            let start = r.offset
            do {
                event = try r.event()
            } catch {
                r.offset = start
                try r.skipValue(depth: 1)
            }
            return event != nil
        }
        guard CatalogEvent.Kind(rawValue: envelope.type) != nil else { return .other(type: envelope.type) }
        guard let event else { throw malformed("not a catalog event") }
        return .catalog(Envelope(id: envelope.id, type: envelope.type, schemaVersion: envelope.schemaVersion, occurredAt: envelope.occurredAt,
                                 source: envelope.source, data: event))
    }

    /// An envelope whose data `read` reads, with a schema version this build knows.
    mutating func envelope<Payload>(data read: (inout JSONReader) throws(Failure) -> Payload) throws(Failure) -> Envelope<Payload> {
        var data: Payload?, id: UUID?, occurredAt: Date?, schemaVersion: Int?, source: String?, type: String?
        try object(depth: 0, keys: ["data", "id", "occurredAt", "schemaVersion", "source", "type"]) { reader, field throws(Failure) in
            switch field {
            case 0: data = try read(&reader)
            case 1: id = try reader.uuid()
            case 2: occurredAt = try reader.date()
            case 3: schemaVersion = try reader.int()
            case 4: source = try reader.text()
            default: type = try reader.text()
            }
        }
        let version = try Self.required(schemaVersion)
        guard (1...Envelope<Int>.currentSchemaVersion).contains(version) else { throw malformed("unsupported schema version") }
        return Envelope(id: try Self.required(id), type: try Self.required(type), schemaVersion: version,
                        occurredAt: try Self.required(occurredAt), source: try Self.required(source), data: try Self.required(data))
    }

    /// A command; an import's rows hold commands in turn.
    mutating func command(depth: Int) throws(Failure) -> CatalogCommand {
        var commandId: UUID?, action: CatalogAction?, actor: String?, entityId: UUID?, expectedVersion: Int?, tour: TourContent?
        var poi: PoiContent?, stops: [UUID]?, status: ContentStatus?, category: CategoryContent?, rows: [CatalogBatchRow]?
        var skipInvalidRows: Bool?, chunkedSnapshot: Bool?, revertToVersion: Int?, confirmFarStops: Bool?, asDraft: Bool?, scheduleAt: Date?
        var calendarEntry: CalendarEntryContent?, person: PersonContent?, page: PageContent?, featured: FeaturedContent?, media: MediaContent?
        var sharedSnapshot: Bool?
        let keys: [StaticString] = ["commandId", "action", "actor", "entityId", "expectedVersion", "tour", "poi", "stops", "status", "category",
                                    "rows", "skipInvalidRows", "chunkedSnapshot", "revertToVersion", "confirmFarStops", "asDraft", "scheduleAt",
                                    "calendarEntry", "person", "page", "featured", "media", "sharedSnapshot"]
        try object(depth: depth, keys: keys) { reader, field throws(Failure) in
            switch field {
            case 0: commandId = try reader.uuid()
            case 1:
                guard let value = CatalogAction(rawValue: try reader.text()) else { throw reader.malformed("unknown action") }
                action = value
            case 2: actor = try reader.text()
            case 3: entityId = try reader.optional { r throws(Failure) in try r.uuid() }
            case 4: expectedVersion = try reader.optional { r throws(Failure) in try r.int() }
            case 5: tour = try reader.optional { r throws(Failure) in try r.tourContent() }
            case 6: poi = try reader.optional { r throws(Failure) in try r.poiContent() }
            case 7: stops = try reader.optional { r throws(Failure) in try r.array { e throws(Failure) in try e.uuid() } }
            case 8:
                status = try reader.optional { r throws(Failure) in
                    guard let value = ContentStatus(rawValue: try r.text()) else { throw r.malformed("unknown status") }
                    return value
                }
            case 9: category = try reader.optional { r throws(Failure) in try r.categoryContent(depth: depth + 1) }
            case 10: rows = try reader.optional { r throws(Failure) in try r.array { e throws(Failure) in try e.batchRow(depth: depth + 2) } }
            case 11: skipInvalidRows = try reader.optional { r throws(Failure) in try r.boolean() }
            case 12: chunkedSnapshot = try reader.optional { r throws(Failure) in try r.boolean() }
            case 13: revertToVersion = try reader.optional { r throws(Failure) in try r.int() }
            case 14: confirmFarStops = try reader.optional { r throws(Failure) in try r.boolean() }
            case 15: asDraft = try reader.optional { r throws(Failure) in try r.boolean() }
            case 16: scheduleAt = try reader.optional { r throws(Failure) in try r.date() }
            case 17: calendarEntry = try reader.optional { r throws(Failure) in try CalendarEntryContent.read(from: &r, depth: depth + 1) }
            case 18: person = try reader.optional { r throws(Failure) in try PersonContent.read(from: &r, depth: depth + 1) }
            case 19: page = try reader.optional { r throws(Failure) in try PageContent.read(from: &r, depth: depth + 1) }
            case 20: featured = try reader.optional { r throws(Failure) in try FeaturedContent.read(from: &r, depth: depth + 1) }
            case 21: media = try reader.optional { r throws(Failure) in try MediaContent.read(from: &r, depth: depth + 1) }
            default: sharedSnapshot = try reader.optional { r throws(Failure) in try r.boolean() }
            }
        }
        return CatalogCommand(commandId: try Self.required(commandId), action: try Self.required(action), actor: try Self.required(actor),
                              entityId: entityId, expectedVersion: expectedVersion, tour: tour, poi: poi, stops: stops, status: status,
                              category: category, rows: rows, skipInvalidRows: skipInvalidRows, chunkedSnapshot: chunkedSnapshot,
                              sharedSnapshot: sharedSnapshot,
                              revertToVersion: revertToVersion, confirmFarStops: confirmFarStops, asDraft: asDraft,
                              scheduleAt: scheduleAt, calendarEntry: calendarEntry, person: person, page: page, featured: featured, media: media)
    }

    private mutating func batchRow(depth: Int) throws(Failure) -> CatalogBatchRow {
        var label: String?, commands: [CatalogCommand]?
        try object(depth: depth, keys: ["label", "commands"]) { reader, field throws(Failure) in
            switch field {
            case 0: label = try reader.text()
            default: commands = try reader.array { e throws(Failure) in try e.command(depth: depth + 2) }
            }
        }
        return CatalogBatchRow(label: try Self.required(label), commands: try Self.required(commands))
    }

    private mutating func categoryContent(depth: Int) throws(Failure) -> CategoryContent {
        var name: String?, parentId: UUID?, path: String?, translations: Translations?
        try object(depth: depth, keys: ["name", "parentId", "path", "translations"]) { reader, field throws(Failure) in
            switch field {
            case 0: name = try reader.text()
            case 1: parentId = try reader.optional { r throws(Failure) in try r.uuid() }
            case 2: path = try reader.optional { r throws(Failure) in try r.text() }
            default: translations = try reader.optional { r throws(Failure) in try r.translations(depth: depth + 1) }
            }
        }
        return CategoryContent(name: try Self.required(name), parentId: parentId, path: path, translations: translations)
    }

    mutating func boolean() throws(Failure) -> Bool {
        guard case .bool(let value) = try scalar() else { throw malformed("not a boolean") }
        return value
    }

    private mutating func event() throws(Failure) -> CatalogEvent {
        var kind: CatalogEvent.Kind?, entityId: UUID?, version: Int?, tour: TourState?, poi: PoiState?, snapshotId: UUID?
        var partition: Int32?, partitionCount: Int?, pois: [PoiState]?, tours: [TourState]?, answers: [UUID]?
        let keys: [StaticString] = ["kind", "entityId", "version", "poi", "pois", "tour", "tours", "snapshotId", "partition", "partitionCount",
                                    "answers"]
        try object(depth: 1, keys: keys) { reader, field throws(Failure) in
            switch field {
            case 0:
                guard let value = CatalogEvent.Kind(rawValue: try reader.text()) else { throw reader.malformed("unknown kind") }
                kind = value
            case 1: entityId = try reader.optional { r throws(Failure) in try r.uuid() }
            case 2: version = try reader.optional { r throws(Failure) in try r.int() }
            case 3: poi = try reader.optional { r throws(Failure) in try r.poiState() }
            case 4: pois = try reader.optional { r throws(Failure) in try r.array { e throws(Failure) in try e.poiState() } }
            case 5: tour = try reader.optional { r throws(Failure) in try r.tourState() }
            case 6: tours = try reader.optional { r throws(Failure) in try r.array { e throws(Failure) in try e.tourState() } }
            case 7: snapshotId = try reader.optional { r throws(Failure) in try r.uuid() }
            case 8:
                partition = try reader.optional { r throws(Failure) in
                    let value = try r.int()
                    guard let narrow = Int32(exactly: value) else { throw r.malformed("partition out of range") }
                    return narrow
                }
            case 9: partitionCount = try reader.optional { r throws(Failure) in try r.int() }
            default: answers = try reader.optional { r throws(Failure) in try r.array { e throws(Failure) in try e.uuid() } }
            }
        }
        return CatalogEvent(kind: try Self.required(kind), entityId: entityId, version: version, tour: tour, poi: poi, snapshotId: snapshotId,
                            partition: partition, partitionCount: partitionCount, pois: pois, tours: tours, answers: answers)
    }

    private mutating func poiState() throws(Failure) -> PoiState {
        var id: UUID?, version: Int?, content: PoiContent?, updatedAt: Date?, draft: PoiContent?, status = ContentStatus.draft
        try object(depth: 2, keys: ["content", "id", "updatedAt", "version", "draft", "status"]) { reader, field throws(Failure) in
            switch field {
            case 0: content = try reader.poiContent()
            case 1: id = try reader.uuid()
            case 2: updatedAt = try reader.date()
            case 3: version = try reader.int()
            case 4: draft = try reader.optional { r throws(Failure) in try r.poiContent() }
            default:
                guard let value = ContentStatus(rawValue: try reader.text()) else { throw reader.malformed("unknown status") }
                status = value
            }
        }
        return PoiState(id: try Self.required(id), version: try Self.required(version), status: status, content: try Self.required(content),
                        updatedAt: try Self.required(updatedAt), draft: draft)
    }

    private mutating func tourState() throws(Failure) -> TourState {
        var id: UUID?, version: Int?, status: ContentStatus?, content: TourContent?, stops: [UUID]?, updatedAt: Date?, draft: TourDraft?
        var schedule: TourSchedule?
        try object(depth: 2, keys: ["content", "id", "status", "stops", "updatedAt", "version", "draft", "schedule"]) { reader, field throws(Failure) in
            switch field {
            case 0: content = try reader.tourContent()
            case 1: id = try reader.uuid()
            case 2:
                guard let value = ContentStatus(rawValue: try reader.text()) else { throw reader.malformed("unknown status") }
                status = value
            case 3: stops = try reader.array { e throws(Failure) in try e.uuid() }
            case 4: updatedAt = try reader.date()
            case 5: version = try reader.int()
            case 6: draft = try reader.optional { r throws(Failure) in try r.tourDraft() }
            default: schedule = try reader.optional { r throws(Failure) in try r.tourSchedule() }
            }
        }
        return TourState(id: try Self.required(id), version: try Self.required(version), status: try Self.required(status),
                         content: try Self.required(content), stops: try Self.required(stops), updatedAt: try Self.required(updatedAt),
                         draft: draft, schedule: schedule)
    }

    mutating func tourSchedule() throws(Failure) -> TourSchedule {
        var status: ContentStatus?, at: Date?, by: String?, confirmedFarStops: [UUID]?, failure: String?
        try object(depth: 3, keys: ["status", "at", "by", "confirmedFarStops", "failure"]) { reader, field throws(Failure) in
            switch field {
            case 0:
                guard let value = ContentStatus(rawValue: try reader.text()) else { throw reader.malformed("unknown status") }
                status = value
            case 1: at = try reader.date()
            case 2: by = try reader.text()
            case 3: confirmedFarStops = try reader.optional { r throws(Failure) in try r.array { e throws(Failure) in try e.uuid() } }
            default: failure = try reader.optional { r throws(Failure) in try r.text() }
            }
        }
        return TourSchedule(status: try Self.required(status), at: try Self.required(at), by: try Self.required(by),
                            confirmedFarStops: confirmedFarStops, failure: failure)
    }

    mutating func tourDraft() throws(Failure) -> TourDraft {
        var content: TourContent?, stops: [UUID]?
        try object(depth: 3, keys: ["content", "stops"]) { reader, field throws(Failure) in
            switch field {
            case 0: content = try reader.tourContent()
            default: stops = try reader.array { e throws(Failure) in try e.uuid() }
            }
        }
        return TourDraft(content: try Self.required(content), stops: try Self.required(stops))
    }

    mutating func poiContent() throws(Failure) -> PoiContent {
        var name: String?, summary: String?, description: String?, latitude: Double?, longitude: Double?, category: String?
        var buildings: [String]?, pictures: [String]?, links: [MediaLink]?, address: String?, phone: String?, website: String?
        var openingHours: String?, legacyId: Int?, categories: [String]?, priceLevel: Int?, accessibility: String?
        var pictureAlts: [String]?, triggerRadiusMeters: Int?, narration: String?, translations: Translations?
        let keys: [StaticString] = ["name", "summary", "description", "latitude", "longitude", "category", "buildings", "pictures", "links",
                                    "address", "phone", "website", "openingHours", "legacyId", "categories", "priceLevel", "accessibility",
                                    "pictureAlts", "triggerRadiusMeters", "narration", "translations"]
        try object(depth: 3, keys: keys) { reader, field throws(Failure) in
            switch field {
            case 0: name = try reader.text()
            case 1: summary = try reader.text()
            case 2: description = try reader.text()
            case 3: latitude = try reader.double()
            case 4: longitude = try reader.double()
            case 5: category = try reader.optional { r throws(Failure) in try r.text() }
            case 6: buildings = try reader.array { e throws(Failure) in try e.text() }
            case 7: pictures = try reader.array { e throws(Failure) in try e.text() }
            case 8: links = try reader.array { e throws(Failure) in try e.link() }
            case 9: address = try reader.optional { r throws(Failure) in try r.text() }
            case 10: phone = try reader.optional { r throws(Failure) in try r.text() }
            case 11: website = try reader.optional { r throws(Failure) in try r.text() }
            case 12: openingHours = try reader.optional { r throws(Failure) in try r.text() }
            case 13: legacyId = try reader.optional { r throws(Failure) in try r.int() }
            case 14: categories = try reader.optional { r throws(Failure) in try r.array { e throws(Failure) in try e.text() } }
            case 15: priceLevel = try reader.optional { r throws(Failure) in try r.int() }
            case 16: accessibility = try reader.optional { r throws(Failure) in try r.text() }
            case 17: pictureAlts = try reader.optional { r throws(Failure) in try r.array { e throws(Failure) in try e.text() } }
            case 18: triggerRadiusMeters = try reader.optional { r throws(Failure) in try r.int() }
            case 19: narration = try reader.optional { r throws(Failure) in try r.text() }
            default: translations = try reader.optional { r throws(Failure) in try r.translations(depth: 4) }
            }
        }
        return PoiContent(name: try Self.required(name), summary: try Self.required(summary), description: try Self.required(description),
                          latitude: try Self.required(latitude), longitude: try Self.required(longitude), category: category, categories: categories,
                          buildings: try Self.required(buildings), pictures: try Self.required(pictures), links: try Self.required(links),
                          address: address, phone: phone, website: website, openingHours: openingHours, legacyId: legacyId,
                          priceLevel: priceLevel, accessibility: accessibility, pictureAlts: pictureAlts ?? [],
                          triggerRadiusMeters: triggerRadiusMeters, narration: narration, translations: translations)
    }

    private mutating func link() throws(Failure) -> MediaLink {
        var name: String?, type: MediaType?, url: String?
        try object(depth: 5, keys: ["name", "type", "url"]) { reader, field throws(Failure) in
            switch field {
            case 0: name = try reader.text()
            case 1:
                guard let value = MediaType(rawValue: try reader.text()) else { throw reader.malformed("unknown link type") }
                type = value
            default: url = try reader.text()
            }
        }
        return MediaLink(name: try Self.required(name), type: try Self.required(type), url: try Self.required(url))
    }

    mutating func tourContent() throws(Failure) -> TourContent {
        var name: String?, summary: String?, purpose: String?, legacyId: Int?
        var coverImage: String?, coverImageAlt: String?, estimatedMinutes: Int?, color: String?, route: LineString?, translations: Translations?
        try object(depth: 3, keys: ["name", "summary", "purpose", "legacyId", "coverImage", "coverImageAlt", "estimatedMinutes", "color",
                                    "route", "translations"]) { reader, field throws(Failure) in
            switch field {
            case 0: name = try reader.text()
            case 1: summary = try reader.text()
            case 2: purpose = try reader.text()
            case 3: legacyId = try reader.optional { r throws(Failure) in try r.int() }
            case 4: coverImage = try reader.optional { r throws(Failure) in try r.text() }
            case 5: coverImageAlt = try reader.optional { r throws(Failure) in try r.text() }
            case 6: estimatedMinutes = try reader.optional { r throws(Failure) in try r.int() }
            case 7: color = try reader.optional { r throws(Failure) in try r.text() }
            case 8: route = try reader.optional { r throws(Failure) in try r.lineString(depth: 4) }
            default: translations = try reader.optional { r throws(Failure) in try r.translations(depth: 4) }
            }
        }
        return TourContent(name: try Self.required(name), summary: try Self.required(summary), purpose: try Self.required(purpose),
                           legacyId: legacyId, coverImage: coverImage, coverImageAlt: coverImageAlt, estimatedMinutes: estimatedMinutes,
                           color: color, route: route, translations: translations)
    }

    /// Language → field → text. A key twice is left to `JSONDecoder` (which refuses it in a dictionary).
    mutating func translations(depth: Int) throws(Failure) -> Translations {
        guard depth + 1 <= Self.maxDepth else { throw malformed("nesting deeper than \(Self.maxDepth)") }
        var translations: Translations = [:]
        try expect(UInt8(ascii: "{"))
        _ = try members { reader, language throws(Failure) in
            var texts: [String: String] = [:]
            try reader.expect(UInt8(ascii: "{"))
            _ = try reader.members { reader, field throws(Failure) in
                guard texts.updateValue(try reader.text(), forKey: field.string) == nil else { throw reader.malformed("duplicate key") }
                return true
            }
            guard translations.updateValue(texts, forKey: language.string) == nil else { throw reader.malformed("duplicate key") }
            return true
        }
        return translations
    }

    /// A GeoJSON LineString; anything else (another type, a short position) is left to `JSONDecoder`, which refuses it.
    mutating func lineString(depth: Int) throws(Failure) -> LineString {
        var type: String?, coordinates: [Coordinate]?
        try object(depth: depth, keys: ["type", "coordinates"]) { reader, field throws(Failure) in
            switch field {
            case 0: type = try reader.text()
            default:
                coordinates = try reader.array { r throws(Failure) in
                    let position = try r.array { p throws(Failure) in try p.double() }
                    guard position.count >= 2 else { throw r.malformed("a position is [longitude, latitude]") }
                    return Coordinate(latitude: position[1], longitude: position[0])
                }
            }
        }
        guard type == "LineString" else { throw malformed("a route is a LineString") }
        return LineString(try Self.required(coordinates))
    }
}
