import Foundation
import Shared

/// An image's pixel size read from its header alone (PNG's IHDR, JPEG's SOF, WebP's VP8/VP8L/VP8X), before anything
/// decodes it: a small file can describe a huge picture (30 000 × 30 000 pixels in 875 KB of PNG), which libvips would
/// spend many seconds of CPU and gigabytes of memory decoding. Uploads above `MEDIA_MAX_PIXELS` are refused on this.
enum ImageHeader {
    /// Width and height in pixels, or nil when the header cannot be read as `format`.
    static func dimensions(_ bytes: [UInt8], format: MediaFormat) -> (width: Int, height: Int)? {
        switch format {
        case .png: png(bytes)
        case .jpeg: jpeg(bytes)
        case .webp: webp(bytes)
        default: nil
        }
    }

    /// The signature, then the IHDR chunk first: length 13, "IHDR", width and height as big-endian 32-bit numbers.
    static func png(_ bytes: [UInt8]) -> (width: Int, height: Int)? {
        guard bytes.count >= 24, bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]),
              Array(bytes[12..<16]) == Array("IHDR".utf8) else { return nil }
        let width = bigEndian(bytes, 16, 4), height = bigEndian(bytes, 20, 4)
        return width > 0 && height > 0 ? (width, height) : nil
    }

    /// Segments from after SOI until a start-of-frame (SOF0–SOF15 but DHT, JPG and DAC): its height, then its width,
    /// as big-endian 16-bit numbers after the sample precision. A scan (SOS) before any frame header: unreadable.
    static func jpeg(_ bytes: [UInt8]) -> (width: Int, height: Int)? {
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return nil }
        var index = 2
        while index + 3 < bytes.count {
            guard bytes[index] == 0xFF else { return nil }
            let marker = bytes[index + 1]
            if marker == 0xFF { index += 1; continue }  // fill byte
            if marker == 0x01 || (0xD0...0xD7).contains(marker) { index += 2; continue }  // no length
            if marker == 0xD9 || marker == 0xDA { return nil }  // end of image, or a scan before any frame
            let length = bigEndian(bytes, index + 2, 2)
            guard length >= 2 else { return nil }
            if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
                guard length >= 7, index + 8 < bytes.count else { return nil }
                let height = bigEndian(bytes, index + 5, 2), width = bigEndian(bytes, index + 7, 2)
                // A height of 0 (to be given by a DNL marker later) is too rare to accept unread.
                return width > 0 && height > 0 ? (width, height) : nil
            }
            index += 2 + length
        }
        return nil
    }

    /// RIFF, WEBP, then the first chunk: `VP8 ` (lossy: 14-bit sizes after the key frame's start code), `VP8L`
    /// (lossless: 14-bit sizes minus one after the 0x2F signature) or `VP8X` (extended: 24-bit canvas sizes minus one).
    static func webp(_ bytes: [UInt8]) -> (width: Int, height: Int)? {
        guard bytes.count >= 30, Array(bytes[0..<4]) == Array("RIFF".utf8), Array(bytes[8..<12]) == Array("WEBP".utf8) else { return nil }
        switch String(decoding: bytes[12..<16], as: UTF8.self) {
        case "VP8 ":
            guard bytes[23] == 0x9D, bytes[24] == 0x01, bytes[25] == 0x2A else { return nil }
            let width = littleEndian(bytes, 26, 2) & 0x3FFF, height = littleEndian(bytes, 28, 2) & 0x3FFF
            return width > 0 && height > 0 ? (width, height) : nil
        case "VP8L":
            guard bytes[20] == 0x2F else { return nil }
            let bits = littleEndian(bytes, 21, 4)
            return ((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
        case "VP8X":
            return (littleEndian(bytes, 24, 3) + 1, littleEndian(bytes, 27, 3) + 1)
        default:
            return nil
        }
    }

    private static func bigEndian(_ bytes: [UInt8], _ offset: Int, _ count: Int) -> Int {
        guard offset >= 0, offset + count <= bytes.count else { return 0 }
        return bytes[offset..<(offset + count)].reduce(0) { $0 << 8 | Int($1) }
    }

    private static func littleEndian(_ bytes: [UInt8], _ offset: Int, _ count: Int) -> Int {
        guard offset >= 0, offset + count <= bytes.count else { return 0 }
        return bytes[offset..<(offset + count)].reversed().reduce(0) { $0 << 8 | Int($1) }
    }
}
