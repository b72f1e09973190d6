import Foundation
import Shared
import Testing
import TestSupport

extension SplitMix64 {
    fileprivate mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
    fileprivate mutating func chance(_ oneIn: Int) -> Bool { below(oneIn) == 0 }
    fileprivate mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }
}

@Suite("Tracking codec", .stopsIfHung)
struct TrackingCodecTests {
    @Test("the topic message is byte for byte what the feed wrote before, and what older writers wrote reads back")
    func storedSamples() throws {
        for (event, sample) in zip(TrackingWireSamples.events, TrackingWireSamples.feed) {
            #expect(TrackingCodec.writeMessage(event) == Array(sample.utf8), "\(sample)")
        }
        for (event, sample) in zip(TrackingWireSamples.events + TrackingWireSamples.events, TrackingWireSamples.feed + TrackingWireSamples.jsonEncoder) {
            guard case .event(let read) = TrackingCodec.readMessage(Array(sample.utf8)) else { Issue.record("rejected: \(sample)"); continue }
            #expect(read == event, "\(sample)")
        }
    }

    @Test("random events: written, they read back the same, by the codec and by JSONDecoder; a phone's batch of them too")
    func roundTrip() throws {
        var random = SplitMix64(seed: 16)
        var events: [TrackingEvent] = []
        for _ in 0..<2_000 {
            let event = Self.randomEvent(&random)
            let message = TrackingCodec.writeMessage(event)
            guard case .event(let read) = TrackingCodec.readMessage(message) else {
                Issue.record("rejected: \(String(decoding: message, as: UTF8.self))")
                continue
            }
            #expect(read == event)
            let envelope = try EnvelopeDecoder.decode(TrackingEvent.self, from: message)
            #expect(envelope.data == event && envelope.id == event.id && envelope.occurredAt == event.occurredAt)
            #expect(envelope.type == event.type.rawValue && envelope.source == "feed")
            events.append(event)
        }
        for start in stride(from: 0, to: events.count, by: 50) {
            let batch = events[start..<(start + 50)]
            let body = Array(("{\"events\": [" + batch.map { String(decoding: try! JSONCoding.encoder.encode($0), as: UTF8.self) }.joined(separator: ",\n") + "]}").utf8)
            let read = try body.withUnsafeBytes { try TrackingCodec.readBatch($0) }
            #expect(try read.map { try $0.get() } == Array(batch))
        }
    }

    @Test("the reader keeps a value for every event key: an event with all of them reads back whole")
    func everyKey() throws {
        #expect(TrackingEvent.Key.eventKeys.count == 22, "EventFields' InlineArray holds 22 values: change both together")
        let id = UUID()
        let event = TrackingEvent(type: .eventViewed, deviceId: "d", touristId: "t", occurredAt: Date(timeIntervalSince1970: 1_790_000_000),
                                  platform: "ios", osVersion: "17", model: "m", appVersion: "1", tourId: id, poiId: id, durationSeconds: 1,
                                  dwellSeconds: 2, via: .map, url: "https://example.edu", mediaType: .audio, query: "q", resultCount: 3,
                                  eventId: id, pageId: id, personId: id, language: "pt-BR")
        guard case .event(let read) = TrackingCodec.readMessage(TrackingCodec.writeMessage(event)) else { Issue.record("not read back"); return }
        #expect(read == event)
    }

