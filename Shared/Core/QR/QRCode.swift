import Foundation

/// A QR code (ISO/IEC 18004) of a short text such as a link: byte mode, error correction level M (about 15 % of
/// the code may be lost), the smallest version of 1–10 that holds it (up to 213 bytes), and the mask with the
/// lowest penalty. Used by the feed (`/v1/…/qr.svg`) and the admin's printable sheets (DESIGN.md, "QR codes").
public struct QRCode: Sendable, Equatable {
    public struct TooLong: Error, CustomStringConvertible {
        public let bytes: Int
        public var description: String { "a QR code here holds at most \(QRCode.maximumBytes) bytes; this text has \(bytes)" }
    }

    /// What version 10 at level M holds in byte mode.
    public static let maximumBytes = 213
    public let version: Int
    /// Modules per side: 17 + 4 × version.
    public let size: Int
    public let mask: Int
    /// Row-major; true is dark.
    private let modules: [Bool]

    public subscript(row: Int, column: Int) -> Bool { modules[row * size + column] }

    public init(_ text: String) throws(TooLong) {
        let bytes = Array(text.utf8)
        guard let version = (1...10).first(where: { Self.dataCapacity($0) * 8 >= 4 + Self.countBits($0) + bytes.count * 8 }) else {
            throw TooLong(bytes: bytes.count)
        }
        var matrix = Matrix(version: version)
        matrix.place(Self.codewords(bytes, version: version))
        let candidates = (0..<8).map { mask in
            let masked = matrix.masked(mask)
            return (mask: mask, matrix: masked, penalty: masked.penalty)
        }
        let chosen = candidates.min { $0.penalty < $1.penalty }!
        self.version = version
        size = chosen.matrix.size
        mask = chosen.mask
        modules = chosen.matrix.dark
    }

    /// The code as SVG: one unit per module, a quiet zone of 4, dark runs of each row as one path; `title`
    /// (escaped here) names it for screen readers and shows as a tooltip.
    public func svg(title: String) -> String {
        let quiet = 4, side = size + 2 * quiet
        var path = ""
        for row in 0..<size {
            var column = 0
            while column < size {
                guard self[row, column] else { column += 1; continue }
                let start = column
                while column < size, self[row, column] { column += 1 }
                path += "M\(start + quiet),\(row + quiet)h\(column - start)v1h-\(column - start)z"
            }
        }
        let escaped = title.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
        return #"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \#(side) \#(side)" shape-rendering="crispEdges" role="img">"#
            + "<title>\(escaped)</title>"
            + ##"<rect width="\##(side)" height="\##(side)" fill="#fff"/><path fill="#000" d="\##(path)"/></svg>"##
    }

    // MARK: codewords

    /// Error correction codewords per block and blocks, level M, versions 1–10.
    private static let blocks: [(ecPerBlock: Int, count: Int)] = [
        (10, 1), (16, 1), (26, 1), (18, 2), (24, 2), (16, 4), (18, 4), (22, 4), (22, 5), (26, 5),
    ]

    /// Codewords of the version's data and error correction, from its modules less its function patterns.
    static func rawCodewords(_ version: Int) -> Int {
        var modules = (16 * version + 128) * version + 64
        if version >= 2 {
            let alignments = version / 7 + 2
            modules -= (25 * alignments - 10) * alignments - 55
            if version >= 7 { modules -= 36 }
        }
        return modules / 8
    }

    static func dataCapacity(_ version: Int) -> Int {
        let (ec, count) = blocks[version - 1]
        return rawCodewords(version) - ec * count
    }

    private static func countBits(_ version: Int) -> Int { version < 10 ? 8 : 16 }

