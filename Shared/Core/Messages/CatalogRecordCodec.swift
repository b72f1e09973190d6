import Foundation

// Catalog records' part of `CatalogEventCodec` (CatalogRecords.swift): their events and stored content written and
// read straight from bytes, as for POIs and tours. A city's snapshot holds ten thousand events and five thousand
// people, and through `JSONEncoder` and `JSONDecoder` they were half of a new feed's wait. As in CatalogEventCodec.swift:
// what is written, `JSONDecoder` reads to the same values; what the fast reader does not take goes to `JSONDecoder`.

extension CatalogEventCodec {
    /// A `<kind>.changed` / `<kind>.deleted` message.
    public static func write<Content>(_ envelope: Envelope<CatalogRecordEvent<Content>>) -> [UInt8] {
        write(envelope) { out, event in out.recordEvent(event) }
    }

    /// Reads a record event of `Content`'s kind, as `EnvelopeDecoder.decode` would.
    public static func readRecordEvent<Content>(_: Content.Type, from bytes: [UInt8]) throws(EnvelopeError)
        -> Envelope<CatalogRecordEvent<Content>> {
        if let envelope = readFastRecordEvent(Content.self, from: bytes) { return envelope }
        return try EnvelopeDecoder.decode(CatalogRecordEvent<Content>.self, from: bytes)
    }

    /// The fast reader alone: nil for anything it does not take. Internal, for the tests.
    static func readFastRecordEvent<Content>(_: Content.Type, from bytes: [UInt8]) -> Envelope<CatalogRecordEvent<Content>>? {
        bytes.withUnsafeBufferPointer { buffer in
            var reader = JSONReader(buffer)
            return try? reader.whole { (reader: inout JSONReader) throws(JSONReader.Failure) in
                try reader.envelope { r throws(JSONReader.Failure) in try r.recordEvent(Content.self) }
            }
        }
    }

    /// A record's content as catalog stores it (JSON text).
    public static func text(_ content: some CatalogRecordContent) -> String {
        var out = JSONWriter(capacity: 512)
        content.write(to: &out)
        return String(decoding: out.bytes, as: UTF8.self)
    }

    /// A record's whole state as JSON text (audit rows, stored command results).
    public static func text<Content>(_ state: CatalogRecordState<Content>) -> String {
        var out = JSONWriter(capacity: 512)
        out.recordState(state)
        return String(decoding: out.bytes, as: UTF8.self)
    }

    public static func readRecordContent<Content: CatalogRecordContent>(_: Content.Type, from bytes: [UInt8]) throws -> Content {
        try readFastRecordContent(Content.self, from: bytes) ?? JSONCoding.decoder.decode(Content.self, from: Data(bytes))
    }

    static func readFastRecordContent<Content: CatalogRecordContent>(_: Content.Type, from bytes: [UInt8]) -> Content? {
        bytes.withUnsafeBufferPointer { buffer in
            var reader = JSONReader(buffer)
            return try? reader.whole { (reader: inout JSONReader) throws(JSONReader.Failure) in try Content.read(from: &reader, depth: 0) }
        }
    }
}

// MARK: - events and states

extension JSONWriter {
    mutating func recordEvent<Content>(_ event: CatalogRecordEvent<Content>) {
        beginObject()
        // Keys sorted, the record's own (`entry`, `person`, …) among them.
        let recordKey = Content.eventRecordKey, recordName = "\(recordKey)"
        var pending = event.record
        for (index, name) in ["entityId", "kind", "snapshotId", "version"].enumerated() {
            if let record = pending, recordName < name {
                key(recordKey); recordState(record)
                pending = nil
            }
            switch index {
            case 0: key("entityId"); uuid(event.entityId)
            case 1: key("kind"); string(event.type)
            case 2: if let snapshotId = event.snapshotId { key("snapshotId"); uuid(snapshotId) }
            default: key("version"); number(event.version)
            }
        }
        if let record = pending { key(recordKey); recordState(record) }
        endObject()
    }

