import Foundation
import Shared
import Testing
@testable import Feed

/// A small deterministic generator, so a failing case can be replayed.
typealias SeededRandom = SplitMix64

@Suite("Spatial index")
struct SpatialIndexTests {
    /// What the index must answer, by brute force over every point.
    func bruteForce(_ points: [Coordinate], center: Coordinate, radius: Double, limit: Int, include: (Int32) -> Bool = { _ in true }) -> [Int32] {
        points.enumerated()
            .map { (slot: Int32($0.offset), distance: Geo.distanceMeters(center, $0.element)) }
            .filter { $0.distance <= radius && include($0.slot) }
            .sorted { ($0.distance, $0.slot) < ($1.distance, $1.slot) }
            .prefix(limit).map(\.slot)
    }

    @Test("matches a brute-force scan: city queries, huge radii, poles and the antimeridian", arguments: [
        Coordinate(latitude: 53.7997, longitude: -1.5492), Coordinate(latitude: 89.99, longitude: 10),
        Coordinate(latitude: -16.5, longitude: 179.999), Coordinate(latitude: 0, longitude: 0),
    ])
    func matchesBruteForce(center: Coordinate) {
        var random = SeededRandom(seed: 42)
        var index = SpatialIndex()
        var points: [Coordinate] = []
        for slot in 0..<3_000 {
            // Most points near the center (wrapped onto the globe), some anywhere.
            let point: Coordinate
            if slot % 10 == 0 {
                point = Coordinate(latitude: Double.random(in: -90...90, using: &random), longitude: Double.random(in: -180...180, using: &random))
            } else {
                let latitude = min(90, max(-90, center.latitude + Double.random(in: -0.2...0.2, using: &random)))
                var longitude = center.longitude + Double.random(in: -0.3...0.3, using: &random)
                if longitude > 180 { longitude -= 360 }
                if longitude < -180 { longitude += 360 }
                point = Coordinate(latitude: latitude, longitude: longitude)
            }
            points.append(point)
            index.insert(slot: Int32(slot), at: point)
        }
        for (radius, limit) in [(50.0, 10), (500, 20), (5_000, 200), (100_000, 50), (20_000_000, 5), (0, 3)] {
            let expected = bruteForce(points, center: center, radius: radius, limit: limit)
            let found = index.nearest(to: center, radiusMeters: radius, limit: limit)
            #expect(found.map(\.slot) == expected, "radius \(radius) limit \(limit)")
            for hit in found {
                #expect(hit.distanceMeters == Geo.distanceMeters(center, points[Int(hit.slot)]))
            }
        }
        let even = bruteForce(points, center: center, radius: 20_000, limit: 30) { $0 % 2 == 0 }
        #expect(index.nearest(to: center, radiusMeters: 20_000, limit: 30) { $0 % 2 == 0 }.map(\.slot) == even)
    }

    @Test("moving and removing points")
    func updates() {
        var index = SpatialIndex()
        index.insert(slot: 1, at: Coordinate(latitude: 10, longitude: 10))
        index.insert(slot: 1, at: Coordinate(latitude: 20, longitude: 20))
        index.insert(slot: 2, at: Coordinate(latitude: 20.001, longitude: 20))
        #expect(index.count == 2)
        #expect(index.nearest(to: Coordinate(latitude: 10, longitude: 10), radiusMeters: 1_000, limit: 5).isEmpty)
        #expect(index.nearest(to: Coordinate(latitude: 20, longitude: 20), radiusMeters: 1_000, limit: 5).map(\.slot) == [1, 2])
        index.remove(slot: 1)
        #expect(index.nearest(to: Coordinate(latitude: 20, longitude: 20), radiusMeters: 1_000, limit: 5).map(\.slot) == [2])
    }
}

@Suite("Text index and folding")
struct TextIndexTests {
    @Test("folding removes case and accents and spells special letters out")
    func folding() {
        func folded(_ text: String) -> String { String(decoding: TextFolding.fold(text), as: UTF8.self) }
        #expect(folded("Café CRÈME") == "cafe creme")
        #expect(folded("Straße") == "strasse")
        #expect(folded("Øresund Łódź") == "oresund lodz")
        #expect(folded("  Hoggard\t\nHall  ") == "hoggard hall")
        #expect(folded("ＦＵＬＬ") == "full")
        #expect(folded("") == "")
    }