    @Test("a language is read as sent; a malformed one or one of another JSON type rejects the event naming the field")
    func language() throws {
        let now = Date()
        func body(_ language: String) -> [UInt8] {
            Array(("{\"events\": [{\"id\": \"\(UUID().uuidString)\", \"type\": \"tour.started\", \"deviceId\": \"d\", "
                + "\"occurredAt\": \"\(RFC3339.format(now))\", \"tourId\": \"\(UUID().uuidString)\", \"language\": \(language)}]}").utf8)
        }
        func read(_ language: String) throws -> Result<TrackingEvent, TrackingCodec.Rejection> {
            try body(language).withUnsafeBytes { try TrackingCodec.readBatch($0) }[0]
        }
        #expect(try read("\"ES\"").get().language == "ES")
        #expect(try read("\"zh-Hant-TW\"").get().validationError(now: now) == nil)
        #expect(try read("null").get().language == nil)
        if case .failure(let rejection) = try read("7") { #expect(rejection.reason == "language must be a string") } else { Issue.record("a number read as a language") }
        for malformed in ["", "e", "es_MX", "es-", "-es", "español", "es-toolongsubtag", "en-US-" + String(repeating: "a", count: 30), "es\\u0000"] {
            let event = try read("\"\(malformed)\"").get()
            #expect(event.validationError(now: now)?.hasPrefix("language must be a BCP 47 language tag") == true, "\(malformed)")
            guard case .rejected(let rejection) = TrackingCodec.readMessage(TrackingCodec.writeMessage(event)) else {
                Issue.record("analytics would count \(malformed)")
                continue
            }
            #expect(rejection.kind == .invalid && rejection.reason.hasPrefix("language must be"))
        }
    }

    /// An event valid on the topic (every rule but the age window): any text, including escapes, control
    /// characters and non-ASCII; a millisecond-exact time in 1600–9999.
    static func randomEvent(_ random: inout SplitMix64) -> TrackingEvent {
        func text() -> String {
            let alphabet: [String] = ["a", "Z", "7", " ", "\"", "\\", "/", "\n", "\t", "\u{1}", "\u{1F}", "\u{7F}", "é", "€", "😀", "\u{2028}", "<", "&"]
            return (0..<(1 + random.below(24))).map { _ in random.pick(alphabet) }.joined()
        }
        func maybe<T>(_ value: @autoclosure () -> T) -> T? { random.chance(2) ? value() : nil }
        func uuid() -> UUID {
            withUnsafeBytes(of: (random.next(), random.next())) { UUID(uuid: $0.load(as: uuid_t.self)) }
        }
        let milliseconds = Int64(random.below(253_402_300_800_000 + 11_676_096_000_000)) - 11_676_096_000_000
        var event = TrackingEvent(id: uuid(), type: random.pick(TrackingEvent.Kind.allCases), deviceId: text(), touristId: maybe(text()),
                                  occurredAt: Date(timeIntervalSince1970: Double(milliseconds) / 1_000),
                                  platform: maybe(text()), osVersion: maybe(text()), model: maybe(text()), appVersion: maybe(text()),
                                  tourId: maybe(uuid()), poiId: maybe(uuid()),
                                  durationSeconds: maybe(Double(random.below(604_800_000)) / 1_000), dwellSeconds: maybe(random.pick([0, 3e-05, 0.1, 604_800])),
                                  via: maybe(random.pick(TrackingEvent.Via.allCases)), url: maybe(text()), mediaType: maybe(random.pick(MediaType.allCases)),
                                  query: maybe(text()), resultCount: maybe(random.pick([0, 1, 37, 1_000_000_000])),
                                  eventId: maybe(uuid()), pageId: maybe(uuid()), personId: maybe(uuid()),
                                  // Read as sent: analytics, not the codec, folds a tag's case.
                                  language: maybe(random.pick(["en", "es", "ES", "pt-BR", "pt-br", "zh-Hant", "es-419", "sr-Latn-RS", "yue-HK"])))
        // The fields its type requires.
        for key in TrackingEvent.requiredFields(of: event.type) {
            switch key {
            case .platform: event.platform = event.platform ?? "ios"
            case .osVersion: event.osVersion = event.osVersion ?? "17"
            case .model: event.model = event.model ?? "m"
            case .appVersion: event.appVersion = event.appVersion ?? "1"
            case .tourId: event.tourId = event.tourId ?? uuid()
            case .poiId: event.poiId = event.poiId ?? uuid()
            case .durationSeconds: event.durationSeconds = event.durationSeconds ?? 1
            case .dwellSeconds: event.dwellSeconds = event.dwellSeconds ?? 2
            case .via: event.via = event.via ?? .list
            case .url: event.url = event.url ?? "https://example.edu/a"
            case .mediaType: event.mediaType = event.mediaType ?? .video
            case .query: event.query = event.query ?? "library"
            case .resultCount: event.resultCount = event.resultCount ?? 0
            case .eventId: event.eventId = event.eventId ?? uuid()
            case .pageId: event.pageId = event.pageId ?? uuid()
            case .personId: event.personId = event.personId ?? uuid()
            default: break
            }
        }
        return event
    }
}

@Suite("RFC 3339 reader and writer", .stopsIfHung)
struct RFC3339CodecTests {
    /// Foundation's reading, rounded to the millisecond: what the fast path must match.
    static func foundation(_ text: String) -> Date? {
        guard let date = (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text)) ?? (try? Date.ISO8601FormatStyle().parse(text)) else { return nil }
        return Date(timeIntervalSince1970: (date.timeIntervalSince1970 * 1_000).rounded() / 1_000)
    }

