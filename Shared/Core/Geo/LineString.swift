import Foundation

/// A GeoJSON LineString (RFC 7946, 3.1.4): a tour's route as walked. Coded as GeoJSON, positions
/// `[longitude, latitude]`; a position's third number (an altitude) is not kept.
public struct LineString: Sendable, Equatable, Codable {
    public var coordinates: [Coordinate]

    public static let maxPositions = 5_000

    public init(_ coordinates: [Coordinate]) {
        self.coordinates = coordinates
    }

    /// Along the line, great-circle.
    public var lengthMeters: Double { Geo.pathLengthMeters(coordinates) }

    private enum CodingKeys: String, CodingKey { case type, coordinates }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let type = try container.decode(String.self, forKey: .type)
        guard type == "LineString" else {
            throw DecodingError.dataCorruptedError(forKey: .type, in: container, debugDescription: "a route is a LineString, not a \(type)")
        }
        let positions = try container.decode([[Double]].self, forKey: .coordinates)
        coordinates = try positions.map { position in
            guard position.count >= 2 else {
                throw DecodingError.dataCorruptedError(forKey: .coordinates, in: container, debugDescription: "a position is [longitude, latitude]")
            }
            return Coordinate(latitude: position[1], longitude: position[0])
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(coordinates.map { [$0.longitude, $0.latitude] }, forKey: .coordinates)
        try container.encode("LineString", forKey: .type)
    }
}
