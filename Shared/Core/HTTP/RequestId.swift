import Synchronization

/// The suite's `X-Request-Id` rule, for `RequestIdMiddleware` and for answers made beside the router (the
/// feed's pipeline): the caller's id when it is sane (at most 64 ASCII letters, digits and dashes), else a
/// new one, unique in this process and unlikely to repeat across processes (a random 64-bit prefix and a
/// counter; cheap enough to make per request on the feed's hot path).
public enum RequestId {
    public static func id(given: String?) -> String {
        if let given, isSane(given) { return given }
        return make()
    }

    public static func isSane(_ given: String) -> Bool {
        given.utf8.count <= 64 && given.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || ((byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A) || byte == 0x2D
        }
    }

    public static func make() -> String {
        let number = counter.wrappingAdd(1, ordering: .relaxed).newValue
        return "\(prefix)-\(String(number, radix: 16))"
    }

    private static let prefix = String(UInt64.random(in: .min ... .max), radix: 16)
    private static let counter = Atomic<UInt64>(0)
}