    /// gmtime's, for the writer.
    static func gmtime(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1_000).rounded())
        var seconds = time_t(milliseconds >= 0 ? milliseconds / 1_000 : (milliseconds - 999) / 1_000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
                      Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), Int(milliseconds - Int64(seconds) * 1_000))
    }

    @Test("the writer agrees with gmtime and the reader with Foundation, to the millisecond")
    func agreesWithFoundation() {
        var random = SplitMix64(seed: 99)
        for _ in 0..<20_000 {
            // From year 1 to 9999, at whole milliseconds and in between.
            let date = Date(timeIntervalSince1970: Double.random(in: -62_135_596_800...253_402_300_799, using: &random))
            let text = RFC3339.format(date)
            #expect(text == Self.gmtime(date))
            #expect(RFC3339.parse(text) == Self.foundation(text), "\(text)")
            let shortFraction = String(text.dropLast(3)) + "Z", noFraction = String(text.prefix(19)) + "Z"
            #expect(RFC3339.parse(shortFraction) == Self.foundation(shortFraction), "\(shortFraction)")
            #expect(RFC3339.parse(noFraction) == Self.foundation(noFraction), "\(noFraction)")
        }
        for text in ["2024-02-29T23:59:59.999Z", "2023-02-29T00:00:00Z", "2025-13-01T00:00:00Z", "2025-05-01T25:00:00Z",
                     "2025-05-01T10:00:00", "2025-05-01T10:00:00+02:00", "2025-05-01T10:00:00.1234Z", "2025-01-02T03:04:05.9996Z",
                     "0000-01-01T00:00:00Z", "1970-01-01T00:00:00Z", "yesterday", "", "2025-05-01T10:00:00.Z", "２０２５-05-01T10:00:00Z"] {
            #expect(RFC3339.parse(text) == Self.foundation(text), "\(text)")
        }
    }
}

/// The codec's JSON reader against Foundation's `JSONSerialization`, on random and hostile input from a seeded
/// generator: valid documents of every kind (and shaped like batches and messages), then mutated — bytes
/// flipped, inserted (NUL, quotes, brackets, bytes that are not UTF-8), deleted, truncated, bad escapes, lone
/// surrogates, huge numbers, deep nesting, duplicate keys, whitespace JSON has and has not.
///
/// The reader must accept exactly the documents `JSONSerialization` accepts (`.fragmentsAllowed`: RFC 8259
/// allows any value at the top) and read the same values, except where it is deliberately stricter or
/// deliberately reads more, each checked here:
/// - trailing commas (`[1,]`, `{"a":1,}`): JSONSerialization accepts them; RFC 8259 does not, nor does the reader;
/// - encodings: JSONSerialization detects a byte-order mark and UTF-16/32; the reader takes UTF-8 only, as
///   RFC 8259 §8.1 requires between systems;
/// - nesting: the reader stops at 64 levels, JSONSerialization at 512;
/// - numbers beyond Double's range (`1e999`): valid by the grammar, read as ±infinity (which every field
///   check refuses); JSONSerialization refuses the document;
/// - numbers of more than 15 significant digits: JSONSerialization keeps them as Decimal (38 digits), the
///   reader as the nearest Double; compared through the Decimal's digits, within 1e-14 relative;
/// - a raw U+FEFF at the start of a string or right after an escape: JSONSerialization drops it (it decodes
///   each run between escapes as a new text and takes it for a byte-order mark); the reader keeps it.
/// Duplicate keys are accepted by both; the last value counts, as in JSONSerialization's dictionaries.
@Suite("JSON reader against JSONSerialization", .stopsIfHung)
struct JSONReaderDifferentialTests {
    @Test("same documents accepted, same values read, on 20 000 seeded random and hostile inputs")
    func differential() throws {
        var random = SplitMix64(seed: 2_026)
        var accepted = 0, refused = 0, documented = 0
        for round in 0..<20_000 {
            var input = Self.document(&random)
            let mutations = random.chance(3) ? 0 : 1 + random.below(3)
            for _ in 0..<mutations { Self.mutate(&input, &random) }
            let ours = try? JSONValue.read(input)
            let theirs = try? JSONSerialization.jsonObject(with: Data(input), options: [.fragmentsAllowed])
            let shown = "round \(round): \(String(decoding: input.prefix(300), as: UTF8.self).debugDescription) \(input.prefix(40).map { String($0, radix: 16) })"
            switch (ours, theirs) {
            case (let ours?, let theirs?):
                accepted += 1
                #expect(Self.same(ours, theirs), "\(shown)")
            case (nil, nil):
                refused += 1
            case (nil, _?):
                documented += 1
                #expect(Self.hasTrailingComma(input) || Self.notPlainUTF8(input) || Self.depth(input) > 64, "refused: \(shown)")
            case (let ours?, nil):
                documented += 1
                #expect(Self.hasNonFinite(ours), "accepted: \(shown)")
            }
            // The codec's readers take the same documents as the general one, below its nesting limit.
            if Self.depth(input) < 63 { try Self.checkCodecAgrees(input, valid: ours != nil, theirs: theirs, shown) }
        }
        // The generator must exercise both sides.
        #expect(accepted > 4_000 && refused > 4_000, "accepted \(accepted), refused \(refused), documented differences \(documented)")
    }

