import Foundation
import Shared

/// What a page needs to show a Leaflet map (admin.js draws it from the `data-` attributes): the tiles, and
/// whether Leaflet is served at all. Without Leaflet, or without script, the page keeps its plain content.
struct AdminMap: Sendable {
    var tilesURL: String
    var attribution: String
    var hasLeaflet: Bool

    init(settings: MapSettings, hasLeaflet: Bool) {
        tilesURL = settings.tilesURL
        attribution = settings.attribution
        self.hasLeaflet = hasLeaflet
    }

    /// How far `poi` is from the median position of `stops` (the tour's, `poi` among them), when more than
    /// `Geo.strayMeters`. With two stops apart, both are flagged: nothing says which one is wrong.
    static func strayDistance(of poi: PoiState, in stops: [PoiState]) -> Double? {
        guard let index = stops.firstIndex(where: { $0.id == poi.id }) else { return nil }
        return Geo.strays(stops.map(\.coordinate)).first { $0.index == index }?.meters
    }

    /// Leaflet's stylesheet and script (deferred: admin.js draws maps once every deferred script ran).
    var assets: HTML {
        hasLeaflet ? "<link rel=\"stylesheet\" href=\"/assets/leaflet/leaflet.css\"><script src=\"/assets/leaflet/leaflet.js\" defer></script>" : .empty
    }

    /// A map box: `kind` is "tour" (numbered stops and the route) or "poi" (a pin to place); `stops` in walking order;
    /// a tour's `route` is drawn in its `color` (the straight lines between stops without one).
    func box(kind: String, stops: [PoiState], center: Coordinate?, fallback: HTML, label: String, route: LineString? = nil,
             color: String? = nil) -> HTML {
        guard hasLeaflet else { return fallback }
        let points: [[String: Any]] = stops.map { ["name": $0.content.name, "lat": $0.content.latitude, "lon": $0.content.longitude] }
        let json = (try? JSONSerialization.data(withJSONObject: points, options: [.sortedKeys])).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
        let line = (route?.coordinates ?? []).map { [$0.latitude, $0.longitude] }
        let lineJSON = (try? JSONSerialization.data(withJSONObject: line)).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
        let centre = center.map { "\($0.latitude),\($0.longitude)" } ?? ""
        return """
            <div class="map-box" data-map="\(kind)" data-tiles="\(tilesURL)" data-attribution="\(attribution)" data-stops="\(json)" \
            data-route="\(lineJSON)" data-color="\(color ?? "")" data-center="\(centre)" role="region" aria-label="\(label)">\(fallback)</div>\(assets)
            """
    }
}

extension PoiState {
    /// Where editors see it: the draft's coordinates when there is a draft.
    var coordinate: Coordinate { Coordinate(latitude: working.latitude, longitude: working.longitude) }
}
