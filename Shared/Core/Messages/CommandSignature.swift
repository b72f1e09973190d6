import Crypto
import Foundation

/// Proof that a `catalog.commands` message comes from a holder of the command key (DESIGN.md "Signed
/// commands"): HMAC-SHA-256 over the message's value bytes, in the `signature` header as lower-case hex.
/// Anyone who can reach the broker can write the topic; only the admin and catalog's own tools hold the key,
/// so only their commands, and the actor they name, are applied.
///
/// Two keys are accepted, so the key can be rotated without a failed save: deploy the new key as current with
/// the old one as previous everywhere, then drop the previous.
public struct CommandSignature: Sendable {
    private let current: SymmetricKey
    private let previous: SymmetricKey?

    /// The variables `init(environment:)` reads.
    public static let variables: [ConfigVariable] = [.catalogCommandKey, .catalogCommandKeyPrevious]

    /// Keys shorter than this are refused at start: a guessable key signs an attacker's commands.
    public static let minimumKeyBytes = 16

    public init(key: String, previousKey: String? = nil) throws(ConfigurationError) {
        current = try Self.key(key, variable: .catalogCommandKey)
        previous = try previousKey.map { text throws(ConfigurationError) in try Self.key(text, variable: .catalogCommandKeyPrevious) }
    }

    public init(environment: Environment = Environment()) throws {
        try self.init(key: try environment.required(.catalogCommandKey), previousKey: environment.optionalString(.catalogCommandKeyPrevious))
    }

    private static func key(_ text: String, variable: ConfigVariable) throws(ConfigurationError) -> SymmetricKey {
        guard text.utf8.count >= minimumKeyBytes else {
            throw ConfigurationError(name: variable.name, message: "must be at least \(minimumKeyBytes) bytes (e.g. openssl rand -hex 32)")
        }
        return SymmetricKey(data: Array(text.utf8))
    }

    /// The header to send with `value`, signed with the current key.
    public func header(for value: [UInt8]) -> (String, [UInt8]) {
        (MessageHeader.signature, Array(Self.hex(HMAC<SHA256>.authenticationCode(for: value, using: current)).utf8))
    }

    /// Whether `signature` (the header's text) is `value`'s, by the current or the previous key. Compared in
    /// constant time, so a forger learns nothing from how long a wrong guess took.
    public func isValid(_ signature: String?, for value: [UInt8]) -> Bool {
        guard let signature, let code = Self.bytes(hex: signature) else { return false }
        if HMAC<SHA256>.isValidAuthenticationCode(code, authenticating: value, using: current) { return true }
        if let previous, HMAC<SHA256>.isValidAuthenticationCode(code, authenticating: value, using: previous) { return true }
        return false
    }

    private static func hex(_ code: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in code { text += [digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]] }
        return String(decoding: text, as: UTF8.self)
    }

    private static func bytes(hex: String) -> [UInt8]? {
        let utf8 = Array(hex.utf8)
        guard utf8.count == 2 * SHA256.byteCount else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(SHA256.byteCount)
        for index in stride(from: 0, to: utf8.count, by: 2) {
            guard let high = nibble(utf8[index]), let low = nibble(utf8[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func nibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}

extension ConfigVariable {
    public static let catalogCommandKey = required(
        "CATALOG_COMMAND_KEY", demoValue: "itour-demo-command-key", secret: true,
        "key that signs catalog.commands (HMAC-SHA-256); the admin and catalog hold the same one, at least 16 bytes")
    public static let catalogCommandKeyPrevious = optional(
        "CATALOG_COMMAND_KEY_PREVIOUS", default: nil, secret: true, "the key before CATALOG_COMMAND_KEY, still accepted while it is rotated")
}
