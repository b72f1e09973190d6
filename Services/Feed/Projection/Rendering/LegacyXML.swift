import Foundation
import Shared

/// The XML feeds the original iTour iPhone app read (Appendix E of the iTour report): `AvTours.aspx`
/// (available tours) and `POIs.aspx` (a tour's points of interest), element for element, with the
/// original numeric ids where content has them and UUIDs otherwise.
enum LegacyXML {
    static let header = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"

    /// The id old clients see for a tour: its legacy number if it has one, else its UUID.
    static func tourId(_ tour: TourState) -> String {
        tour.content.legacyId.map(String.init) ?? tour.id.uuidString
    }

    static func poiId(_ poi: PoiState) -> String {
        poi.content.legacyId.map(String.init) ?? poi.id.uuidString
    }

    /// `GET /v1/legacy/tours.xml`; `tours` are (id as old clients know it, tour) in list order.
    static func tours(_ tours: [(legacyId: String, tour: TourState)]) -> [UInt8] {
        var xml = header
        xml += "<channel>\n  <name>Available Tours</name>\n  <description>Available tours, feed to the iTour app</description>\n"
        for (id, tour) in tours {
            xml += "  <item>\n    <id>\(escape(id))</id>\n    <title>\(escape(tour.content.name))</title>\n"
            xml += "    <summary>\(escape(tour.content.summary))</summary>\n  </item>\n"
        }
        xml += "</channel>\n"
        return Array(xml.utf8)
    }

    /// `GET /v1/legacy/tours/{id}/pois.xml`: the tour's stops in walking order.
    static func pois(of tour: TourState, stops: [PoiState]) -> [UInt8] {
        var xml = header
        xml += "<channel>\n  <name>Points of Interest for \(escape(tour.content.name))</name>\n"
        xml += "  <description>\(escape(tour.content.summary))</description>\n"
        for poi in stops {
            xml += "  <item>\n    <poiID>\(escape(poiId(poi)))</poiID>\n    <title>\(escape(poi.content.name))</title>\n"
            xml += "    <summary>\(escape(poi.content.summary))</summary>\n"
            xml += "    <latitude>\(poi.content.latitude)</latitude>\n    <longitude>\(poi.content.longitude)</longitude>\n  </item>\n"
        }
        xml += "</channel>\n"
        return Array(xml.utf8)
    }

    static func escape(_ text: String) -> String { MarkupEscaping.xml(text) }
}