    mutating func recordState<Content>(_ state: CatalogRecordState<Content>) {
        beginObject()
        key("content"); state.content.write(to: &self)
        key("id"); uuid(state.id)
        key("status"); string(state.status.rawValue)
        key("updatedAt"); date(state.updatedAt)
        key("version"); number(state.version)
        endObject()
    }
}

extension JSONReader {
    mutating func recordEvent<Content>(_: Content.Type) throws(Failure) -> CatalogRecordEvent<Content> {
        var kind: CatalogRecordEvent<Content>.Kind?, entityId: UUID?, version: Int?, record: CatalogRecordState<Content>?, snapshotId: UUID?
        try object(depth: 1, keys: ["kind", "entityId", "version", "snapshotId", Content.eventRecordKey]) { reader, field throws(Failure) in
            switch field {
            case 0:
                let type = try reader.text()
                guard let value = [CatalogRecordEvent<Content>.Kind.changed, .deleted].first(where: { CatalogRecordEvent<Content>.type(of: $0) == type })
                else { throw reader.malformed("not a \(Content.recordKind) event") }
                kind = value
            case 1: entityId = try reader.uuid()
            case 2: version = try reader.int()
            case 3: snapshotId = try reader.optional { r throws(Failure) in try r.uuid() }
            default: record = try reader.optional { r throws(Failure) in try r.recordState(Content.self) }
            }
        }
        return CatalogRecordEvent(kind: try Self.required(kind), entityId: try Self.required(entityId), version: try Self.required(version),
                                  record: record, snapshotId: snapshotId)
    }

    mutating func recordState<Content>(_: Content.Type) throws(Failure) -> CatalogRecordState<Content> {
        var id: UUID?, version: Int?, status: ContentStatus?, content: Content?, updatedAt: Date?
        try object(depth: 2, keys: ["content", "id", "status", "updatedAt", "version"]) { reader, field throws(Failure) in
            switch field {
            case 0: content = try Content.read(from: &reader, depth: 3)
            case 1: id = try reader.uuid()
            case 2:
                guard let value = ContentStatus(rawValue: try reader.text()) else { throw reader.malformed("unknown status") }
                status = value
            case 3: updatedAt = try reader.date()
            default: version = try reader.int()
            }
        }
        return CatalogRecordState(id: try Self.required(id), version: try Self.required(version), status: try Self.required(status),
                                  content: try Self.required(content), updatedAt: try Self.required(updatedAt))
    }

    mutating func texts() throws(Failure) -> [String] { try array { e throws(Failure) in try e.text() } }

    mutating func optionalText() throws(Failure) -> String? { try optional { r throws(Failure) in try r.text() } }

    mutating func optionalInt() throws(Failure) -> Int? { try optional { r throws(Failure) in try r.int() } }

    mutating func optionalUUID() throws(Failure) -> UUID? { try optional { r throws(Failure) in try r.uuid() } }

    mutating func value<Value: RawRepresentable<String>>(_: Value.Type) throws(Failure) -> Value {
        guard let value = Value(rawValue: try text()) else { throw malformed("unknown \(Value.self)") }
        return value
    }
}

// MARK: - each kind's content (keys written in sorted order)

extension CalendarEntryContent {
    public func write(to out: inout JSONWriter) {
        out.beginObject()
        out.key("allDay"); out.bool(allDay)
        out.key("categories"); out.strings(categories)
        out.key("description"); out.string(description)
        out.key("endsAt"); out.string(endsAt)
        out.key("exceptionDates"); out.strings(exceptionDates)
        if let placePoiId { out.key("placePoiId"); out.uuid(placePoiId) }
        if let placeText { out.key("placeText"); out.string(placeText) }
        if let recurrence {
            out.key("recurrence"); out.beginObject()
            if let byDay = recurrence.byDay { out.key("byDay"); out.strings(byDay) }
            if let count = recurrence.count { out.key("count"); out.number(count) }
            out.key("frequency"); out.string(recurrence.frequency.rawValue)
            if let interval = recurrence.interval { out.key("interval"); out.number(interval) }
            if let until = recurrence.until { out.key("until"); out.string(until) }
            out.endObject()
        }
        if let registrationUrl { out.key("registrationUrl"); out.string(registrationUrl) }
        out.key("startsAt"); out.string(startsAt)
        out.key("summary"); out.string(summary)
        out.key("timeZone"); out.string(timeZone)
        out.key("title"); out.string(title)
        if let translations { out.key("translations"); out.translations(translations) }
        if let url { out.key("url"); out.string(url) }
        out.endObject()
    }

