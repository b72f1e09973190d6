import Crypto
import Foundation
import HummingbirdBcrypt
import NIOPosix

/// Random tokens (sessions, CSRF) and their stored form.
enum SecureToken {
    /// 32 random bytes from the system's CSPRNG, base64url without padding (cookie-safe).
    static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// What the database keeps of a session token: its SHA-256, so a leaked table opens no session.
    static func hash(_ token: String) -> String {
        SHA256.hash(data: Data(token.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// Compares in time independent of where the strings differ.
    static func equal(_ a: String, _ b: String) -> Bool {
        let left = Array(a.utf8), right = Array(b.utf8)
        guard left.count == right.count, !left.isEmpty else { return false }
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
    }
}

/// bcrypt, off the request threads (each hash takes ~250 ms at cost 12 by design).
struct PasswordHasher: Sendable {
    let cost: UInt8
    private let dummyHash: String

    init(cost: UInt8) {
        self.cost = cost
        dummyHash = Bcrypt.hash("not anyone's password", cost: cost)
    }

    /// Passwords shorter than this are refused when set.
    static let minimumLength = 10

    func hash(_ password: String) async throws -> String {
        let cost = self.cost
        return try await NIOThreadPool.singleton.runIfActive { Bcrypt.hash(password, cost: cost) }
    }

    func verify(_ password: String, hash: String) async throws -> Bool {
        try await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(password, hash: hash) }
    }

    /// A hash to verify against when the email is unknown, so a wrong email takes as long as a wrong password.
    func dummyVerify(_ password: String) async throws {
        _ = try await verify(password, hash: dummyHash)
    }
}
