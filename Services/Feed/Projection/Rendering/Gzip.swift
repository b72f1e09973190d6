import CZlib

/// gzip (RFC 1952) compression with one reusable zlib stream: allocating zlib's state costs more than
/// compressing a small response, and the projection compresses thousands of them in a row. Not
/// thread-safe; make one per thread.
final class GzipCompressor {
    private var stream = z_stream()
    private let ready: Bool

    init(level: Int32 = 6) {
        // windowBits 15 + 16 asks zlib for a gzip wrapper instead of a zlib one.
        ready = deflateInit2_(&stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY,
                              ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK
    }

    deinit {
        if ready { deflateEnd(&stream) }
    }

    /// The gzip encoding of `input`, or nil if zlib failed (the caller then serves identity only).
    func compress(_ input: [UInt8]) -> [UInt8]? {
        guard ready, deflateReset(&stream) == Z_OK else { return nil }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(input.count))) + 32)
        let status: Int32 = input.withUnsafeBytes { source in
            output.withUnsafeMutableBytes { target in
                stream.next_in = UnsafeMutablePointer(mutating: source.bindMemory(to: Bytef.self).baseAddress)
                stream.avail_in = uInt(source.count)
                stream.next_out = target.bindMemory(to: Bytef.self).baseAddress
                stream.avail_out = uInt(target.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else { return nil }
        output.removeSubrange(Int(stream.total_out)...)
        return output
    }
}
