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

/// gzip (RFC 1952) request bodies: an app's offline backlog of events sent compressed (DESIGN.md, "Tracking events").
enum GzipInflater {
    enum Failure: Error, Equatable {
        /// Not gzip, cut short, or failing its checksum.
        case notGzip
        /// It inflates to more than the limit: a small body can inflate to gigabytes, so reading stops there.
        case tooLarge
    }

    /// What `input` inflates to, at most `limit` bytes. Members written one after another (RFC 1952 allows it) are read
    /// in turn; anything after the last member that is not another member is `notGzip`.
    static func read(_ input: [UInt8], limit: Int) throws(Failure) -> [UInt8] {
        var stream = z_stream()
        // windowBits 15 + 16: a gzip wrapper, not zlib's.
        guard inflateInit2_(&stream, 15 + 16, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { throw .notGzip }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        output.reserveCapacity(min(limit, max(64, input.count * 4)))
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        let failure: Failure? = input.withUnsafeBytes { source -> Failure? in
            stream.next_in = UnsafeMutablePointer(mutating: source.bindMemory(to: Bytef.self).baseAddress)
            stream.avail_in = uInt(source.count)
            while true {
                var status: Int32 = Z_OK
                let produced = chunk.withUnsafeMutableBytes { target -> Int in
                    stream.next_out = target.bindMemory(to: Bytef.self).baseAddress
                    stream.avail_out = uInt(target.count)
                    status = inflate(&stream, Z_NO_FLUSH)
                    return target.count - Int(stream.avail_out)
                }
                guard output.count + produced <= limit else { return .tooLarge }
                output.append(contentsOf: chunk[..<produced])
                switch status {
                case Z_STREAM_END:
                    if stream.avail_in == 0 { return nil }
                    guard inflateReset(&stream) == Z_OK else { return .notGzip }
                case Z_OK:
                    // All of the input read, room left for output, and the member not ended: it was cut short.
                    if stream.avail_in == 0 && stream.avail_out > 0 { return .notGzip }
                default:
                    return .notGzip
                }
            }
        }
        if let failure { throw failure }
        return output
    }
}
