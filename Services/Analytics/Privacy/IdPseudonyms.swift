import Crypto
import Foundation
import Shared

/// Device and tourist ids as analytics stores them (docs/PRIVACY.md): HMAC-SHA-256 keyed with `ANALYTICS_ID_KEY`, its
/// first 128 bits (RFC 2104 §5 allows truncating to half the hash: two devices would share a pseudonym only after some
/// 2^64 devices), held in `uuid` columns: 16 bytes in every index, and a type the code from before pseudonyms cannot
/// write (it binds ids as text, and Postgres has no assignment cast from text to uuid), so a replica of that version
/// still running during the upgrade fails its batches instead of storing raw ids (docs/ANALYTICS.md "Upgrading").
/// In Swift a pseudonym is the uuid's text as PostgresNIO decodes it (`UUID.uuidString`), so pseudonyms made here and
/// read back compare equal. The database never holds what phones send; the same id always gives the same pseudonym
/// under one key, so distinct counts, tour attribution and the tourist checks stay exact, and every replica (and
/// `analytics replay`) must run with the same key (`IdKeyFingerprint` checks it).
struct IdPseudonyms: Sendable {
    /// The key prepared once: each pseudonym copies it and adds the id (HMAC's padded keys are not derived again).
    private let prepared: HMAC<SHA256>
    /// RFC 2104's padded keys, K' xor ipad and K' xor opad, for the SQL form of the same function
    /// (`sqlPseudonym`), which converts rows stored before ids were hashed.
    let innerPad: [UInt8]
    let outerPad: [UInt8]

    /// The shortest key taken, in bytes (as `CATALOG_COMMAND_KEY`).
    static let minimumKeyBytes = 16
    /// Bytes of the MAC kept: a uuid's.
    static let bytesKept = 16

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

    /// The key from the environment; the secret template's placeholder is refused, and so is the demo key outside demo mode.
    init(environment: Shared.Environment) throws {
        let key = try environment.required(.analyticsIdKey)
        let name = ConfigVariable.analyticsIdKey.name
        if key.hasPrefix("CHANGE-ME") {
            throw ConfigurationError(name: name, message: "is the secret template's placeholder; set a key of your own (e.g. openssl rand -hex 32)")
        }
        if key == ConfigVariable.analyticsIdKey.demoValue, try !environment.bool(.demo) {
            throw ConfigurationError(name: name, message: "is the demo key, which only demo mode (ITOUR_DEMO=1) may use; set a key of your own")
        }
        try self.init(key: key)
    }

    /// An HMAC of a fixed label under the key, never the key: what `IdKeyFingerprint` compares across replicas.
    var fingerprint: String { pseudonym("itour analytics id key fingerprint") }

    /// The stored form of a device or tourist id.
    func pseudonym(_ id: String) -> String {
        var mac = prepared
        mac.update(data: Array(id.utf8))
        return Self.uuid(mac.finalize().withUnsafeBytes { Array($0.prefix(Self.bytesKept)) }).uuidString
    }

    /// The event as analytics keeps it: its device and tourist ids replaced by their pseudonyms, through `cache`
    /// (a batch holds many events of each device). The cache is keyed by the id's UTF-8 bytes, what the MAC reads: String
    /// equality is canonical equivalence, and an NFC and an NFD id are two devices.
    func pseudonymized(_ event: TrackingEvent, cache: inout [[UInt8]: String]) -> TrackingEvent {
        var event = event
        event.deviceId = cached(event.deviceId, &cache)
        if let tourist = event.touristId { event.touristId = cached(tourist, &cache) }
        return event
    }

    func pseudonymized(_ events: [TrackingEvent]) -> [TrackingEvent] {
        var cache: [[UInt8]: String] = [:]
        return events.map { pseudonymized($0, cache: &cache) }
    }

    private func cached(_ id: String, _ cache: inout [[UInt8]: String]) -> String {
        let bytes = Array(id.utf8)
        if let known = cache[bytes] { return known }
        let made = pseudonym(id)
        cache[bytes] = made
        return made
    }

    /// The same function in SQL (Postgres' own sha256, no extension) over a text expression, with the two pads bound
    /// as `$inner` and `$outer` bytea parameters: the first 16 bytes of sha256(outer || sha256(inner || utf8(id))), as a uuid.
    static func sqlPseudonym(_ column: String, inner: String, outer: String) -> String {
        "encode(substring(sha256(\(outer) || sha256(\(inner) || convert_to(\(column), 'UTF8'))) FROM 1 FOR \(bytesKept)), 'hex')::uuid"
    }

    static func uuid(_ bytes: [UInt8]) -> UUID {
        precondition(bytes.count == 16)
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}

extension ConfigVariable {
    static let analyticsIdKey = required(
        "ANALYTICS_ID_KEY", demoValue: "itour-demo-analytics-id-key", secret: true,
        "key of the HMAC-SHA-256 that turns device and tourist ids into the pseudonyms analytics stores (docs/PRIVACY.md); "
            + "every analytics replica and replay needs the same one, at least 16 bytes; changing it makes every device new")
}
