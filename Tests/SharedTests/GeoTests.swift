import Shared
import Testing

@Suite("Geo")
struct GeoTests {
    @Test("haversine distance and initial bearing match known values")
    func distanceAndBearing() {
        // One degree of latitude on the mean sphere: R * pi / 180.
        let a = Coordinate(latitude: 0, longitude: 0)
        #expect(abs(Geo.distanceMeters(a, Coordinate(latitude: 1, longitude: 0)) - 111_195.08) < 0.5)
        #expect(abs(Geo.initialBearingDegrees(a, Coordinate(latitude: 1, longitude: 0)) - 0) < 1e-9)
        #expect(abs(Geo.initialBearingDegrees(a, Coordinate(latitude: 0, longitude: 1)) - 90) < 1e-9)
        #expect(abs(Geo.initialBearingDegrees(a, Coordinate(latitude: -1, longitude: 0)) - 180) < 1e-9)
        #expect(abs(Geo.initialBearingDegrees(a, Coordinate(latitude: 0, longitude: -1)) - 270) < 1e-9)
        // Historic Quad to Front of Campus (UNCW demo content): about 190 m.
        let quad = Coordinate(latitude: 34.226101, longitude: -77.876705)
        let front = Coordinate(latitude: 34.227696, longitude: -77.875873)
        #expect((185...200).contains(Geo.distanceMeters(quad, front)))
    }
}