    /// A batch reads unless the input is not JSON (or too long a batch); a message is "malformed JSON" exactly
    /// when the input is not JSON; events a batch reads carry what JSONSerialization read.
    static func checkCodecAgrees(_ input: [UInt8], valid: Bool, theirs: Any?, _ shown: String) throws {
        let batch = input.withUnsafeBytes { bytes in Result { () throws(TrackingCodec.BatchFailure) in try TrackingCodec.readBatch(bytes) } }
        switch batch {
        case .failure(.malformed): #expect(!valid, "batch refused valid JSON: \(shown)")
        case .failure(.tooManyEvents): break
        case .failure: #expect(valid, "batch took invalid JSON: \(shown)")
        case .success(let results):
            #expect(valid, "batch took invalid JSON: \(shown)")
            guard let theirs else { return }
            let elements = ((theirs as? [String: Any])?["events"] as? [Any]) ?? []
            #expect(elements.count == results.count, "\(shown)")
            for (result, element) in zip(results, elements) {
                guard case .success(let event) = result, let object = element as? [String: Any] else { continue }
                // JSONSerialization drops some U+FEFFs (see above).
                let theirDevice = Array(((object["deviceId"] as? String) ?? "").unicodeScalars)
                #expect(withoutSomeBOMs(Array(event.deviceId.unicodeScalars), as: theirDevice) == theirDevice, "\(shown)")
                #expect((object["id"] as? String).flatMap(UUID.init(uuidString:)) == event.id, "\(shown)")
            }
        }
        if case .rejected(let rejection) = TrackingCodec.readMessage(input) {
            #expect(rejection.reason.hasPrefix("undecodable message: malformed JSON") == !valid, "\(rejection.reason): \(shown)")
        } else {
            #expect(valid, "message from invalid JSON: \(shown)")
        }
    }

    // MARK: Comparing

