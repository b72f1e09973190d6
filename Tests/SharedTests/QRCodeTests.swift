import Foundation
import Shared
import Testing

/// QR codes read back by zbar (Debian's zbar-tools, installed by scripts/install.sh): a decoder that is not ours.
@Suite("QR codes")
struct QRCodeTests {
    /// The SVG's dark runs (`M x,y h n v1 h-n z`) drawn into a PGM, `scale` pixels a module, and zbarimg's reading of it.
    static func decode(svg: String, scale: Int = 4) throws -> String {
        let viewBox = try #require(svg.firstRange(of: #/viewBox="0 0 (\d+) \d+"/#).map { Int(svg[$0].split(separator: " ")[2])! })
        let path = try #require(svg.firstMatch(of: #/ d="([^"]*)"/#)?.output.1)
        let side = viewBox * scale
        var pixels = [UInt8](repeating: 255, count: side * side)
        for run in path.matches(of: #/M(\d+),(\d+)h(\d+)v1h-\d+z/#) {
            let (x, y, length) = (Int(run.output.1)!, Int(run.output.2)!, Int(run.output.3)!)
            for row in (y * scale)..<((y + 1) * scale) {
                for column in (x * scale)..<((x + length) * scale) { pixels[row * side + column] = 0 }
            }
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("qr-\(UUID().uuidString).pgm")
        defer { try? FileManager.default.removeItem(at: file) }
        try (Data("P5\n\(side) \(side)\n255\n".utf8) + Data(pixels)).write(to: file)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/zbarimg")
        process.arguments = ["--quiet", "--raw", "-Sdisable", "-Sqrcode.enable", file.path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "zbarimg found no code")
        return text.hasSuffix("\n") ? String(text.dropLast()) : text
    }

    @Test("links of each length up to the most a code holds read back as written",
          arguments: [1, 14, 17, 32, 60, 84, 106, 122, 152, 180, 213])
    func roundTrip(length: Int) throws {
        let link = "https://feed.example.edu/v1/pois/" + String(repeating: "a", count: max(0, length - 33)) + "?src=qr"
        let text = length < 40 ? String(link.suffix(length)) : String(link.prefix(length))
        let code = try QRCode(text)
        #expect(code.size == 17 + 4 * code.version)
        #expect(try Self.decode(svg: code.svg(title: text)) == text)
    }

    @Test("the smallest version that holds the text; each of the eight masks reads back; too long is refused")
    func versionsAndMasks() throws {
        #expect(try QRCode("HELLO").version == 1)
        #expect(try QRCode(String(repeating: "x", count: 14)).version == 1)
        #expect(try QRCode(String(repeating: "x", count: 15)).version == 2)
        #expect(try QRCode(String(repeating: "x", count: 213)).version == 10)
        #expect(throws: QRCode.TooLong.self) { try QRCode(String(repeating: "x", count: 214)) }
        var masks: Set<Int> = []
        for index in 0..<200 where masks.count < 8 {
            let text = "https://feed.example.edu/v1/tours/\(UUID().uuidString)?src=qr&n=\(index)"
            let code = try QRCode(text)
            if masks.insert(code.mask).inserted { #expect(try Self.decode(svg: code.svg(title: text)) == text, "mask \(code.mask)") }
        }
        #expect(masks.count >= 6, "the penalty picks among the masks: \(masks.sorted())")
        let unicode = "Café «Müller» — 北京 🚶"
        #expect(try Self.decode(svg: QRCode(unicode).svg(title: unicode)) == unicode)
    }

    @Test("the SVG's title is the text, escaped")
    func title() throws {
        let svg = try QRCode("a<b&c\"d").svg(title: "a<b&c\"d")
        #expect(svg.contains("<title>a&lt;b&amp;c&quot;d</title>"))
        #expect(!svg.contains("a<b"))
    }
}
