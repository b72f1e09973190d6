import HTTPTypes
import Hummingbird

/// One response body rendered once per change: the bytes, their gzip copy and a fingerprint for the ETags,
/// so serving a GET is a lookup and a copy of a reference. A city holds one per POI, so it holds nothing it
/// can work out per answer: the headers are made when an answer is written (`forEachHeader`), from the
/// fingerprint and the strings every resource of its kind shares; both bodies share one allocation
/// (NIO rounds each buffer's capacity up to a power of two).
final class RenderedResource: Sendable {
    let identity: ByteBuffer
    /// Nil when gzip would not make the body smaller (tiny bodies).
    let gzip: ByteBuffer?
    /// FNV-1a 64 of the identity bytes (`ContentHash`).
    let hash: UInt64
    let contentType: String
    let cacheControl: String
    let extraHeaders: HTTPFields
    /// The language of content answered per language (DESIGN.md "Languages"): its `Content-Language`, and `Vary` names
    /// `Accept-Language`. Nil for answers in one language only.
    let language: String?

    /// Below this, gzip's own header and trailer outweigh anything it could save.
    static let minimumGzipBytes = 64

    init(bytes: [UInt8], contentType: String, cacheControl: String, extraHeaders: HTTPFields = [:], language: String? = nil,
         compressor: GzipCompressor) {
        hash = ContentHash.fnv1a64Value(bytes)
        let compressed = bytes.count >= Self.minimumGzipBytes ? compressor.compress(bytes).flatMap { $0.count < bytes.count ? $0 : nil } : nil
        var storage = ByteBufferAllocator().buffer(capacity: bytes.count + (compressed?.count ?? 0))
        storage.writeBytes(bytes)
        if let compressed { storage.writeBytes(compressed) }
        identity = storage.getSlice(at: 0, length: bytes.count)!
        gzip = compressed.map { storage.getSlice(at: bytes.count, length: $0.count)! }
        self.contentType = contentType
        self.cacheControl = cacheControl
        self.extraHeaders = extraHeaders
        self.language = language
    }

    /// The identity variant's strong ETag, quoted; the gzip variant's is the same with "-gzip" inside the quotes.
    var etag: String { ContentHash.quoted(hash, suffix: "") }
    var gzipETag: String { ContentHash.quoted(hash, suffix: "-gzip") }

    /// The header fields of an answer with this content, in the order they are written: a `200`'s (with the
    /// body's type, encoding and length), or a `304`'s (validators and caching only).
    func forEachHeader(gzip useGzip: Bool, notModified: Bool, _ body: (HTTPField.Name, String) -> Void) {
        for field in extraHeaders { body(field.name, field.value) }
        body(.cacheControl, cacheControl)
        if let language {
            body(.vary, "Accept-Encoding, Accept-Language")
            body(.contentLanguage, language)
        } else {
            body(.vary, "Accept-Encoding")
        }
        body(.eTag, useGzip ? gzipETag : etag)
        guard !notModified else { return }
        body(.contentType, contentType)
        if useGzip { body(.contentEncoding, "gzip") }
        body(.contentLength, String((useGzip ? gzip : identity)?.readableBytes ?? 0))
    }

    /// `forEachHeader`'s fields, for the router's answers.
    func headers(gzip useGzip: Bool, notModified: Bool) -> HTTPFields {
        var fields = HTTPFields()
        fields.reserveCapacity(extraHeaders.count + 7)
        forEachHeader(gzip: useGzip, notModified: notModified) { fields.append(HTTPField(name: $0, value: $1)) }
        return fields
    }

    /// Total bytes held, for the projection size gauge.
    var byteCount: Int { identity.readableBytes + (gzip?.readableBytes ?? 0) }
}

/// 64-bit FNV-1a as 16 hex digits: a stable content fingerprint for ETags (not a security hash).
enum ContentHash {
    static func fnv1a64(_ bytes: [UInt8]) -> String { hex(fnv1a64Value(bytes)) }

    static func fnv1a64Value(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    /// 16 lower-case hex digits.
    static func hex(_ hash: UInt64) -> String { quoted(hash, suffix: "", quote: false) }

    /// `"<16 hex digits><suffix>"`, made in one allocation: the feed makes its ETags per answer.
    static func quoted(_ hash: UInt64, suffix: StaticString, quote: Bool = true) -> String {
        let quotes = quote ? 2 : 0
        return String(unsafeUninitializedCapacity: 16 + suffix.utf8CodeUnitCount + quotes) { buffer in
            let digits: StaticString = "0123456789abcdef"
            var at = 0
            if quote { buffer[at] = UInt8(ascii: "\""); at += 1 }
            for shift in stride(from: 60, through: 0, by: -4) {
                buffer[at] = digits.utf8Start[Int((hash >> UInt64(shift)) & 0xF)]
                at += 1
            }
            for index in 0..<suffix.utf8CodeUnitCount {
                buffer[at] = suffix.utf8Start[index]
                at += 1
            }
            if quote { buffer[at] = UInt8(ascii: "\""); at += 1 }
            return at
        }
    }
}
