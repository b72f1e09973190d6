import Foundation
import Testing
@testable import Feed

/// `ZipArchive`: stored entries that another implementation (Python's zipfile) reads back whole.
@Suite("Stored zip archives")
struct ZipArchiveTests {
    @Test("CRC-32 of the check string, of nothing, and of a long run agrees with the bitwise definition")
    func crc() {
        #expect(ZipArchive.crc32(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(ZipArchive.crc32([]) == 0)
        var random = SystemRandomNumberGenerator()
        let bytes = (0..<1_037).map { _ in UInt8.random(in: 0...255, using: &random) }
        var bitwise: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            bitwise ^= UInt32(byte)
            for _ in 0..<8 { bitwise = bitwise & 1 == 1 ? 0xEDB8_8320 ^ (bitwise >> 1) : bitwise >> 1 }
        }
        #expect(ZipArchive.crc32(bytes) == ~bitwise)
        // In pieces, continuing.
        #expect(ZipArchive.crc32(Array(bytes[13...]), continuing: ZipArchive.crc32(Array(bytes[..<13]))) == ~bitwise)
    }

    @Test("an empty file, a binary one and a UTF-8 name, read back by Python's zipfile: names, bytes, stored, UTF-8 flag")
    func readByPython() throws {
        var random = SystemRandomNumberGenerator()
        let binary = (0..<70_001).map { _ in UInt8.random(in: 0...255, using: &random) } + Array(0...255)
        let files: [(name: String, bytes: [UInt8])] = [
            ("bundle.json", Array(#"{"tour": {"name": "Café"}}"#.utf8)),
            ("empty", []),
            ("media/0f1e2d3c", binary),
            ("média/Ünïcødé 名前 🚶.txt", Array("crème brûlée\n".utf8)),
        ]
        let archive = try ZipArchive.make(files)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("zip-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("bundle.zip").path
        try Data(archive).write(to: URL(fileURLWithPath: path))

        let script = """
        import json, sys, zipfile
        z = zipfile.ZipFile(sys.argv[1])
        assert z.testzip() is None
        print(json.dumps([{"name": i.filename, "hex": z.read(i).hex(), "stored": i.compress_type == zipfile.ZIP_STORED,
                           "utf8": bool(i.flag_bits & 0x800), "crc": i.CRC} for i in z.infolist()]))
        """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, path]
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let read = output.fileHandleForReading.readDataToEndOfFile()
        let failure = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "python3: \(failure)")
        let members = try #require(try JSONSerialization.jsonObject(with: read) as? [[String: Any]])
        #expect(members.map { $0["name"] as? String } == files.map(\.name))
        for (member, file) in zip(members, files) {
            #expect(member["hex"] as? String == file.bytes.map { String(format: "%02x", $0) }.joined(), "\(file.name)")
            #expect(member["stored"] as? Bool == true && member["utf8"] as? Bool == true, "\(file.name)")
            #expect(member["crc"] as? Int == Int(ZipArchive.crc32(file.bytes)), "\(file.name)")
        }
        // The same files make the same bytes.
        #expect(try ZipArchive.make(files) == archive)
    }

    @Test("refused: more than 65 534 entries, a name given twice, an empty name")
    func limits() throws {
        #expect(throws: ZipArchive.Failure.tooManyEntries(65_535)) {
            try ZipArchive.make(Array(repeating: (name: "x", bytes: []), count: 65_535))
        }
        #expect(throws: ZipArchive.Failure.duplicateName("a")) { try ZipArchive.make([("a", [1]), ("a", [2])]) }
        #expect(throws: ZipArchive.Failure.emptyName) { try ZipArchive.make([("", [1])]) }
        #expect(try ZipArchive.make([]).count == 22, "an empty archive is its end record")
    }
}