    /// `fold` folds ASCII and Latin letters by table and anything else through Foundation: the table must agree with
    /// Foundation on every such text, whatever surrounds each letter.
    @Test("folding by table agrees with Foundation's folding on seeded random texts")
    func foldingTableMatchesFoundation() {
        var random = SeededRandom(seed: 16)
        let latin = (UInt32(0x80)..<0x250).compactMap(Unicode.Scalar.init)
        let ascii = (UInt32(0)..<0x80).compactMap(Unicode.Scalar.init)
        // Beyond the table: combining marks, dashes, no-break and wide spaces, fullwidth, Greek, CJK, an emoji.
        let other: [Unicode.Scalar] = ["\u{301}", "\u{308}", "\u{2014}", "\u{A0}", "\u{3000}", "\u{FF21}", "\u{3A3}", "\u{3C2}", "\u{6771}", "\u{1F600}"]
        func text(_ alphabet: [Unicode.Scalar], length: Int) -> String {
            var scalars = String.UnicodeScalarView()
            for _ in 0..<length { scalars.append(alphabet.randomElement(using: &random)!) }
            return String(scalars)
        }
        for scalar in latin {
            for context in ["\(scalar)", "a\(scalar)B", " \(scalar) \(scalar)\t", "\(scalar)\u{301}", "X\(scalar)\(scalar)y "] {
                #expect(TextFolding.fold(context) == TextFolding.foldedByFoundation(context), "\(context.debugDescription)")
            }
        }
        for round in 0..<5_000 {
            let alphabet = round % 4 == 0 ? latin + ascii + other : latin + ascii
            let sample = text(alphabet, length: Int.random(in: 0...24, using: &random))
            #expect(TextFolding.fold(sample) == TextFolding.foldedByFoundation(sample), "\(sample.debugDescription)")
        }
    }

    /// 20 000 documents: a bulk ranking large enough to be posted on several cores, in parts joined after.
    @Test("finds substrings of names, summaries and buildings, in name order, like a brute-force scan", arguments: [1_500, 20_000])
    func matchesBruteForce(count: Int) {
        var random = SeededRandom(seed: 7)
        let words = ["Hall", "Café", "Musée", "Library", "Kenan", "Randall", "Crème", "Student", "Union", "Quad", "Tower", "Straße", "Ærø"]
        var index = TextIndex()
        var documents: [(slot: Int32, name: String, fields: [String])] = []
        for slot in 0..<count {
            func phrase() -> String { (0..<Int.random(in: 1...3, using: &random)).map { _ in words.randomElement(using: &random) ?? "" }.joined(separator: " ") }
            let name = phrase() + " \(slot)"
            let fields = [phrase(), phrase()]
            documents.append((Int32(slot), name, fields))
            index.insert(slot: Int32(slot), id: UUID(), name: name, fields: fields)
        }
        // Replace some and remove some, as live updates do.
        for slot in stride(from: 0, to: count, by: 7) {
            let name = "Renamed Tower \(slot)"
            documents[slot].name = name
            index.insert(slot: Int32(slot), id: UUID(), name: name, fields: documents[slot].fields)
        }
        for slot in stride(from: 3, to: count, by: 11) { index.remove(slot: Int32(slot)) }
        index.seal()
        let live = documents.filter { Int($0.slot) % 11 != 3 || $0.slot < 3 }
        for query in ["hall", "CAFE", "musee", "e", "ll", "tower 7", "strasse", "aero", "crème 1", "zzz", "union quad", "renamed"] {
            expectBruteForceResults(of: query, in: index, documents: live)
        }
    }

    /// Inserts, replacements and removals in batches of every size between seals (so both the in-place and the bulk
    /// ranking run, a bulk one also midway through in-place posting), names too short for a trigram, documents
    /// inserted and removed before any seal: after each seal, every query finds what a brute-force scan finds.
    @Test("random batches of changes between seals find what a brute-force scan finds")
    func randomBatchesMatchBruteForce() {
        var random = SeededRandom(seed: 23)
        let words = ["Hall", "Café", "Hä", "A", "Quad", "Tower", "Ærø", "Straße", "Kenan"]
        var index = TextIndex()
        var documents: [Int32: (name: String, fields: [String])] = [:]
        func phrase() -> String { (0..<Int.random(in: 1...2, using: &random)).map { _ in words.randomElement(using: &random)! }.joined(separator: " ") }
        for round in 0..<120 {
            // Mostly a few changes, now and then enough for a bulk ranking.
            let changes = round % 10 == 0 ? Int.random(in: 50...400, using: &random) : Int.random(in: 0...6, using: &random)
            for _ in 0..<changes {
                let slot = Int32.random(in: 0..<600, using: &random)
                switch Int.random(in: 0..<5, using: &random) {
                case 0:
                    documents[slot] = nil
                    index.remove(slot: slot)
                case 1:
                    // Inserted and gone again before the seal.
                    index.insert(slot: slot, id: UUID(), name: phrase(), fields: [phrase()])
                    documents[slot] = nil
                    index.remove(slot: slot)
                default:
                    // Short names ("A", "Hä") have no trigram of their own; crowded names run ranks out.
                    let name = Bool.random(using: &random) ? phrase() : "Hall" + String(repeating: "a", count: round % 30)
                    documents[slot] = (name, [phrase()])
                    index.insert(slot: slot, id: UUID(), name: name, fields: documents[slot]!.fields)
                }
            }
            index.seal()
            let live = documents.map { (slot: $0.key, name: $0.value.name, fields: $0.value.fields) }
            #expect(index.count == live.count)
            for query in ["hall", "a", "ha", "cafe", "aero", "strasse quad", "tower a", "halla", "zzz"] {
                expectBruteForceResults(of: query, in: index, documents: live)
            }
        }
    }