    public static func read(from reader: inout JSONReader, depth: Int) throws(JSONReader.Failure) -> Self {
        var title: String?, summary: String?, description: String?, startsAt: String?, endsAt: String?, timeZone: String?, allDay: Bool?
        var placePoiId: UUID?, placeText: String?, url: String?, registrationUrl: String?, categories: [String]?
        var recurrence: CalendarRecurrence?, exceptionDates: [String]?, translations: Translations?
        let keys: [StaticString] = ["title", "summary", "description", "startsAt", "endsAt", "timeZone", "allDay", "placePoiId", "placeText", "url",
                                    "registrationUrl", "categories", "recurrence", "exceptionDates", "translations"]
        try reader.object(depth: depth, keys: keys) { reader, field throws(JSONReader.Failure) in
            switch field {
            case 0: title = try reader.text()
            case 1: summary = try reader.text()
            case 2: description = try reader.text()
            case 3: startsAt = try reader.text()
            case 4: endsAt = try reader.text()
            case 5: timeZone = try reader.text()
            case 6: allDay = try reader.boolean()
            case 7: placePoiId = try reader.optionalUUID()
            case 8: placeText = try reader.optionalText()
            case 9: url = try reader.optionalText()
            case 10: registrationUrl = try reader.optionalText()
            case 11: categories = try reader.texts()
            case 12: recurrence = try reader.optional { r throws(JSONReader.Failure) in try CalendarRecurrence.read(from: &r, depth: depth + 1) }
            case 13: exceptionDates = try reader.texts()
            default: translations = try reader.optional { r throws(JSONReader.Failure) in try r.translations(depth: depth + 1) }
            }
        }
        return Self(title: try JSONReader.required(title), summary: try JSONReader.required(summary),
                    description: try JSONReader.required(description), startsAt: try JSONReader.required(startsAt),
                    endsAt: try JSONReader.required(endsAt), timeZone: try JSONReader.required(timeZone), allDay: try JSONReader.required(allDay),
                    placePoiId: placePoiId, placeText: placeText, url: url, registrationUrl: registrationUrl,
                    categories: try JSONReader.required(categories), recurrence: recurrence, exceptionDates: try JSONReader.required(exceptionDates),
                    translations: translations)
    }
}

extension CalendarRecurrence {
    static func read(from reader: inout JSONReader, depth: Int) throws(JSONReader.Failure) -> Self {
        var frequency: Frequency?, interval: Int?, byDay: [String]?, count: Int?, until: String?
        try reader.object(depth: depth, keys: ["frequency", "interval", "byDay", "count", "until"]) { reader, field throws(JSONReader.Failure) in
            switch field {
            case 0: frequency = try reader.value(Frequency.self)
            case 1: interval = try reader.optionalInt()
            case 2: byDay = try reader.optional { r throws(JSONReader.Failure) in try r.texts() }
            case 3: count = try reader.optionalInt()
            default: until = try reader.optionalText()
            }
        }
        return Self(frequency: try JSONReader.required(frequency), interval: interval, byDay: byDay, count: count, until: until)
    }
}

extension PersonContent {
    public func write(to out: inout JSONWriter) {
        out.beginObject()
        out.key("department"); out.string(department)
        if let email { out.key("email"); out.string(email) }
        out.key("interests"); out.strings(interests)
        out.key("name"); out.string(name)
        if let officePoiId { out.key("officePoiId"); out.uuid(officePoiId) }
        if let officeText { out.key("officeText"); out.string(officeText) }
        if let phone { out.key("phone"); out.string(phone) }
        if let photoUrl { out.key("photoUrl"); out.string(photoUrl) }
        if let profileUrl { out.key("profileUrl"); out.string(profileUrl) }
        out.key("role"); out.string(role)
        if let translations { out.key("translations"); out.translations(translations) }
        out.endObject()
    }