    static func same(_ ours: JSONValue, _ theirs: Any) -> Bool {
        switch ours {
        case .null: return theirs is NSNull
        case .bool(let value):
            return isBoolean(theirs) && (theirs as? NSNumber)?.boolValue == value
        case .number(let value):
            guard let number = theirs as? NSNumber, !isBoolean(theirs) else { return false }
            // A Decimal's own digits read as a Double: its doubleValue is not correctly rounded.
            let other = Double(number.description) ?? number.doubleValue
            return value == other || abs(value - other) <= 1e-14 * max(abs(value), abs(other))
        case .string(let value):
            guard let other = theirs as? String else { return false }
            return Array(other.unicodeScalars) == withoutSomeBOMs(Array(value.unicodeScalars), as: Array(other.unicodeScalars))
        case .array(let values):
            guard let others = theirs as? [Any], others.count == values.count else { return false }
            return zip(values, others).allSatisfy { same($0, $1) }
        case .object(let members):
            guard let others = theirs as? [String: Any] else { return false }
            // The last value of a key counts; keys compare as Swift strings, as the dictionary's do.
            let ours = Dictionary(members.map { key, value in
                (others[key] != nil ? key : String(String.UnicodeScalarView(key.unicodeScalars.filter { $0 != "\u{FEFF}" })), value)
            }, uniquingKeysWith: { _, last in last })
            return ours.count == others.count && ours.allSatisfy { key, value in others[key].map { same(value, $0) } ?? false }
        }
    }

    /// `ours` without the U+FEFFs that JSONSerialization dropped (see above), when that makes it `theirs`.
    static func withoutSomeBOMs(_ ours: [Unicode.Scalar], as theirs: [Unicode.Scalar]) -> [Unicode.Scalar] {
        var kept: [Unicode.Scalar] = []
        var other = theirs.makeIterator(), next = other.next()
        for scalar in ours {
            if scalar == next {
                kept.append(scalar)
                next = other.next()
            } else if scalar != "\u{FEFF}" {
                kept.append(scalar)
            }
        }
        return kept
    }

    static func isBoolean(_ value: Any) -> Bool { String(describing: type(of: value)).contains("Boolean") }

    static func hasNonFinite(_ value: JSONValue) -> Bool {
        switch value {
        case .number(let number): !number.isFinite
        case .array(let values): values.contains(where: hasNonFinite)
        case .object(let members): members.contains { hasNonFinite($0.value) }
        default: false
        }
    }

