import Foundation
import Shared
import Testing
@testable import Admin

/// The pieces that keep pages safe and right: escaping, form parsing, the map.
@Suite("Admin templates")
struct TemplateTests {
    @Test("text interpolated into HTML is escaped; HTML fragments are not escaped twice")
    func escaping() {
        let name = #"<script>alert(1)</script> & "quotes" 'too'"#
        let cell: HTML = "<td title=\"\(name)\">\(name)</td>"
        #expect(cell.rendered == #"<td title="&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quotes&quot; &#39;too&#39;">&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quotes&quot; &#39;too&#39;</td>"#)
        let row: HTML = "<tr>\(cell)</tr>"
        #expect(row.rendered == "<tr>\(cell.rendered)</tr>")
        #expect(Forms.text("Name", name: "name", value: name).rendered.contains(#"value="&lt;script&gt;"#))
        #expect(safeURL("javascript:alert(1)") == "#")
        #expect(safeURL("https://example.edu/a?b=c") == "https://example.edu/a?b=c")
    }

    @Test("url-encoded and multipart forms parse, repeated names and file uploads included")
    func forms() throws {
        let form = FormData.urlEncoded("name=Chancellor%27s+Walk&stops=a&stops=b&empty=&csrf_token=x%2By")
        #expect(form["name"] == "Chancellor's Walk")
        #expect(form.all("stops") == ["a", "b"])
        #expect(form["empty"] == "" && form.has("empty"))
        #expect(form["csrf_token"] == "x+y")
        let body = Array("""
            --XyZ\r
            Content-Disposition: form-data; name="csrf_token"\r
            \r
            token\r
            --XyZ\r
            Content-Disposition: form-data; name="file"; filename="shops.csv"\r
            Content-Type: text/csv\r
            \r
            name,latitude\r
            A,1\r
            \r
            --XyZ--\r

            """.utf8)
        let parsed = try #require(FormData.multipart(body, boundary: "XyZ"))
        #expect(parsed["csrf_token"] == "token")
        #expect(parsed.files["file"]?.fileName == "shops.csv")
        #expect(String(decoding: parsed.files["file"]?.data ?? [], as: UTF8.self) == "name,latitude\r\nA,1\r\n")
        #expect(FormData.multipart(Array("no boundary here".utf8), boundary: "XyZ") == nil)
    }

    @Test("the map plots every stop in walking order, north up, and a far-off stop stands out")
    func map() {
        func poi(_ name: String, _ latitude: Double, _ longitude: Double) -> PoiState {
            PoiState(id: UUID(), version: 1, content: PoiContent(name: name, latitude: latitude, longitude: longitude), updatedAt: Date())
        }
        let svg = TourMap.svg(stops: [poi("South", 34.22, -77.87), poi("North", 34.23, -77.87), poi("<b>East</b>", 34.225, -77.86)], tour: TourContent(name: "T")).rendered
        #expect(svg.contains(#"<polyline class="route" points="#))
        #expect(svg.components(separatedBy: "<circle").count - 1 == 3)
        #expect(svg.contains("&lt;b&gt;East&lt;/b&gt;"))
        // North is up: the northern stop has the smaller y.
        let ys = svg.components(separatedBy: #"<circle class="stop" cx=""#).dropFirst().map { part -> Double in
            let y = part.components(separatedBy: #"cy=""#)[1].prefix { $0 != "\"" }
            return Double(y) ?? .nan
        }
        #expect(ys[1] < ys[0])
        #expect(TourMap.svg(stops: [], tour: TourContent(name: "T")).rendered.contains("No stops yet"))
        #expect(TourMap.svg(stops: [poi("Only", 34.2, -77.8)], tour: TourContent(name: "T")).rendered.contains("<circle"))

        // A route is drawn as walked, in the tour's colour, and the caption gives the distance along it.
        let route = LineString([Coordinate(latitude: 34.22, longitude: -77.87), Coordinate(latitude: 34.22, longitude: -77.88),
                                Coordinate(latitude: 34.23, longitude: -77.87)])
        let routed = TourMap.svg(stops: [poi("South", 34.22, -77.87), poi("North", 34.23, -77.87)],
                                 tour: TourContent(name: "T", color: "#c0392b", route: route)).rendered
        #expect(routed.contains(#"<polyline class="route-line" points=""#) && routed.contains(##"stroke="#c0392b""##))
        #expect(!routed.contains(#"<polyline class="route" "#), "no straight lines beside the route")
        #expect(routed.contains("walking distance along the route \(TourMap.distance(route.lengthMeters))"))
    }
}

@Suite("Admin record kinds")
struct AdminRecordKindsTests {
    @Test("the admin's projection holds every kind of catalog record")
    func everyKindHeld() {
        #expect(AdminHeldRecords.missing.isEmpty)
    }
}
