import Foundation
import Shared
import Testing

@Suite("Message envelope")
struct EnvelopeTests {
    @Test("round-trips with its fields and RFC 3339 dates")
    func roundTrip() throws {
        let command = CatalogCommand(action: .createTour, actor: "a@example.edu", tour: TourContent(name: "Campus"))
        let envelope = Envelope(type: command.action.rawValue, source: "admin", data: command)
        let bytes = try envelope.encoded()
        let json = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect(Set(json.keys) == ["id", "type", "schemaVersion", "occurredAt", "source", "data"])
        #expect((json["occurredAt"] as? String)?.hasSuffix("Z") == true)
        let decoded = try EnvelopeDecoder.decode(CatalogCommand.self, from: bytes)
        #expect(decoded.id == envelope.id)
        #expect(decoded.data == command)
        #expect(abs(decoded.occurredAt.timeIntervalSince(envelope.occurredAt)) < 0.001)
    }

    @Test("a newer schema version is refused, not guessed at")
    func schemaVersionChecked() throws {
        let envelope = Envelope(type: "x", schemaVersion: 2, source: "test", data: ["a": 1])
        #expect(throws: EnvelopeError.unsupportedSchemaVersion(2)) {
            _ = try EnvelopeDecoder.decode([String: Int].self, from: try envelope.encoded())
        }
    }

    @Test("garbage and missing fields are undecodable with a reason naming the field")
    func undecodable() throws {
        #expect(throws: EnvelopeError.undecodable("malformed JSON")) {
            _ = try EnvelopeDecoder.header(Array("{not json".utf8))
        }
        let missing = #"{"id":"6F9619FF-8B86-D011-B42D-00C04FC964FF","type":"x","schemaVersion":1,"occurredAt":"2026-01-01T00:00:00Z","source":"s"}"#
        #expect(throws: EnvelopeError.undecodable("missing field data")) {
            _ = try EnvelopeDecoder.decode(Int.self, from: Array(missing.utf8))
        }
    }
}

@Suite("RFC 3339")
struct RFC3339Tests {
    @Test("format and parse are exact inverses at millisecond precision, before and after 1970")
    func roundTrip() throws {
        for seconds in [0.0, 1_795_305_461.955, 1_795_305_461.0005, -1.5, 951_782_400.999] {
            let text = RFC3339.format(Date(timeIntervalSince1970: seconds))
            let parsed = try #require(RFC3339.parse(text))
            #expect(RFC3339.format(parsed) == text)
            #expect(RFC3339.parse(RFC3339.format(parsed)) == parsed)
        }
        #expect(RFC3339.format(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(RFC3339.format(Date(timeIntervalSince1970: -1.5)) == "1969-12-31T23:59:58.500Z")
        #expect(RFC3339.parse("2026-11-21T10:00:00+01:00") == RFC3339.parse("2026-11-21T09:00:00Z"))
        #expect(RFC3339.parse("yesterday") == nil)
    }
}
