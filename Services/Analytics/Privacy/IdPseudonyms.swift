import Crypto
import Foundation
import Shared

/// Device and tourist ids as analytics stores them (docs/PRIVACY.md): HMAC-SHA-256 keyed with `ANALYTICS_ID_KEY`, its
/// first 128 bits (RFC 2104 §5 allows truncating to half the hash: two devices would share a pseudonym only after some
/// 2^64 devices), written as base64url without padding (RFC 4648 §5), 22 ASCII characters: shorter than most ids
/// phones send, so every index holding them is smaller than before. The database never holds what phones
/// send; the same id always gives the same pseudonym under one key, so distinct counts, tour attribution and the
/// tourist checks stay exact, and every replica (and `analytics replay`) must run with the same key.
struct IdPseudonyms: Sendable {
    /// The key prepared once: each pseudonym copies it and adds the id (HMAC's padded keys are not derived again).
    private let prepared: HMAC<SHA256>
    /// RFC 2104's padded keys, K' xor ipad and K' xor opad, for the SQL form of the same function
    /// (`sqlPseudonym`), which converts rows stored before ids were hashed.
    let innerPad: [UInt8]
    let outerPad: [UInt8]

    /// The shortest key taken, in bytes (as `CATALOG_COMMAND_KEY`).
    static let minimumKeyBytes = 16
    /// Bytes of the MAC kept, and characters of every pseudonym.
    static let bytesKept = 16
    static let length = 22

    init(key: String) throws {
        let bytes = Array(key.utf8)
        guard bytes.count >= Self.minimumKeyBytes else {
            throw ConfigurationError(name: ConfigVariable.analyticsIdKey.name,
                                     message: "must be at least \(Self.minimumKeyBytes) bytes (e.g. openssl rand -hex 32), got \(bytes.count)")
        }
        prepared = HMAC<SHA256>(key: SymmetricKey(data: bytes))
        // RFC 2104: a key longer than the block (64 bytes) is hashed first; then zero-padded to the block.
        var block = bytes.count > 64 ? Array(SHA256.hash(data: bytes)) : bytes
        block += Array(repeating: 0, count: 64 - block.count)
        innerPad = block.map { $0 ^ 0x36 }
        outerPad = block.map { $0 ^ 0x5c }
    }

    init(environment: Shared.Environment) throws {
        try self.init(key: environment.required(.analyticsIdKey))
    }

    /// The stored form of a device or tourist id.
    func pseudonym(_ id: String) -> String {
        var mac = prepared
        mac.update(data: Array(id.utf8))
        return Self.base64URL(mac.finalize().withUnsafeBytes { Array($0.prefix(Self.bytesKept)) })
    }

    /// The event as analytics keeps it: its device and tourist ids replaced by their pseudonyms, through `cache`
    /// (a batch holds many events of each device).
    func pseudonymized(_ event: TrackingEvent, cache: inout [String: String]) -> TrackingEvent {
        var event = event
        event.deviceId = cached(event.deviceId, &cache)
        if let tourist = event.touristId { event.touristId = cached(tourist, &cache) }
        return event
    }

    func pseudonymized(_ events: [TrackingEvent]) -> [TrackingEvent] {
        var cache: [String: String] = [:]
        return events.map { pseudonymized($0, cache: &cache) }
    }

    private func cached(_ id: String, _ cache: inout [String: String]) -> String {
        if let known = cache[id] { return known }
        let made = pseudonym(id)
        cache[id] = made
        return made
    }

    /// The same function in SQL (Postgres' own sha256, no extension) over a text expression, with the two pads bound
    /// as `$inner` and `$outer` bytea parameters: the first 16 bytes of sha256(outer || sha256(inner || utf8(id))), base64url
    /// without '='.
    static func sqlPseudonym(_ column: String, inner: String, outer: String) -> String {
        "translate(encode(substring(sha256(\(outer) || sha256(\(inner) || convert_to(\(column), 'UTF8'))) FROM 1 FOR \(bytesKept)), 'base64'), '+/=', '-_')"
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    static func base64URL(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index + 3 <= bytes.count {
            let n = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)], alphabet[Int(n & 63)]]
            index += 3
        }
        let rest = bytes.count - index
        if rest == 1 {
            let n = UInt32(bytes[index]) << 16
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)]]
        } else if rest == 2 {
            let n = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)]]
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension ConfigVariable {
    static let analyticsIdKey = required(
        "ANALYTICS_ID_KEY", demoValue: "itour-demo-analytics-id-key", secret: true,
        "key of the HMAC-SHA-256 that turns device and tourist ids into the pseudonyms analytics stores (docs/PRIVACY.md); "
            + "every analytics replica and replay needs the same one, at least 16 bytes; changing it makes every device new")
}
