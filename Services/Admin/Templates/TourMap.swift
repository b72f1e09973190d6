import Foundation
import Shared

/// A tour's stops plotted as inline SVG: each stop a numbered dot at its coordinates, a dashed line in
/// walking order, a scale bar. No map tiles, so it works offline; a stop typed with a wrong coordinate
/// stands far from the others at a glance.
enum TourMap {
    /// The tour's map: Leaflet with tiles, numbered pins, the route and labels that do not overlap (admin.js),
    /// over this SVG, which stays when Leaflet or script is missing.
    /// `tour` is the content editors see (the draft's): its route, drawn in its colour.
    static func map(stops: [PoiState], tour: TourContent, map: AdminMap) -> HTML {
        guard !stops.isEmpty || tour.route != nil else { return svg(stops: stops, tour: tour) }
        return map.box(kind: "tour", stops: stops, center: nil, fallback: svg(stops: stops, tour: tour), label: "Map of the tour's stops",
                       route: tour.route, color: tour.color)
            + """
            <p class="draw-route" hidden><input type="checkbox" id="draw-route"> <label for="draw-route">Draw the route: each click on the \
            map adds a point to Route above; Save keeps it.</label> <button type="button" id="undo-route-point">Remove the last point</button></p>
            """
    }

    static let width = 640.0
    static let height = 400.0
    static let padding = 40.0

    static func svg(stops: [PoiState], tour: TourContent) -> HTML {
        guard !stops.isEmpty || tour.route != nil else { return "<p class=\"muted\">No stops yet: the map appears when the tour has stops.</p>" }
        let stopPoints = stops.map { Coordinate(latitude: $0.content.latitude, longitude: $0.content.longitude) }
        let routePoints = tour.route?.coordinates ?? []
        let latitudes = (stopPoints + routePoints).map(\.latitude)
        let longitudes = (stopPoints + routePoints).map(\.longitude)
        let (minLat, maxLat) = (latitudes.min()!, latitudes.max()!)
        let (minLon, maxLon) = (longitudes.min()!, longitudes.max()!)
        // Equirectangular around the middle latitude: near enough at campus scale, and angles look right.
        let xFactor = cos((minLat + maxLat) / 2 * .pi / 180)
        let spanX = max((maxLon - minLon) * xFactor, 1e-9)
        let spanY = max(maxLat - minLat, 1e-9)
        let scale = min((width - 2 * padding) / spanX, (height - 2 * padding) / spanY)
        let offsetX = (width - spanX * scale) / 2
        let offsetY = (height - spanY * scale) / 2
        func point(_ at: Coordinate) -> (x: Double, y: Double) {
            let x = maxLon == minLon ? width / 2 : offsetX + (at.longitude - minLon) * xFactor * scale
            let y = maxLat == minLat ? height / 2 : height - (offsetY + (at.latitude - minLat) * scale)
            return (x, y)
        }
        let points = stopPoints.map(point)
        func polyline(_ points: [(x: Double, y: Double)]) -> String { points.map { String(format: "%.1f,%.1f", $0.x, $0.y) }.joined(separator: " ") }
        // The route as walked in the tour's colour (an attribute: the admin's CSP refuses inline styles), else the
        // straight lines between stops.
        let line: HTML = routePoints.isEmpty
            ? "<polyline class=\"route\" points=\"\(polyline(points))\"></polyline>"
            : "<polyline class=\"route-line\" points=\"\(polyline(routePoints.map(point)))\" stroke=\"\(tour.color ?? "#0b5cad")\"></polyline>"
        var marks: [HTML] = []
        for (index, poi) in stops.enumerated() {
            let (x, y) = points[index]
            let title = "\(index + 1). \(poi.content.name) (\(format(poi.content.latitude)), \(format(poi.content.longitude)))"
            let labelX = x + 12 > width - 120 ? x - 12 : x + 12
            let anchor = x + 12 > width - 120 ? "end" : "start"
            marks.append("""
                <g><title>\(title)</title>
                <circle class="stop" cx="\(String(format: "%.1f", x))" cy="\(String(format: "%.1f", y))" r="9"></circle>
                <text class="number" x="\(String(format: "%.1f", x))" y="\(String(format: "%.1f", y))">\(index + 1)</text>
                <text class="label" x="\(String(format: "%.1f", labelX))" y="\(String(format: "%.1f", y - 10))" text-anchor="\(anchor)">\(poi.content.name)</text></g>
                """)
        }
        let length = tour.walkingDistanceMeters(stops: stopPoints)
        return """
            <figure>
            <svg class="map" viewBox="0 0 \(Int(width)) \(Int(height))" width="\(Int(width))" height="\(Int(height))" role="img" aria-labelledby="map-title">
            <title id="map-title">Map of the tour's \(stops.count) stops in walking order</title>
            \(line)
            \(marks)
            \(scaleBar(metersPerUnit: 1 / scale * 111_320))
            </svg>
            <figcaption class="muted">Stops in walking order; walking distance along \(routePoints.isEmpty ? "them" : "the route") \(distance(length)).</figcaption>
            </figure>
            """
    }

    /// A bar of a round length near 120 units, bottom left.
    static func scaleBar(metersPerUnit: Double) -> HTML {
        let target = metersPerUnit * 120
        guard target.isFinite, target > 0 else { return .empty }
        let magnitude = pow(10, floor(log10(target)))
        let round = [1.0, 2, 5, 10].map { $0 * magnitude }.last { $0 <= target } ?? magnitude
        let units = round / metersPerUnit
        let y = height - 14
        return """
            <line class="scale" x1="14" y1="\(String(format: "%.1f", y))" x2="\(String(format: "%.1f", 14 + units))" y2="\(String(format: "%.1f", y))"></line>
            <text class="label" x="14" y="\(String(format: "%.1f", y - 6))">\(distance(round))</text>
            """
    }

    static func distance(_ meters: Double) -> String {
        meters >= 1_000 ? String(format: "%.1f km", meters / 1_000) : String(format: "%.0f m", meters)
    }

    static func format(_ degrees: Double) -> String { String(format: "%.6f", degrees) }
}
