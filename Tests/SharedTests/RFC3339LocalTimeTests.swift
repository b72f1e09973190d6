import Foundation
import Testing
@testable import Shared

@Suite("RFC 3339 local times")
struct RFC3339LocalTimeTests {
    /// What Foundation writes for the same instant and offset: the writer's reference.
    static func foundationLocal(_ date: Date, offsetSeconds: Int) -> String {
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        let c = utc.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date.addingTimeInterval(Double(offsetSeconds)))
        let minutes = abs(offsetSeconds) / 60
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d%@%02d:%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0, c.hour ?? 0, c.minute ?? 0,
                      c.second ?? 0, offsetSeconds < 0 ? "-" : "+", minutes / 60, minutes % 60)
    }

    @Test("a local time is written as Foundation writes it, for random instants (1970–2100) and every offset in use")
    func localTimesAsFoundation() {
        var generator = SystemRandomNumberGenerator()
        let offsets = [-12, -9.5, -5, -3.5, 0, 1, 5.75, 9, 13, 14].map { Int($0 * 3_600) }
        for _ in 0..<5_000 {
            let date = Date(timeIntervalSince1970: Double(Int64.random(in: 0...4_102_444_800, using: &generator)))
            let offset = offsets.randomElement(using: &generator)!
            #expect(RFC3339.formatLocal(date, offsetSeconds: offset) == Self.foundationLocal(date, offsetSeconds: offset))
        }
        // Whole seconds: a fraction is dropped, as Foundation's components drop it.
        #expect(RFC3339.formatLocal(Date(timeIntervalSince1970: 1_800_000_000.999), offsetSeconds: -18_000) == "2027-01-15T03:00:00-05:00")
        #expect(RFC3339.formatLocal(Date(timeIntervalSince1970: -0.5), offsetSeconds: 0) == "1969-12-31T23:59:59+00:00")
    }
}