    public static func read(from reader: inout JSONReader, depth: Int) throws(JSONReader.Failure) -> Self {
        var name: String?, role: String?, department: String?, email: String?, phone: String?, officePoiId: UUID?, officeText: String?
        var interests: [String]?, profileUrl: String?, photoUrl: String?, translations: Translations?
        let keys: [StaticString] = ["name", "role", "department", "email", "phone", "officePoiId", "officeText", "interests", "profileUrl", "photoUrl",
                                    "translations"]
        try reader.object(depth: depth, keys: keys) { reader, field throws(JSONReader.Failure) in
            switch field {
            case 0: name = try reader.text()
            case 1: role = try reader.text()
            case 2: department = try reader.text()
            case 3: email = try reader.optionalText()
            case 4: phone = try reader.optionalText()
            case 5: officePoiId = try reader.optionalUUID()
            case 6: officeText = try reader.optionalText()
            case 7: interests = try reader.texts()
            case 8: profileUrl = try reader.optionalText()
            case 9: photoUrl = try reader.optionalText()
            default: translations = try reader.optional { r throws(JSONReader.Failure) in try r.translations(depth: depth + 1) }
            }
        }
        return Self(name: try JSONReader.required(name), role: try JSONReader.required(role), department: try JSONReader.required(department),
                    email: email, phone: phone, officePoiId: officePoiId, officeText: officeText, interests: try JSONReader.required(interests),
                    profileUrl: profileUrl, photoUrl: photoUrl, translations: translations)
    }
}

extension PageContent {
    public func write(to out: inout JSONWriter) {
        out.beginObject()
        out.key("body"); out.string(body)
        out.key("order"); out.number(order)
        out.key("slug"); out.string(slug)
        out.key("summary"); out.string(summary)
        out.key("title"); out.string(title)
        if let translations { out.key("translations"); out.translations(translations) }
        out.endObject()
    }

    public static func read(from reader: inout JSONReader, depth: Int) throws(JSONReader.Failure) -> Self {
        var slug: String?, title: String?, summary: String?, body: String?, order: Int?, translations: Translations?
        try reader.object(depth: depth, keys: ["slug", "title", "summary", "body", "order", "translations"]) { reader, field throws(JSONReader.Failure) in
            switch field {
            case 0: slug = try reader.text()
            case 1: title = try reader.text()
            case 2: summary = try reader.text()
            case 3: body = try reader.text()
            case 4: order = try reader.int()
            default: translations = try reader.optional { r throws(JSONReader.Failure) in try r.translations(depth: depth + 1) }
            }
        }
        return Self(slug: try JSONReader.required(slug), title: try JSONReader.required(title), summary: try JSONReader.required(summary),
                    body: try JSONReader.required(body), order: try JSONReader.required(order), translations: translations)
    }
}

extension FeaturedContent {
    public func write(to out: inout JSONWriter) {
        out.beginObject()
        out.key("imageAlt"); out.string(imageAlt)
        out.key("imageUrl"); out.string(imageUrl)
        out.key("order"); out.number(order)
        out.key("targetId"); out.uuid(targetId)
        out.key("targetKind"); out.string(targetKind.rawValue)
        if let title { out.key("title"); out.string(title) }
        if let translations { out.key("translations"); out.translations(translations) }
        out.endObject()
    }

    public static func read(from reader: inout JSONReader, depth: Int) throws(JSONReader.Failure) -> Self {
        var targetKind: TargetKind?, targetId: UUID?, title: String?, imageUrl: String?, imageAlt: String?, order: Int?, translations: Translations?
        let keys: [StaticString] = ["targetKind", "targetId", "title", "imageUrl", "imageAlt", "order", "translations"]
        try reader.object(depth: depth, keys: keys) { reader, field throws(JSONReader.Failure) in
            switch field {
            case 0: targetKind = try reader.value(TargetKind.self)
            case 1: targetId = try reader.uuid()
            case 2: title = try reader.optionalText()
            case 3: imageUrl = try reader.text()
            case 4: imageAlt = try reader.text()
            case 5: order = try reader.int()
            default: translations = try reader.optional { r throws(JSONReader.Failure) in try r.translations(depth: depth + 1) }
            }
        }
        return Self(targetKind: try JSONReader.required(targetKind), targetId: try JSONReader.required(targetId), title: title,
                    imageUrl: try JSONReader.required(imageUrl), imageAlt: try JSONReader.required(imageAlt), order: try JSONReader.required(order),
                    translations: translations)
    }
}

