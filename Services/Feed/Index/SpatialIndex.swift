import Foundation
import Shared

/// POIs bucketed by a fixed latitude/longitude grid, so "what is near here" visits the few cells that
/// can hold an answer instead of every POI. Cells are searched best-first by a lower bound of their
/// distance from the query point, which gives nearest-first results and stops as soon as no unvisited
/// cell can beat the `limit`-th result. A value type: the projection mutates its copy, readers keep theirs.
struct SpatialIndex: Sendable {
    /// Cell size in degrees: about 550 m of latitude, a few dozen POIs per cell in a dense city.
    static let cellDegrees = 0.005
    static let rowCount = Int32(180 / cellDegrees)
    static let columnCount = Int32(360 / cellDegrees)

    struct CellKey: Hashable, Sendable {
        var row: Int32
        var column: Int32
    }

    struct Entry: Sendable {
        var slot: Int32
        var latitude: Double
        var longitude: Double
        /// cos(latitude), the per-point factor of the haversine formula, computed once.
        var cosLatitude: Double
    }

    struct Hit: Sendable, Equatable {
        var slot: Int32
        var distanceMeters: Double
        var coordinate: Coordinate
    }

    private var cells: [CellKey: [Entry]] = [:]
    private var cellOfSlot: [Int32: CellKey] = [:]

    var count: Int { cellOfSlot.count }

    static func cell(of coordinate: Coordinate) -> CellKey {
        let row = Int32(((coordinate.latitude + 90) / cellDegrees).rounded(.down))
        let column = Int32(((coordinate.longitude + 180) / cellDegrees).rounded(.down))
        return CellKey(row: min(max(row, 0), rowCount - 1), column: ((column % columnCount) + columnCount) % columnCount)
    }

    mutating func insert(slot: Int32, at coordinate: Coordinate) {
        remove(slot: slot)
        guard coordinate.isValid else { return }
        let key = Self.cell(of: coordinate)
        let entry = Entry(slot: slot, latitude: coordinate.latitude, longitude: coordinate.longitude,
                          cosLatitude: cos(coordinate.latitude * .pi / 180))
        cells[key, default: []].append(entry)
        cellOfSlot[slot] = key
    }

    mutating func remove(slot: Int32) {
        guard let key = cellOfSlot.removeValue(forKey: slot) else { return }
        guard var entries = cells.removeValue(forKey: key) else { return }
        entries.removeAll { $0.slot == slot }
        if !entries.isEmpty { cells[key] = entries }
    }

    /// The POIs within `radiusMeters` of `center` that `include` accepts, nearest first (ties by slot),
    /// at most `limit`.
    func nearest(to center: Coordinate, radiusMeters: Double, limit: Int, include: (Int32) -> Bool = { _ in true }) -> [Hit] {
        guard limit > 0, center.isValid, radiusMeters >= 0 else { return [] }
        let query = QueryPoint(center)
        var candidates = candidateCells(around: center, radiusMeters: radiusMeters).compactMap { key -> (bound: Double, key: CellKey)? in
            let bound = query.lowerBoundMeters(toCell: key)
            return bound <= radiusMeters ? (bound, key) : nil
        }
        candidates.sort { $0.bound < $1.bound }

        var best = BoundedHits(capacity: limit)
        for candidate in candidates {
            if best.isFull, let worst = best.worst, candidate.bound > worst.distanceMeters { break }
            guard let entries = cells[candidate.key] else { continue }
            for entry in entries {
                let distance = query.distanceMeters(to: entry)
                guard distance <= radiusMeters, best.accepts(distance: distance, slot: entry.slot), include(entry.slot) else { continue }
                best.insert(Hit(slot: entry.slot, distanceMeters: distance,
                                coordinate: Coordinate(latitude: entry.latitude, longitude: entry.longitude)))
            }
        }
        return best.hits
    }

