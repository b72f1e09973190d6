import HTTPTypes
import Hummingbird

/// One response body rendered once per change: the bytes, their gzip copy, an ETag and the ready-made
/// headers of each variant, so serving a GET is a lookup and a copy of a reference.
final class RenderedResource: Sendable {
    let identity: ByteBuffer
    /// Nil when gzip would not make the body smaller (tiny bodies).
    let gzip: ByteBuffer?
    /// The identity variant's strong ETag, quoted; the gzip variant's is the same with "-gzip" inside the quotes.
    let etag: String
    let gzipETag: String
    let identityHeaders: HTTPFields
    let gzipHeaders: HTTPFields
    /// What a 304 carries: the validators and caching headers, no body headers.
    let notModifiedHeaders: HTTPFields
    let gzipNotModifiedHeaders: HTTPFields

    /// Below this, gzip's own header and trailer outweigh anything it could save.
    static let minimumGzipBytes = 64

    init(bytes: [UInt8], contentType: String, cacheControl: String, extraHeaders: HTTPFields = [:], compressor: GzipCompressor) {
        let hash = ContentHash.fnv1a64(bytes)
        etag = "\"\(hash)\""
        gzipETag = "\"\(hash)-gzip\""
        identity = ByteBuffer(bytes: bytes)
        let compressed = bytes.count >= Self.minimumGzipBytes ? compressor.compress(bytes) : nil
        gzip = compressed.flatMap { $0.count < bytes.count ? ByteBuffer(bytes: $0) : nil }

        var common = extraHeaders
        common[.cacheControl] = cacheControl
        common[.vary] = "Accept-Encoding"
        var notModified = common
        notModified[.eTag] = etag
        var gzipNotModified = common
        gzipNotModified[.eTag] = gzipETag
        notModifiedHeaders = notModified
        gzipNotModifiedHeaders = gzipNotModified
        var identityHeaders = notModified
        identityHeaders[.contentType] = contentType
        identityHeaders[.contentLength] = String(identity.readableBytes)
        self.identityHeaders = identityHeaders
        var gzipHeaders = gzipNotModified
        gzipHeaders[.contentType] = contentType
        gzipHeaders[.contentEncoding] = "gzip"
        gzipHeaders[.contentLength] = String(gzip?.readableBytes ?? 0)
        self.gzipHeaders = gzipHeaders
    }

    /// Total bytes held, for the projection size gauge.
    var byteCount: Int { identity.readableBytes + (gzip?.readableBytes ?? 0) }
}

/// 64-bit FNV-1a as 16 hex digits: a stable content fingerprint for ETags (not a security hash).
enum ContentHash {
    static func fnv1a64(_ bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