extension MediaContent {
    public func write(to out: inout JSONWriter) {
        out.beginObject()
        if let altText { out.key("altText"); out.string(altText) }
        out.key("byteCount"); out.number(byteCount)
        if let captions { out.key("captions"); out.string(captions) }
        if let captionsByteCount { out.key("captionsByteCount"); out.number(captionsByteCount) }
        out.key("fileName"); out.string(fileName)
        out.key("format"); out.string(format.rawValue)
        if let height { out.key("height"); out.number(height) }
        out.key("sha256"); out.string(sha256)
        out.key("title"); out.string(title)
        if let transcript { out.key("transcript"); out.string(transcript) }
        if let translations { out.key("translations"); out.translations(translations) }
        out.key("variants"); out.beginArray()
        for variant in variants {
            out.beginObject()
            out.key("byteCount"); out.number(variant.byteCount)
            out.key("height"); out.number(variant.height)
            out.key("sha256"); out.string(variant.sha256)
            out.key("width"); out.number(variant.width)
            out.endObject()
        }
        out.endArray()
        if let width { out.key("width"); out.number(width) }
        out.endObject()
    }

    public static func read(from reader: inout JSONReader, depth: Int) throws(JSONReader.Failure) -> Self {
        var sha256: String?, format: MediaFormat?, byteCount: Int?, fileName: String?, title: String?, altText: String?, width: Int?
        var height: Int?, variants: [Variant]?, captions: String?, captionsByteCount: Int?, transcript: String?, translations: Translations?
        let keys: [StaticString] = ["sha256", "format", "byteCount", "fileName", "title", "altText", "width", "height", "variants", "captions",
                                    "captionsByteCount", "transcript", "translations"]
        try reader.object(depth: depth, keys: keys) { reader, field throws(JSONReader.Failure) in
            switch field {
            case 0: sha256 = try reader.text()
            case 1: format = try reader.value(MediaFormat.self)
            case 2: byteCount = try reader.int()
            case 3: fileName = try reader.text()
            case 4: title = try reader.text()
            case 5: altText = try reader.optionalText()
            case 6: width = try reader.optionalInt()
            case 7: height = try reader.optionalInt()
            case 8: variants = try reader.array { e throws(JSONReader.Failure) in try Variant.read(from: &e, depth: depth + 2) }
            case 9: captions = try reader.optionalText()
            case 10: captionsByteCount = try reader.optionalInt()
            case 11: transcript = try reader.optionalText()
            default: translations = try reader.optional { r throws(JSONReader.Failure) in try r.translations(depth: depth + 1) }
            }
        }
        return Self(sha256: try JSONReader.required(sha256), format: try JSONReader.required(format), byteCount: try JSONReader.required(byteCount),
                    fileName: try JSONReader.required(fileName), title: try JSONReader.required(title), altText: altText, width: width,
                    height: height, variants: try JSONReader.required(variants), captions: captions, captionsByteCount: captionsByteCount,
                    transcript: transcript, translations: translations)
    }
}

extension MediaContent.Variant {
    static func read(from reader: inout JSONReader, depth: Int) throws(JSONReader.Failure) -> Self {
        var width: Int?, height: Int?, sha256: String?, byteCount: Int?
        try reader.object(depth: depth, keys: ["width", "height", "sha256", "byteCount"]) { reader, field throws(JSONReader.Failure) in
            switch field {
            case 0: width = try reader.int()
            case 1: height = try reader.int()
            case 2: sha256 = try reader.text()
            default: byteCount = try reader.int()
            }
        }
        return Self(width: try JSONReader.required(width), height: try JSONReader.required(height), sha256: try JSONReader.required(sha256),
                    byteCount: try JSONReader.required(byteCount))
    }
}
