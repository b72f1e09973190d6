import Foundation
import HTTPTypes
import Hummingbird
import Shared

/// A request's query string as form decoding reads it (`+` is a space, then percent-decoding), first
/// value of each name, with typed reads that answer bad values with a `400` naming the parameter.
struct QueryParameters {
    private var values: [String: String] = [:]

    init(_ query: String?) throws {
        guard let query, !query.isEmpty else { return }
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = Self.decode(parts[0]) else {
                throw Problem.badRequest("the query string is not valid percent-encoded UTF-8")
            }
            guard let value = parts.count > 1 ? Self.decode(parts[1]) : "" else {
                throw Problem.badRequest("query parameter \(name) is not valid percent-encoded UTF-8")
            }
            if values[name] == nil { values[name] = value }
        }
    }

    private static func decode(_ text: Substring) -> String? {
        String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }

    subscript(_ name: String) -> String? { values[name] }

    /// A number in `range`, or `defaultValue` when the parameter is absent.
    func double(_ name: String, in range: ClosedRange<Double>, default defaultValue: Double) throws -> Double {
        guard let text = values[name] else { return defaultValue }
        guard let value = Double(text), value.isFinite, range.contains(value) else {
            throw Problem.badRequest("\(name) must be a number from \(Self.format(range.lowerBound)) to \(Self.format(range.upperBound)), got \"\(Self.shown(text))\"")
        }
        return value
    }

    func has(_ name: String) -> Bool { values[name] != nil }

    /// A text to match, folded as the text indexes fold theirs (`TextFolding`), or nil when the parameter is absent;
    /// a `400` saying what it is (`meaning`) when it folds to nothing or is over `FeedRoutes.maxQueryCharacters`.
    func folded(_ name: String, meaning: String) throws -> [UInt8]? {
        guard let text = values[name] else { return nil }
        let folded = TextFolding.fold(text)
        guard !folded.isEmpty, FeedRoutes.isWithinQueryLimit(text) else {
            throw Problem.badRequest("\(meaning), 1 to \(FeedRoutes.maxQueryCharacters) characters")
        }
        return folded
    }

    /// A whole number in `range`, or `defaultValue` when the parameter is absent.
    func int(_ name: String, in range: ClosedRange<Int>, default defaultValue: Int) throws -> Int {
        guard let text = values[name] else { return defaultValue }
        guard let value = Int(text), range.contains(value) else {
            throw Problem.badRequest("\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), got \"\(Self.shown(text))\"")
        }
        return value
    }

    /// `LAT,LON` in decimal degrees, exactly as `OpenAPIDocument.nearPattern` describes it.
    func coordinate(_ name: String) throws -> Coordinate {
        guard let text = values[name] else {
            throw Problem.badRequest("\(name) is required: \(name)=LAT,LON in degrees, e.g. \(name)=34.2261,-77.8767")
        }
        let parts = text.split(separator: ",")
        guard (try? Self.coordinatePattern.wholeMatch(in: text)) != nil, parts.count == 2,
              let latitude = Double(parts[0]), let longitude = Double(parts[1]) else {
            throw Problem.badRequest("\(name) must be LAT,LON in decimal degrees (latitude -90 to 90, longitude -180 to 180), got \"\(Self.shown(text))\"")
        }
        return Coordinate(latitude: latitude, longitude: longitude)
    }

    /// `true` or `false` (with `digits`, also `1` or `0`); false when absent.
    func bool(_ name: String, digits: Bool = false) throws -> Bool {
        guard let text = values[name] else { return false }
        switch text {
        case "true": return true
        case "false": return false
        case "1" where digits: return true
        case "0" where digits: return false
        default: throw Problem.badRequest("\(name) must be \(digits ? "1, 0, true or false" : "true or false"), got \"\(Self.shown(text))\"")
        }
    }

    /// Two corners `LAT,LON,LAT,LON` in decimal degrees (either order), exactly as `OpenAPIDocument.bboxPattern`
    /// describes it; nil when absent.
    func boundingBox(_ name: String) throws -> BoundingBox? {
        guard let text = values[name] else { return nil }
        let numbers = text.split(separator: ",").compactMap { Double($0) }
        guard (try? Self.boxPattern.wholeMatch(in: text)) != nil, numbers.count == 4 else {
            throw Problem.badRequest("\(name) must be two corners LAT,LON,LAT,LON in decimal degrees (latitude -90 to 90, longitude -180 to 180), "
                                     + "e.g. \(name)=34.22,-77.88,34.23,-77.87; got \"\(Self.shown(text))\"")
        }
        return BoundingBox(minLatitude: min(numbers[0], numbers[2]), minLongitude: min(numbers[1], numbers[3]),
                           maxLatitude: max(numbers[0], numbers[2]), maxLongitude: max(numbers[1], numbers[3]))
    }

    nonisolated(unsafe) private static let boxPattern = try! Regex(OpenAPIDocument.bboxPattern)

    nonisolated(unsafe) private static let coordinatePattern = try! Regex(OpenAPIDocument.nearPattern)

    private static func format(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }

    /// A value quoted back in an error, shortened so a huge parameter does not make a huge answer.
    static func shown(_ text: String) -> String {
        text.count > 64 ? String(text.prefix(64)) + "…" : text
    }
}

/// A route's path parameter, read once for every route that names a record by its id.
enum PathParameter {
    /// The UUID the parameter spells, or a `400` saying what was expected: "a tour id is a UUID such as …".
    static func uuid(_ text: Substring, naming what: String) throws -> UUID {
        var text = text
        guard let id = text.withUTF8({ UUID(bytes: UnsafeRawBufferPointer($0)) }) else {
            throw Problem.badRequest("\(what) id is a UUID such as 3F2504E0-4F89-41D3-9A0C-0305E82C3301, got \"\(QueryParameters.shown(String(text)))\"")
        }
        return id
    }
}

/// A latitude/longitude box, edges included (no antimeridian crossing).
struct BoundingBox: Sendable, Equatable {
    var minLatitude: Double
    var minLongitude: Double
    var maxLatitude: Double
    var maxLongitude: Double

    func contains(_ point: Coordinate) -> Bool {
        (minLatitude...maxLatitude).contains(point.latitude) && (minLongitude...maxLongitude).contains(point.longitude)
    }
}
