import Foundation
import Hummingbird
import NIOCore
import Shared

/// The admin's request context: who is signed in (SessionMiddleware) and the posted form (CSRFMiddleware
/// reads the body once, checks its token, and leaves the fields here for the route).
struct AdminRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The signed-in user, if any.
    var session: AdminSession?
    /// The fields of a POSTed form (url-encoded or multipart).
    var form = FormData()
    /// The TCP peer.
    let peer: SocketAddress?
    /// The client's address (`TrustedProxies.clientKey`), for log-in throttling; set by `ClientAddressMiddleware`.
    var clientAddress: String
    /// A CSRF token for forms shown before log-in (double-submit cookie), set by CSRFMiddleware.
    var anonymousCSRFToken: String?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        peer = source.channel.remoteAddress
        clientAddress = IPAddress(peer)?.clientKey ?? "unknown"
    }

    /// Whether the signed-in user is an owner (pages that differ by role only in a link or two).
    var isOwner: Bool { session?.user.role == .owner }

    /// The token forms on this page carry.
    var csrfToken: String { session?.csrfToken ?? anonymousCSRFToken ?? "" }

    /// The signed-in user, or a redirect to the log-in page.
    func requireUser() throws -> AdminUser {
        guard let user = session?.user else { throw AdminError.notSignedIn }
        return user
    }

    /// The signed-in user if their role is one of `roles` (e.g. `[.owner, .viewer]` for reports), else a 403 page.
    func require(_ roles: Set<Role>) throws -> AdminUser {
        let user = try requireUser()
        guard roles.contains(user.role) else {
            throw AdminError.forbidden("Your role (\(user.role.rawValue)) cannot open this page.")
        }
        return user
    }
}

/// The fields of a posted form: text values by name (a name may repeat), and uploaded files.
struct FormData: Sendable {
    struct File: Sendable {
        var fileName: String
        var contentType: String?
        var data: [UInt8]
    }

    var fields: [String: [String]] = [:]
    var files: [String: File] = [:]

    /// The first value of a field, or "" when it is absent.
    subscript(_ name: String) -> String { fields[name]?.first ?? "" }

    func all(_ name: String) -> [String] { fields[name] ?? [] }

    func has(_ name: String) -> Bool { fields[name] != nil }

    func int(_ name: String) -> Int? { Int(self[name].trimmingCharacters(in: .whitespaces)) }

    func uuid(_ name: String) -> UUID? { UUID(uuidString: self[name].trimmingCharacters(in: .whitespaces)) }

    /// Parses `application/x-www-form-urlencoded`.
    static func urlEncoded(_ text: String) -> FormData {
        var form = FormData()
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = decode(parts[0])
            let value = parts.count > 1 ? decode(parts[1]) : ""
            form.fields[name, default: []].append(value)
        }
        return form
    }

    private static func decode(_ text: Substring) -> String {
        String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(text)
    }

    /// Parses `multipart/form-data` (RFC 7578) with the given boundary; nil when malformed. Linear in the body's
    /// length whatever the boundary (each delimiter is found with `BytePattern`, each part copied once).
    static func multipart(_ body: [UInt8], boundary: String) -> FormData? {
        let delimiter = BytePattern(Array("--\(boundary)".utf8))
        let headerEnd = BytePattern([13, 10, 13, 10])
        var form = FormData()
        var parts: [Range<Int>] = []
        guard var start = delimiter.firstRange(in: body, from: body.startIndex)?.upperBound else { return nil }
        while let range = delimiter.firstRange(in: body, from: start) {
            // Each part ends with CRLF before the next delimiter.
            var end = range.lowerBound
            if end - start >= 2, body[end - 2] == 13, body[end - 1] == 10 { end -= 2 }
            parts.append(start..<end)
            start = range.upperBound
            if body[start...].starts(with: [45, 45]) { break } // "--": the last delimiter
        }
        for var part in parts {
            if body[part].starts(with: [13, 10]) { part = (part.lowerBound + 2)..<part.upperBound }
            guard let split = headerEnd.firstRange(in: body, from: part.lowerBound, to: part.upperBound) else { continue }
            let headers = String(decoding: body[part.lowerBound..<split.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
            let content = body[split.upperBound..<part.upperBound]
            var name: String?
            var fileName: String?
            var contentType: String?
            for header in headers {
                let lower = header.lowercased()
                if lower.hasPrefix("content-disposition:") {
                    name = parameter("name", in: header)
                    fileName = parameter("filename", in: header)
                } else if lower.hasPrefix("content-type:") {
                    contentType = header.dropFirst("content-type:".count).trimmingCharacters(in: .whitespaces)
                }
            }
            guard let name else { continue }
            if let fileName {
                form.files[name] = File(fileName: fileName, contentType: contentType, data: Array(content))
            } else {
                form.fields[name, default: []].append(String(decoding: content, as: UTF8.self))
            }
        }
        return form
    }

    private static func parameter(_ key: String, in header: String) -> String? {
        for piece in header.split(separator: ";").dropFirst() {
            let pair = piece.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, pair[0].lowercased() == key else { continue }
            var value = pair[1]
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
            return value
        }
        return nil
    }
}

/// A byte pattern to find in a body (a multipart delimiter), by Knuth–Morris–Pratt: at most two steps per byte
/// searched, whatever the pattern, so a hostile boundary cannot make a body quadratic to read.
struct BytePattern: Sendable {
    let bytes: [UInt8]
    /// `border[j]`: the length of the longest proper prefix of `bytes[0...j]` that is also a suffix of it.
    private let border: [Int]

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        var border = [Int](repeating: 0, count: bytes.count)
        var length = 0
        for index in bytes.indices.dropFirst() {
            while length > 0 && bytes[index] != bytes[length] { length = border[length - 1] }
            if bytes[index] == bytes[length] { length += 1 }
            border[index] = length
        }
        self.border = border
    }

    /// The first occurrence at or after `from` that ends by `end` (the body's end when nil).
    func firstRange(in body: [UInt8], from: Int, to end: Int? = nil) -> Range<Int>? {
        var steps = 0
        return firstRange(in: body, from: from, to: end, steps: &steps)
    }

    /// The same, counting its steps (each either moves on in the body or falls back in the pattern).
    func firstRange(in body: [UInt8], from: Int, to end: Int? = nil, steps: inout Int) -> Range<Int>? {
        let end = min(end ?? body.count, body.count)
        guard !bytes.isEmpty, from >= 0 else { return nil }
        var index = from
        var matched = 0
        while index < end {
            steps += 1
            if body[index] == bytes[matched] {
                index += 1
                matched += 1
                if matched == bytes.count { return (index - matched)..<index }
            } else if matched > 0 {
                matched = border[matched - 1]
            } else {
                index += 1
            }
        }
        return nil
    }
}