    @Test("live updates sealed one at a time keep result order, also where new names crowd one spot and ranks run out")
    func liveUpdatesKeepOrder() {
        var random = SeededRandom(seed: 11)
        let words = ["Hall", "Café", "Library", "Kenan", "Quad", "Tower", "Ærø"]
        var index = TextIndex()
        var documents: [Int32: (name: String, fields: [String])] = [:]
        func phrase() -> String { (0..<Int.random(in: 1...3, using: &random)).map { _ in words.randomElement(using: &random) ?? "" }.joined(separator: " ") }
        for slot in Int32(0)..<2_000 {
            documents[slot] = (phrase() + " \(slot)", [phrase()])
            index.insert(slot: slot, id: UUID(), name: documents[slot]!.name, fields: documents[slot]!.fields)
        }
        index.seal()
        // Each new name sorts just after the previous one and before every other: it always takes the
        // middle of the same shrinking gap, which runs out after about 21 of the 2 000 documents' ranks.
        for step in 1...40 {
            let slot = Int32(2_000 + step)
            documents[slot] = ("Hall" + String(repeating: "a", count: step), ["crowded \(step)"])
            index.insert(slot: slot, id: UUID(), name: documents[slot]!.name, fields: documents[slot]!.fields)
            index.seal()
        }
        // Renames, removals and reused slots, a few per publication.
        for round in 0..<30 {
            for _ in 0..<3 {
                let slot = Int32.random(in: 0..<2_040, using: &random)
                if Bool.random(using: &random) {
                    documents[slot] = ("Renamed " + phrase() + " \(round)", [phrase()])
                    index.insert(slot: slot, id: UUID(), name: documents[slot]!.name, fields: documents[slot]!.fields)
                } else {
                    documents[slot] = nil
                    index.remove(slot: slot)
                }
            }
            index.seal()
        }
        #expect(index.count == documents.count)
        let live = documents.map { (slot: $0.key, name: $0.value.name, fields: $0.value.fields) }
        for query in ["hall", "halla", "crowded", "renamed", "e", "aero", "quad 1", "zzz"] {
            expectBruteForceResults(of: query, in: index, documents: live)
        }
    }

    /// The index's results for `query`, at several limits, are the brute-force scan's in folded-name order.
    private func expectBruteForceResults(of query: String, in index: TextIndex, documents: [(slot: Int32, name: String, fields: [String])],
                                         sourceLocation: SourceLocation = #_sourceLocation) {
        let needle = TextFolding.fold(query)
        let expected = documents.filter { document in
            ([document.name] + document.fields).contains { TextIndex.contains(TextFolding.fold($0), needle) }
        }.map { TextFolding.fold($0.name) }.sorted { $0.lexicographicallyPrecedes($1) }
        let names = Dictionary(uniqueKeysWithValues: documents.map { ($0.slot, TextFolding.fold($0.name)) })
        for limit in [1, 10, 100, 5_000] {
            let found = index.search(query, limit: limit)
            #expect(found.count == min(limit, expected.count), "\(query) limit \(limit)", sourceLocation: sourceLocation)
            // Names can tie; compare the names in order rather than slots.
            #expect(found.map { names[$0] ?? [] } == Array(expected.prefix(limit)), "\(query) limit \(limit)", sourceLocation: sourceLocation)
        }
    }

    @Test("substring test at the edges")
    func contains() {
        #expect(TextIndex.contains(Array("abc".utf8), Array("abc".utf8)))
        #expect(TextIndex.contains(Array("xxabc".utf8), Array("bc".utf8)))
        #expect(!TextIndex.contains(Array("ab".utf8), Array("abc".utf8)))
        #expect(!TextIndex.contains(Array("hall\u{0}way".utf8), Array("lw".utf8)))
        #expect(TextIndex.contains([], []))
    }
}
