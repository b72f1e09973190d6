/// A zip file (PKWARE APPNOTE 6.3) of stored entries: no compression (a bundle's media are compressed already),
/// UTF-8 names (general purpose flag bit 11), every entry dated 1980-01-01 00:00 so the same files make the same
/// bytes (and the same ETag). Without ZIP64: an archive of more than 65 534 entries or of 4 GiB or more is refused
/// (65 535 and 0xFFFFFFFF are the values that tell a reader to look for ZIP64 records).
enum ZipArchive {
    enum Failure: Error, Equatable, CustomStringConvertible {
        case tooManyEntries(Int)
        case tooLarge
        case emptyName
        case nameTooLong(String)
        case duplicateName(String)

        var description: String {
            switch self {
            case .tooManyEntries(let count): "a zip without ZIP64 holds at most \(ZipArchive.maxEntries) files, not \(count)"
            case .tooLarge: "a zip without ZIP64 is smaller than 4 GiB"
            case .emptyName: "a file in a zip needs a name"
            case .nameTooLong(let name): "the name \(name.prefix(64))… is over 65 535 bytes"
            case .duplicateName(let name): "two files are named \(name)"
            }
        }
    }

    static let maxEntries = 65_534
    /// Sizes and offsets are 32 bits, 0xFFFFFFFF meaning ZIP64.
    static let maxOffset = 0xFFFF_FFFE

    private static let localHeaderSignature: UInt32 = 0x0403_4B50
    private static let centralHeaderSignature: UInt32 = 0x0201_4B50
    private static let endSignature: UInt32 = 0x0605_4B50
    /// 2.0: what stored entries in folders need.
    private static let version: UInt16 = 20
    private static let utf8Names: UInt16 = 1 << 11
    /// MS-DOS date 1980-01-01 (year 0 from 1980, month 1, day 1) at 00:00:00.
    private static let dosDate: UInt16 = 1 << 5 | 1
    private static let dosTime: UInt16 = 0

    /// The archive holding `files` in order.
    static func make(_ files: [(name: String, bytes: [UInt8])]) throws(Failure) -> [UInt8] {
        guard files.count <= maxEntries else { throw .tooManyEntries(files.count) }
        var names = Set<String>()
        var total = 22
        for file in files {
            guard !file.name.isEmpty else { throw .emptyName }
            guard file.name.utf8.count <= 0xFFFF else { throw .nameTooLong(file.name) }
            guard names.insert(file.name).inserted else { throw .duplicateName(file.name) }
            total += 30 + 46 + 2 * file.name.utf8.count + file.bytes.count
            guard total <= maxOffset else { throw .tooLarge }
        }
        var output: [UInt8] = []
        output.reserveCapacity(total)
        var central: [UInt8] = []
        central.reserveCapacity(files.reduce(0) { $0 + 46 + $1.name.utf8.count })
        for file in files {
            let offset = UInt32(output.count), crc = crc32(file.bytes), size = UInt32(file.bytes.count)
            let name = Array(file.name.utf8)
            output.append(localHeaderSignature)
            output.append(version)
            writeCommon(crc: crc, size: size, nameLength: name.count, to: &output)
            output.append(contentsOf: name)
            output.append(contentsOf: file.bytes)

            central.append(centralHeaderSignature)
            central.append(version) // made by: MS-DOS, 2.0
            central.append(version) // needed to extract
            writeCommon(crc: crc, size: size, nameLength: name.count, to: &central)
            central.append(UInt16(0)) // comment length
            central.append(UInt16(0)) // disk number start
            central.append(UInt16(0)) // internal attributes
            central.append(UInt32(0)) // external attributes
            central.append(offset)
            central.append(contentsOf: name)
        }
        let centralOffset = UInt32(output.count)
        output.append(contentsOf: central)
        output.append(endSignature)
        output.append(UInt16(0)) // this disk
        output.append(UInt16(0)) // disk with the central directory
        output.append(UInt16(files.count)) // entries on this disk
        output.append(UInt16(files.count)) // entries
        output.append(UInt32(central.count))
        output.append(centralOffset)
        output.append(UInt16(0)) // comment length
        return output
    }

    /// The fields local and central headers share, from the flags to the extra field's length.
    private static func writeCommon(crc: UInt32, size: UInt32, nameLength: Int, to output: inout [UInt8]) {
        output.append(utf8Names)
        output.append(UInt16(0)) // stored
        output.append(dosTime)
        output.append(dosDate)
        output.append(crc)
        output.append(size) // compressed
        output.append(size) // uncompressed
        output.append(UInt16(nameLength))
        output.append(UInt16(0)) // extra field length
    }

    // MARK: CRC-32

    /// CRC-32 (ISO-HDLC, as zip, gzip and PNG use it: reflected polynomial 0xEDB88320), eight bytes a step
    /// ("slicing by 8"), `crc` being that of the bytes before.
    static func crc32(_ bytes: [UInt8], continuing crc: UInt32 = 0) -> UInt32 {
        var value = ~crc
        bytes.withUnsafeBufferPointer { buffer in
            let table = crcTables
            var index = 0
            let count = buffer.count
            while index + 8 <= count {
                let low = value ^ (UInt32(buffer[index]) | UInt32(buffer[index + 1]) << 8 | UInt32(buffer[index + 2]) << 16
                    | UInt32(buffer[index + 3]) << 24)
                let high = UInt32(buffer[index + 4]) | UInt32(buffer[index + 5]) << 8 | UInt32(buffer[index + 6]) << 16 | UInt32(buffer[index + 7]) << 24
                value = table[7 * 256 + Int(low & 0xFF)] ^ table[6 * 256 + Int(low >> 8 & 0xFF)]
                    ^ table[5 * 256 + Int(low >> 16 & 0xFF)] ^ table[4 * 256 + Int(low >> 24)]
                    ^ table[3 * 256 + Int(high & 0xFF)] ^ table[2 * 256 + Int(high >> 8 & 0xFF)]
                    ^ table[256 + Int(high >> 16 & 0xFF)] ^ table[Int(high >> 24)]
                index += 8
            }
            while index < count {
                value = table[Int((value ^ UInt32(buffer[index])) & 0xFF)] ^ (value >> 8)
                index += 1
            }
        }
        return ~value
    }

    /// Eight tables of 256: the first is the byte-at-a-time table, table k the CRC of a byte followed by k zero bytes.
    private static let crcTables: [UInt32] = {
        var tables = [UInt32](repeating: 0, count: 8 * 256)
        for byte in 0..<256 {
            var value = UInt32(byte)
            for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
            tables[byte] = value
        }
        for table in 1..<8 {
            for byte in 0..<256 {
                let previous = tables[(table - 1) * 256 + byte]
                tables[table * 256 + byte] = tables[Int(previous & 0xFF)] ^ (previous >> 8)
            }
        }
        return tables
    }()
}

private extension [UInt8] {
    /// Little-endian, as every zip field is.
    mutating func append(_ value: UInt16) {
        append(UInt8(truncatingIfNeeded: value))
        append(UInt8(truncatingIfNeeded: value >> 8))
    }

    mutating func append(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }
}