    /// The cells of the radius's bounding box when that box is small, else every non-empty cell (a box
    /// that wraps a pole or spans a continent would be mostly empty cells).
    private func candidateCells(around center: Coordinate, radiusMeters: Double) -> [CellKey] {
        let angularRadius = radiusMeters / Geo.earthRadiusMeters
        let latitudeSpan = angularRadius * 180 / .pi
        let minLatitude = center.latitude - latitudeSpan, maxLatitude = center.latitude + latitudeSpan
        let ratio = sin(min(angularRadius, .pi / 2)) / cos(center.latitude * .pi / 180)
        guard minLatitude > -90, maxLatitude < 90, angularRadius < .pi / 2, ratio < 1 else { return Array(cells.keys) }
        let longitudeSpan = asin(ratio) * 180 / .pi
        let low = Self.cell(of: Coordinate(latitude: minLatitude, longitude: center.longitude))
        let high = Self.cell(of: Coordinate(latitude: maxLatitude, longitude: center.longitude))
        let firstColumn = Int32(((center.longitude - longitudeSpan + 180) / Self.cellDegrees).rounded(.down))
        let lastColumn = Int32(((center.longitude + longitudeSpan + 180) / Self.cellDegrees).rounded(.down))
        let rows = Int(high.row - low.row) + 1
        let columns = min(Int(lastColumn - firstColumn) + 1, Int(Self.columnCount))
        guard rows * columns <= max(64, 4 * cells.count) else { return Array(cells.keys) }
        var keys: [CellKey] = []
        keys.reserveCapacity(rows * columns)
        for row in low.row...high.row {
            for offset in 0..<Int32(columns) {
                let column = ((firstColumn + offset) % Self.columnCount + Self.columnCount) % Self.columnCount
                let key = CellKey(row: row, column: column)
                if cells[key] != nil { keys.append(key) }
            }
        }
        return keys
    }
}

/// The query point with its trigonometry done once.
private struct QueryPoint {
    let latitude: Double
    let longitude: Double
    let cosLatitude: Double

    init(_ coordinate: Coordinate) {
        latitude = coordinate.latitude
        longitude = coordinate.longitude
        cosLatitude = cos(coordinate.latitude * .pi / 180)
    }

    /// Haversine in the same operation order as `Geo.distanceMeters`, so results match it exactly.
    func distanceMeters(to entry: SpatialIndex.Entry) -> Double {
        let phi1 = latitude * .pi / 180, phi2 = entry.latitude * .pi / 180
        let dPhi = phi2 - phi1
        let dLambda = (entry.longitude - longitude) * .pi / 180
        let h = sin(dPhi / 2) * sin(dPhi / 2) + cosLatitude * entry.cosLatitude * sin(dLambda / 2) * sin(dLambda / 2)
        return 2 * Geo.earthRadiusMeters * asin(min(1, sqrt(h)))
    }

    /// A distance no point of the cell is closer than: the larger of the north-south gap (a great
    /// circle is never shorter than its latitude change) and the cross-track distance to the nearest
    /// meridian edge of the cell. Shaved slightly so rounding never prunes a true hit.
    func lowerBoundMeters(toCell key: SpatialIndex.CellKey) -> Double {
        let size = SpatialIndex.cellDegrees
        let south = Double(key.row) * size - 90, north = south + size
        let west = Double(key.column) * size - 180, east = west + size
        let latitudeGap = latitude < south ? south - latitude : (latitude > north ? latitude - north : 0)
        let latitudeBound = latitudeGap * .pi / 180 * Geo.earthRadiusMeters

        var longitudeBound = 0.0
        let toWest = Self.eastwardDegrees(from: longitude, to: west), toEast = Self.eastwardDegrees(from: east, to: longitude)
        if toWest < 360 - size && toEast < 360 - size && (toWest > 0 && toEast > 0) {
            // Outside the cell's longitudes: the nearer edge is `gap` degrees away, east or west.
            let gap = min(toWest, toEast)
            if gap + size <= 90 { longitudeBound = asin(min(1, cosLatitude * sin(gap * .pi / 180))) * Geo.earthRadiusMeters }
        }
        return max(latitudeBound, longitudeBound) * (1 - 1e-9) - 1e-6
    }

    /// Degrees travelled going east from `a` to `b`, in [0, 360).
    private static func eastwardDegrees(from a: Double, to b: Double) -> Double {
        let difference = (b - a).truncatingRemainder(dividingBy: 360)
        return difference < 0 ? difference + 360 : difference
    }
}

/// The best `capacity` hits seen so far, kept sorted (capacity is at most a few hundred).
private struct BoundedHits {
    let capacity: Int
    private(set) var hits: [SpatialIndex.Hit] = []

    init(capacity: Int) {
        self.capacity = capacity
        hits.reserveCapacity(capacity + 1)
    }

    var isFull: Bool { hits.count >= capacity }
    var worst: SpatialIndex.Hit? { hits.last }

    static func precedes(_ a: SpatialIndex.Hit, _ b: SpatialIndex.Hit) -> Bool {
        (a.distanceMeters, a.slot) < (b.distanceMeters, b.slot)
    }

    func accepts(distance: Double, slot: Int32) -> Bool {
        guard isFull, let worst else { return true }
        return (distance, slot) < (worst.distanceMeters, worst.slot)
    }

    mutating func insert(_ hit: SpatialIndex.Hit) {
        var low = 0, high = hits.count
        while low < high {
            let middle = (low + high) / 2
            if Self.precedes(hits[middle], hit) { low = middle + 1 } else { high = middle }
        }
        hits.insert(hit, at: low)
        if hits.count > capacity { hits.removeLast() }
    }
}