    /// The structural bytes: outside strings (a quote toggles, a backslash escapes the next byte).
    static func outsideStrings(_ input: [UInt8]) -> [UInt8] {
        var result: [UInt8] = [], inString = false, escaped = false
        for byte in input {
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
            } else if byte == UInt8(ascii: "\"") {
                inString = true
            } else {
                result.append(byte)
            }
        }
        return result
    }

    static func hasTrailingComma(_ input: [UInt8]) -> Bool {
        let structure = outsideStrings(input).filter { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
        return zip(structure, structure.dropFirst()).contains { $0 == UInt8(ascii: ",") && ($1 == UInt8(ascii: "]") || $1 == UInt8(ascii: "}")) }
    }

    static func notPlainUTF8(_ input: [UInt8]) -> Bool {
        input.starts(with: [0xEF, 0xBB, 0xBF]) || input.prefix(4).contains(0)
    }

    static func depth(_ input: [UInt8]) -> Int {
        var depth = 0, deepest = 0
        for byte in outsideStrings(input) {
            if byte == UInt8(ascii: "[") || byte == UInt8(ascii: "{") { depth += 1; deepest = max(deepest, depth) }
            if byte == UInt8(ascii: "]") || byte == UInt8(ascii: "}") { depth -= 1 }
        }
        return deepest
    }

    // MARK: Generating

    static func document(_ random: inout SplitMix64) -> [UInt8] {
        switch random.below(6) {
        case 0:
            // A phone's batch: events as JSONEncoder writes them, and odd elements.
            let elements = (0..<random.below(6)).map { _ -> [UInt8] in
                random.chance(4) ? value(&random, depth: 1) : Array(try! JSONCoding.encoder.encode(TrackingCodecTests.randomEvent(&random)))
            }
            return Array("{\"events\":[".utf8) + elements.joined(separator: Array(",".utf8)) + Array("]}".utf8)
        case 1:
            return TrackingCodec.writeMessage(TrackingCodecTests.randomEvent(&random))
        case 2:
            // Deep nesting around the limits.
            let depth = random.pick([10, 62, 63, 64, 65, 66, 100, 511, 512, 513])
            let open = random.chance(2) ? "[" : "{\"k\":"
            let close = open == "[" ? "]" : "}"
            return Array((String(repeating: open, count: depth) + "1" + String(repeating: close, count: depth)).utf8)
        default:
            return whitespace(&random) + value(&random, depth: 0) + whitespace(&random)
        }
    }

    static func value(_ random: inout SplitMix64, depth: Int) -> [UInt8] {
        switch random.below(depth > 4 ? 5 : 7) {
        case 0: return Array(random.pick(["null", "true", "false"]).utf8)
        case 1, 2: return number(&random)
        case 3, 4: return string(&random)
        case 5:
            let elements = (0..<random.below(5)).map { _ in whitespace(&random) + value(&random, depth: depth + 1) + whitespace(&random) }
            return Array("[".utf8) + elements.joined(separator: Array(",".utf8)) + Array("]".utf8)
        default:
            let keys = ["a", "id", "events", "deviceId", "type", "data", "schemaVersion", "é", "e\u{301}", ""]
            let members = (0..<random.below(5)).map { _ -> [UInt8] in
                // Duplicate keys come from the small key set.
                let key = random.chance(3) ? string(&random) : Array("\"\(random.pick(keys))\"".utf8)
                return whitespace(&random) + key + whitespace(&random) + Array(":".utf8) + whitespace(&random) + value(&random, depth: depth + 1)
            }
            return Array("{".utf8) + members.joined(separator: Array(",".utf8)) + Array("}".utf8)
        }
    }

    static func number(_ random: inout SplitMix64) -> [UInt8] {
        let digits = { (random: inout SplitMix64, count: Int) in String((0..<count).map { _ in Character(String(random.below(10))) }) }
        var text = random.chance(3) ? "-" : ""
        text += random.chance(4) ? "0" : String(1 + random.below(9)) + digits(&random, random.pick([0, 1, 3, 14, 15, 16, 25]))
        if random.chance(2) { text += "." + digits(&random, 1 + random.pick([0, 1, 2, 14, 20])) }
        if random.chance(3) { text += random.pick(["e", "E"]) + random.pick(["", "+", "-"]) + String(random.pick([0, 1, 22, 300, 308, 309, 400, 999])) }
        return Array(text.utf8)
    }

    static func string(_ random: inout SplitMix64) -> [UInt8] {
        let pieces: [String] = ["a", "Z", " ", "é", "€", "😀", "\u{7F}", "\u{2028}", "\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t",
                                "\\u0000", "\\u001f", "\\u00e9", "\\uD83D\\uDE00", "\\ud83d\\ude00", "\\uFFFF", "\\uFEFF", "abcdefgh", "12345678"]
        return Array(("\"" + (0..<random.below(12)).map { _ in random.pick(pieces) }.joined() + "\"").utf8)
    }

    static func whitespace(_ random: inout SplitMix64) -> [UInt8] {
        (0..<random.pick([0, 0, 1, 3])).map { _ in random.pick([0x20, 0x09, 0x0A, 0x0D]) }
    }

    static func mutate(_ input: inout [UInt8], _ random: inout SplitMix64) {
        let hostile: [[UInt8]] = [[0x00], [0xFF], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xE2, 0x82], [0x22], [0x5C], [0x2C], [0x5B], [0x5D], [0x7B], [0x7D], [0x3A],
                                  Array("\\x".utf8), Array("\\u12".utf8), Array("\\ud800".utf8), Array("\\udc00".utf8), Array("\\ud800\\u0041".utf8),
                                  Array("1e999".utf8), Array("-".utf8), Array(".".utf8), Array("01".utf8), Array("tru".utf8), Array("nul".utf8),
                                  [0x0B], [0x0C], [0xC2, 0xA0], [0xEF, 0xBB, 0xBF], [0x01], [0x09], [0x0A], Array(",]".utf8), Array(",}".utf8)]
        let position = input.isEmpty ? 0 : random.below(input.count + 1)
        switch random.below(6) {
        case 0 where !input.isEmpty: input[min(position, input.count - 1)] = UInt8(truncatingIfNeeded: random.next())
        case 1 where !input.isEmpty: input.remove(at: min(position, input.count - 1))
        case 2: input.removeSubrange(position...)
        case 3 where random.chance(4): input.insert(contentsOf: [0xEF, 0xBB, 0xBF], at: 0)
        default: input.insert(contentsOf: random.pick(hostile), at: position)
        }
    }
}
