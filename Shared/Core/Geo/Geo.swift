import Foundation

/// A point on the WGS 84 sphere approximation used for distances.
public struct Coordinate: Sendable, Equatable, Codable {
    public var latitude: Double
    public var longitude: Double

    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    public var isValid: Bool {
        latitude.isFinite && longitude.isFinite && (-90...90).contains(latitude) && (-180...180).contains(longitude)
    }
}

public enum Geo {
    /// The per-axis median of `points`: where most of a group is, which one stray point does not move.
    public static func median(_ points: [Coordinate]) -> Coordinate? {
        guard !points.isEmpty else { return nil }
        func middle(_ values: [Double]) -> Double {
            let sorted = values.sorted()
            let half = sorted.count / 2
            return sorted.count % 2 == 1 ? sorted[half] : (sorted[half - 1] + sorted[half]) / 2
        }
        return Coordinate(latitude: middle(points.map(\.latitude)), longitude: middle(points.map(\.longitude)))
    }

    /// Farther than this from the median position of its tour's stops, a stop is a stray (a sign left out
    /// moves it thousands of kilometres): publishing needs a confirmation, the admin flags it.
    public static let strayMeters = 5_000.0

    /// Each point farther than `strayMeters` from the median of all, with its distance (none with fewer than two).
    public static func strays(_ points: [Coordinate]) -> [(index: Int, meters: Double)] {
        guard points.count > 1, let centre = median(points) else { return [] }
        return points.enumerated().compactMap { index, point in
            let meters = distanceMeters(point, centre)
            return meters > strayMeters ? (index, meters) : nil
        }
    }
    /// Mean Earth radius (IUGG), the R of DESIGN.md's distances.
    public static let earthRadiusMeters = 6_371_008.8

    /// Great-circle distance by the haversine formula.
    public static func distanceMeters(_ a: Coordinate, _ b: Coordinate) -> Double {
        let phi1 = a.latitude * .pi / 180, phi2 = b.latitude * .pi / 180
        let dPhi = phi2 - phi1
        let dLambda = (b.longitude - a.longitude) * .pi / 180
        let h = sin(dPhi / 2) * sin(dPhi / 2) + cos(phi1) * cos(phi2) * sin(dLambda / 2) * sin(dLambda / 2)
        return 2 * earthRadiusMeters * asin(min(1, sqrt(h)))
    }

    /// Initial bearing from `a` to `b` in degrees, 0 = north, clockwise, in [0, 360).
    public static func initialBearingDegrees(_ a: Coordinate, _ b: Coordinate) -> Double {
        let phi1 = a.latitude * .pi / 180, phi2 = b.latitude * .pi / 180
        let dLambda = (b.longitude - a.longitude) * .pi / 180
        let y = sin(dLambda) * cos(phi2)
        let x = cos(phi1) * sin(phi2) - sin(phi1) * cos(phi2) * cos(dLambda)
        let degrees = atan2(y, x) * 180 / .pi
        return (degrees + 360).truncatingRemainder(dividingBy: 360)
    }

    /// Length of a walk through the points in order.
    public static func pathLengthMeters(_ points: [Coordinate]) -> Double {
        zip(points, points.dropFirst()).reduce(0) { $0 + distanceMeters($1.0, $1.1) }
    }
}
