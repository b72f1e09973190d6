import Foundation
import Shared
import Testing
@testable import Catalog

@Suite("Command validation")
struct CommandValidationTests {
    @Test("isBlank agrees with Foundation's trimming of .whitespacesAndNewlines and .whitespaces, scalar by scalar and in mixes")
    func blankMatchesFoundation() {
        let scalars = (0...0x3100).compactMap(Unicode.Scalar.init) + [0xFEFF, 0x1_F3DB].compactMap(Unicode.Scalar.init)
        for scalar in scalars {
            let text = String(scalar)
            #expect(CommandValidation.isBlank(text) == text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "U+\(String(scalar.value, radix: 16))")
            #expect(CommandValidation.isBlank(text, newlinesAreBlank: false) == text.trimmingCharacters(in: .whitespaces).isEmpty,
                    "U+\(String(scalar.value, radix: 16))")
        }
        for text in ["", " \t ", " \n ", "\u{2028}", "\u{3000}a", " x ", "\u{A0}\u{2009}"] {
            #expect(CommandValidation.isBlank(text) == text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "\(text.debugDescription)")
            #expect(CommandValidation.isBlank(text, newlinesAreBlank: false) == text.trimmingCharacters(in: .whitespaces).isEmpty, "\(text.debugDescription)")
        }
    }

    @Test("a translation meets its field's own rules and names the language and field; unknown fields and malformed tags are refused")
    func translations() {
        func errors(_ translations: Translations) -> [String: String] {
            let content = PoiContent(name: "Library", latitude: 34.2, longitude: -77.8, translations: translations)
            return Dictionary(CommandValidation.validate(content).map { ($0.field, $0.message) }, uniquingKeysWith: { first, _ in first })
        }
        #expect(errors(["es": ["name": "Biblioteca", "summary": "Libros"], "pt-BR": ["description": "Livros"]]).isEmpty)
        // 200 characters of two bytes each: within the name's limit as the site language's own name would be.
        #expect(errors(["es": ["name": String(repeating: "ñ", count: 200)]]).isEmpty)
        #expect(errors(["es": ["name": String(repeating: "ñ", count: 201)]])["translations.es.name"]?.hasPrefix("es: ") == true)
        #expect(errors(["es": ["name": "Biblio\u{0}teca"]])["translations.es.name"]?.contains("control characters") == true)
        #expect(errors(["es": ["narration": "not a hash"]])["translations.es.narration"] != nil)
        // Pictures' alt texts: a line per picture, no more lines than pictures.
        #expect(errors(["es": ["pictureAlts": "Uno\nDos"]])["translations.es.pictureAlts"]?.contains("more alt texts (2) than pictures (0)") == true)
        #expect(errors(["es": ["latitude": "1"]])["translations.es"]?.contains("latitude has no translation") == true)
        #expect(errors(["<b>": ["name": "x"]])["translations"]?.contains("language must be a tag") == true)
        #expect(errors(["e": ["name": "x"]])["translations"] != nil, "a one-letter primary subtag is not a language")
        // An empty translation is no translation: a blank required name is not required in Spanish.
        #expect(errors(["es": ["name": ""]]).isEmpty)
        #expect(PoiContent(name: "x", latitude: 0, longitude: 0, translations: ["ES": ["name": "a"], "es": ["summary": "b"]]).translations
                == ["es": ["name": "a", "summary": "b"]], "tags are one language whatever their case")
    }

    @Test("opening hours must read (the message names the mistake), a price level is 0 to 4, access notes at most 2 000 characters")
    func hoursPriceAndAccess() {
        func errors(hours: String? = nil, price: Int? = nil, access: String? = nil) -> [String: String] {
            let content = PoiContent(name: "Library", latitude: 34.2, longitude: -77.8, openingHours: hours, priceLevel: price, accessibility: access)
            return Dictionary(CommandValidation.validate(content).map { ($0.field, $0.message) }, uniquingKeysWith: { first, _ in first })
        }
        #expect(errors(hours: "Mo-Fr 08:00-17:00; Sa 10:00-14:00; Su off; PH off", price: 2, access: "Lift to every floor").isEmpty)
        #expect(errors(hours: "24/7", price: 0).isEmpty)
        #expect(errors(hours: "  ").isEmpty, "blank hours are no hours")
        #expect(errors(hours: "Mo-Fx 08:00-17:00")["openingHours"]?.contains("\"Fx\" is not a day") == true)
        #expect(errors(hours: "9 to 5")["openingHours"]?.hasPrefix("Opening hours") == true)
        // Asked again, the remembered verdicts: the same answers, right or wrong.
        for _ in 0..<2 {
            #expect(errors(hours: "Mo-Fr 08:00-17:00; Sa 10:00-14:00; Su off; PH off").isEmpty)
            #expect(errors(hours: "Mo-Fx 08:00-17:00")["openingHours"]?.contains("\"Fx\" is not a day") == true)
        }
        #expect(errors(price: 5)["priceLevel"] == "Price level must be 0 (free) to 4 (very expensive)")
        #expect(errors(price: -1)["priceLevel"] != nil)
        #expect(errors(access: String(repeating: "a", count: 2_001))["accessibility"] == "Accessibility must be at most 2000 characters")
    }

    @Test("a tour's look and route: a cover needs a web address and its alt text, minutes 1 to 1440, #rrggbb, a route of 2 to 5000 points in range")
    func tourLookAndRoute() {
        func errors(_ change: (inout TourContent) -> Void) -> [String: String] {
            var tour = TourContent(name: "Walk")
            change(&tour)
            return Dictionary(CommandValidation.validate(tour).map { ($0.field, $0.message) }, uniquingKeysWith: { first, _ in first })
        }
        let hall = Coordinate(latitude: 34.2261, longitude: -77.8767), gate = Coordinate(latitude: 34.2270, longitude: -77.8750)
        #expect(errors { _ in }.isEmpty)
        #expect(errors {
            $0.coverImage = "https://uncw.edu/hall.jpg"; $0.coverImageAlt = "The hall"; $0.estimatedMinutes = 45; $0.color = "#0b5cad"
            $0.route = LineString([hall, gate])
        }.isEmpty)
        #expect(Set(errors { $0.coverImage = "https://uncw.edu/hall.jpg" }.keys) == ["coverImageAlt"])
        #expect(Set(errors { $0.coverImage = "javascript:alert(1)"; $0.coverImageAlt = "The hall" }.keys) == ["coverImage"])
        #expect(Set(errors { $0.coverImage = "https://uncw.edu/hall.jpg"; $0.coverImageAlt = String(repeating: "é", count: 301) }.keys) == ["coverImageAlt"])
        for minutes in [0, -5, 1_441] { #expect(Set(errors { $0.estimatedMinutes = minutes }.keys) == ["estimatedMinutes"], "\(minutes)") }
        for minutes in [1, 1_440] { #expect(errors { $0.estimatedMinutes = minutes }.isEmpty, "\(minutes)") }
        for color in ["#0B5CAD", "red", "#0b5ca", "#0b5cadd", "0b5cad#", "#0b5cag"] { #expect(Set(errors { $0.color = color }.keys) == ["color"], "\(color)") }
        #expect(Set(errors { $0.route = LineString([hall]) }.keys) == ["route"])
        #expect(errors { $0.route = LineString([hall, Coordinate(latitude: 91, longitude: 0)]) }["route"]?.contains("point 2") == true)
        #expect(errors { $0.route = LineString([hall, Coordinate(latitude: .nan, longitude: 0)]) }["route"] != nil)
        #expect(errors { $0.route = LineString(Array(repeating: hall, count: LineString.maxPositions)) }.isEmpty)
        #expect(Set(errors { $0.route = LineString(Array(repeating: hall, count: LineString.maxPositions + 1)) }.keys) == ["route"])
    }

    @Test("URLs are percent-encoded as Foundation encodes them, and one with nothing to encode is kept as it is")
    func urlsEncoded() {
        let urls = ["https://example.edu/a.jpg", "https://example.edu/a b.jpg", "https://example.edu/café?x=<1>", "https://ex.edu/%20ok#frag",
                    "http://example.edu/\"q\"", "https://example.edu/日本", "https://example.edu/~user/(1)"]
        var poi = PoiContent(name: "P", latitude: 0, longitude: 0, pictures: urls, links: urls.map { MediaLink(name: "L", type: .page, url: $0) },
                             website: urls[2])
        CommandValidation.encodeURLs(&poi)
        let expected = urls.map { $0.addingPercentEncoding(withAllowedCharacters: CommandValidation.uriCharacters)! }
        #expect(poi.pictures == expected)
        #expect(poi.links.map(\.url) == expected)
        #expect(poi.website == expected[2])
        #expect(expected[0] == urls[0] && expected[1].contains("%20") && expected[2].contains("%C3%A9"))
    }

    @Test("limits count characters and bytes: 200 accented, CJK or single emoji characters are a name, 201 are not; a character of many scalars meets the byte limit (4 a character)")
    func limitsCountCharactersAndBytes() {
        func nameError(_ name: String) -> String? {
            CommandValidation.validate(PoiContent(name: name, latitude: 0, longitude: 0)).first { $0.field == "name" }?.message
        }
        for character in ["a", "é", "e\u{301}", "日", "😀"] {
            #expect(nameError(String(repeating: character, count: 200)) == nil, "\(character)")
            #expect(nameError(String(repeating: character, count: 201)) == "Name must be at most 200 characters", "\(character)")
        }
        // 18 bytes each: 44 fit in 800 bytes, 45 do not.
        #expect(nameError(String(repeating: "👩‍👩‍👧", count: 44)) == nil)
        #expect(nameError(String(repeating: "👩‍👩‍👧", count: 45)) == "Name must be at most 200 characters (800 bytes)")
        // One character to a person, 8 001 bytes to Postgres (issue 43).
        #expect(nameError("R" + String(repeating: "\u{301}", count: 4_000)) == "Name must be at most 200 characters (800 bytes)")
        let category = String(repeating: "é", count: 100) + "/" + String(repeating: "日", count: 99)
        #expect(CommandValidation.validate(PoiContent(name: "P", latitude: 0, longitude: 0, category: category)).isEmpty)
        #expect(CommandValidation.validate(PoiContent(name: "P", latitude: 0, longitude: 0, category: category + "x")).first?.field == "category")
    }

    @Test("control characters are found as the scalar rule finds them: C0 but tab and line breaks, and DEL, wherever they are")
    func controlCharactersMatchScalars() {
        func byScalars(_ text: String) -> Bool {
            text.unicodeScalars.contains { $0.value < 0x20 && $0 != "\t" && $0 != "\n" && $0 != "\r" || $0.value == 0x7F }
        }
        var generator = SystemRandomNumberGenerator()
        let pieces = ["a", "é", "日", "👩‍👩‍👧", "\t", "\n", "\r", "\r\n", "\u{0}", "\u{1B}", "\u{7F}", "\u{80}", "\u{85}", "\u{2028}", " "]
        for scalar in (0...0x80).compactMap(Unicode.Scalar.init) {
            #expect(CommandValidation.hasControlCharacters("ab\(scalar)c") == byScalars("ab\(scalar)c"), "U+\(String(scalar.value, radix: 16))")
        }
        for _ in 0..<2_000 {
            let text = (0..<Int.random(in: 0...12, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            #expect(CommandValidation.hasControlCharacters(text) == byScalars(text), "\(text.debugDescription)")
        }
        let name = "Hall\u{7}"
        #expect(CommandValidation.validate(PoiContent(name: name, latitude: 0, longitude: 0)).first?.message == "Name must not contain control characters")
    }
}