    /// Mode, count, bytes, terminator and padding, split into blocks each followed by its Reed-Solomon
    /// codewords, interleaved as the standard orders them.
    private static func codewords(_ bytes: [UInt8], version: Int) -> [UInt8] {
        var bits: [Bool] = []
        func append(_ value: Int, _ count: Int) {
            for shift in stride(from: count - 1, through: 0, by: -1) { bits.append((value >> shift) & 1 == 1) }
        }
        append(0b0100, 4)
        append(bytes.count, countBits(version))
        for byte in bytes { append(Int(byte), 8) }
        let capacityBits = dataCapacity(version) * 8
        append(0, min(4, capacityBits - bits.count))
        append(0, (8 - bits.count % 8) % 8)
        var data: [UInt8] = stride(from: 0, to: bits.count, by: 8).map { start in
            bits[start..<start + 8].reduce(0) { $0 << 1 | ($1 ? 1 : 0) }
        }
        for pad in 0..<(dataCapacity(version) - data.count) { data.append(pad % 2 == 0 ? 0xEC : 0x11) }

        let (ecLength, blockCount) = blocks[version - 1]
        let raw = rawCodewords(version)
        let shortBlocks = blockCount - raw % blockCount, shortLength = raw / blockCount
        let divisor = ReedSolomon.divisor(degree: ecLength)
        var split: [(data: [UInt8], ec: [UInt8])] = []
        var start = 0
        for index in 0..<blockCount {
            let length = shortLength - ecLength + (index < shortBlocks ? 0 : 1)
            let block = Array(data[start..<start + length])
            start += length
            split.append((block, ReedSolomon.remainder(block, divisor: divisor)))
        }
        var result: [UInt8] = []
        for column in 0..<(shortLength - ecLength + 1) {
            for block in split where column < block.data.count { result.append(block.data[column]) }
        }
        for column in 0..<ecLength {
            for block in split { result.append(block.ec[column]) }
        }
        return result
    }

    // MARK: the matrix

    private struct Matrix {
        let version: Int
        let size: Int
        var dark: [Bool]
        /// Finder, separator, timing, alignment, format and version modules, which data and masks leave alone.
        var function: [Bool]

        init(version: Int) {
            self.version = version
            size = 17 + 4 * version
            dark = Array(repeating: false, count: size * size)
            function = dark
            for index in 0..<size {
                set(row: 6, column: index, index % 2 == 0)
                set(row: index, column: 6, index % 2 == 0)
            }
            for (row, column) in [(3, 3), (3, size - 4), (size - 4, 3)] {
                for dr in -4...4 {
                    for dc in -4...4 where (0..<size).contains(row + dr) && (0..<size).contains(column + dc) {
                        let distance = max(abs(dr), abs(dc))
                        set(row: row + dr, column: column + dc, distance != 2 && distance != 4)
                    }
                }
            }
            let centres = Self.alignmentCentres(version: version, size: size)
            for (i, row) in centres.enumerated() {
                for (j, column) in centres.enumerated() {
                    let last = centres.count - 1
                    if (i == 0 && j == 0) || (i == 0 && j == last) || (i == last && j == 0) { continue }
                    for dr in -2...2 {
                        for dc in -2...2 { set(row: row + dr, column: column + dc, max(abs(dr), abs(dc)) != 1) }
                    }
                }
            }
            drawFormat(mask: 0)
            if version >= 7 {
                var remainder = version
                for _ in 0..<12 { remainder = (remainder << 1) ^ ((remainder >> 11) * 0x1F25) }
                let bits = version << 12 | remainder
                for index in 0..<18 {
                    let bit = (bits >> index) & 1 == 1
                    let a = size - 11 + index % 3, b = index / 3
                    set(row: b, column: a, bit)
                    set(row: a, column: b, bit)
                }
            }
        }

        static func alignmentCentres(version: Int, size: Int) -> [Int] {
            guard version > 1 else { return [] }
            let count = version / 7 + 2
            let step = (version * 4 + count * 2 + 1) / (count * 2 - 2) * 2
            var centres = [6]
            for index in 0..<(count - 1) { centres.insert(size - 7 - index * step, at: 1) }
            return centres
        }

        mutating func set(row: Int, column: Int, _ isDark: Bool) {
            dark[row * size + column] = isDark
            function[row * size + column] = true
        }

        /// The 15 format bits (level M, the mask), twice, and the dark module.
        mutating func drawFormat(mask: Int) {
            let data = 0b00 << 3 | mask
            var remainder = data
            for _ in 0..<10 { remainder = (remainder << 1) ^ ((remainder >> 9) * 0x537) }
            let bits = (data << 10 | remainder) ^ 0x5412
            func bit(_ index: Int) -> Bool { (bits >> index) & 1 == 1 }
            for index in 0...5 { set(row: index, column: 8, bit(index)) }
            set(row: 7, column: 8, bit(6))
            set(row: 8, column: 8, bit(7))
            set(row: 8, column: 7, bit(8))
            for index in 9..<15 { set(row: 8, column: 14 - index, bit(index)) }
            for index in 0..<8 { set(row: 8, column: size - 1 - index, bit(index)) }
            for index in 8..<15 { set(row: size - 15 + index, column: 8, bit(index)) }
            set(row: size - 8, column: 8, true)
        }

        /// The codewords' bits up and down the column pairs from the right, skipping the timing column.
        mutating func place(_ codewords: [UInt8]) {
            var index = 0
            var right = size - 1
            while right >= 1 {
                if right == 6 { right = 5 }
                let upward = (right + 1) & 2 == 0
                for step in 0..<size {
                    let row = upward ? size - 1 - step : step
                    for column in [right, right - 1] where !function[row * size + column] {
                        if index < codewords.count * 8 {
                            dark[row * size + column] = (codewords[index >> 3] >> (7 - index & 7)) & 1 == 1
                            index += 1
                        }
                    }
                }
                right -= 2
            }
        }

        /// This matrix with `mask` applied to its data modules and written into its format bits.
        func masked(_ mask: Int) -> Matrix {
            var copy = self
            for row in 0..<size {
                for column in 0..<size where !function[row * size + column] {
                    let flip: Bool = switch mask {
                    case 0: (row + column) % 2 == 0
                    case 1: row % 2 == 0
                    case 2: column % 3 == 0
                    case 3: (row + column) % 3 == 0
                    case 4: (row / 2 + column / 3) % 2 == 0
                    case 5: row * column % 2 + row * column % 3 == 0
                    case 6: (row * column % 2 + row * column % 3) % 2 == 0
                    default: ((row + column) % 2 + row * column % 3) % 2 == 0
                    }
                    if flip { copy.dark[row * size + column].toggle() }
                }
            }
            copy.drawFormat(mask: mask)
            return copy
        }

        /// The standard's penalty: long runs, 2×2 blocks, finder-like patterns and an uneven share of dark.
        var penalty: Int {
            var score = 0
            func at(_ row: Int, _ column: Int) -> Bool { dark[row * size + column] }
            for transposed in [false, true] {
                for line in 0..<size {
                    var run = 1
                    var previous = transposed ? at(0, line) : at(line, 0)
                    var window: [Bool] = [previous]
                    for position in 1..<size {
                        let module = transposed ? at(position, line) : at(line, position)
                        if module == previous {
                            run += 1
                            if run == 5 { score += 3 } else if run > 5 { score += 1 }
                        } else {
                            run = 1
                            previous = module
                        }
                        window.append(module)
                        if window.count > 11 { window.removeFirst() }
                        if window.count == 11, window == Self.finderLike || window == Self.finderLikeReversed { score += 40 }
                    }
                }
            }
            for row in 0..<(size - 1) {
                for column in 0..<(size - 1) {
                    let colour = at(row, column)
                    if colour == at(row, column + 1), colour == at(row + 1, column), colour == at(row + 1, column + 1) { score += 3 }
                }
            }
            let darkCount = dark.reduce(0) { $0 + ($1 ? 1 : 0) }, total = size * size
            score += ((abs(darkCount * 20 - total * 10) + total - 1) / total - 1) * 10
            return score
        }

        static let finderLike = [true, false, true, true, true, false, true, false, false, false, false]
        static let finderLikeReversed = Array(finderLike.reversed())
    }
}

/// Reed-Solomon over GF(2^8) with the QR polynomial x^8 + x^4 + x^3 + x^2 + 1.
enum ReedSolomon {
    static func multiply(_ x: UInt8, _ y: UInt8) -> UInt8 {
        var product = 0
        for shift in stride(from: 7, through: 0, by: -1) {
            product = (product << 1) ^ ((product >> 7) * 0x11D)
            product ^= Int((y >> shift) & 1) * Int(x)
        }
        return UInt8(product)
    }

    /// The generator polynomial of `degree`, highest coefficient (1) left out.
    static func divisor(degree: Int) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: degree)
        result[degree - 1] = 1
        var root: UInt8 = 1
        for _ in 0..<degree {
            for index in 0..<degree {
                result[index] = multiply(result[index], root)
                if index + 1 < degree { result[index] ^= result[index + 1] }
            }
            root = multiply(root, 0x02)
        }
        return result
    }

    static func remainder(_ data: [UInt8], divisor: [UInt8]) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: divisor.count)
        for byte in data {
            let factor = byte ^ result[0]
            result.removeFirst()
            result.append(0)
            for index in result.indices { result[index] ^= multiply(divisor[index], factor) }
        }
        return result
    }
}
