import Foundation
import Glibc

/// A throwaway certificate authority and a server and a client certificate it signed, made with `openssl` in a
/// fresh temporary directory, plus a second authority that signed nothing (the "wrong CA"). PEM files, keys
/// unencrypted, EC P-256 (made in milliseconds). Remove the directory with `remove()`.
public struct TestCertificates: Sendable {
    public let directory: String
    /// The authority that signed `serverCertificate`.
    public let authority: String
    /// An authority of its own that signed nothing here: a client trusting only it must refuse the server.
    public let otherAuthority: String
    public let serverCertificate: String
    public let serverKey: String
    /// A client certificate the authority signed (for brokers that check clients' certificates), and its key.
    public let clientCertificate: String
    public let clientKey: String

    /// `subjectAltNames` in openssl's words, e.g. `["DNS:localhost", "IP:127.0.0.1"]`.
    public static func make(subjectAltNames: [String], commonName: String = "localhost") async throws -> TestCertificates {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("itour-tls-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o755])
        func path(_ name: String) -> String { "\(directory)/\(name)" }
        let certificates = TestCertificates(directory: directory, authority: path("ca.crt"), otherAuthority: path("other-ca.crt"),
                                            serverCertificate: path("server.crt"), serverKey: path("server.key"),
                                            clientCertificate: path("client.crt"), clientKey: path("client.key"))
        let days = "2"
        for (name, subject) in [("ca", "/CN=iTour test CA"), ("other-ca", "/CN=iTour other test CA")] {
            try await TestProcess.run("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", days, "-subj", subject,
                                                  "-keyout", path("\(name).key"), "-out", path("\(name).crt")])
        }
        let roles = [("server", commonName, "subjectAltName=\(subjectAltNames.joined(separator: ","))\nextendedKeyUsage=serverAuth"),
                     ("client", "itour-client", "extendedKeyUsage=clientAuth")]
        for (name, subject, usage) in roles {
            try await TestProcess.run("openssl", ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", "/CN=\(subject)",
                                                  "-keyout", path("\(name).key"), "-out", path("\(name).csr")])
            try "\(usage)\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n"
                .write(toFile: path("\(name).ext"), atomically: true, encoding: .utf8)
            try await TestProcess.run("openssl", ["x509", "-req", "-days", days, "-in", path("\(name).csr"), "-CA", certificates.authority,
                                                  "-CAkey", path("ca.key"), "-CAcreateserial", "-extfile", path("\(name).ext"),
                                                  "-out", path("\(name).crt")])
        }
        return certificates
    }

    /// Gives `paths` to the `postgres` user when this process runs as root (a cluster started by
    /// scripts/postgres.sh as root runs as that user), keys readable by it alone, as Postgres insists.
    public func handToPostgresUser(_ paths: [String]) throws {
        guard getuid() == 0 else { return }
        guard let user = getpwnam("postgres") else { throw TestProcessError(description: "no postgres user") }
        for path in paths {
            guard chown(path, user.pointee.pw_uid, user.pointee.pw_gid) == 0 else {
                throw TestProcessError(description: "chown \(path): errno \(errno)")
            }
        }
    }

    /// Makes `path` readable by its owner only (a private key).
    public func restrict(_ path: String) throws {
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
    }

    public func remove() {
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// Runs a program to its end without holding a thread of the cooperative pool.
///
/// Not Foundation's `Process`: on Linux it learns that a program ended when a socket it hands the program closes,
/// and a daemon the program leaves running (pg_ctl's postmaster) inherits that socket, so the end of
/// `scripts/postgres.sh start` was never reported. Here: posix_spawn, and waitpid on a thread of its own.
public enum TestProcess {
    /// Runs `executable` (a path, or a name looked up on PATH) and returns its standard output; throws with
    /// its output and error output when it exits non-zero.
    @discardableResult
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try runBlocking(executable, arguments, environment: environment) }) }.start()
        }
    }

    private static func runBlocking(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> String {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("itour-process-\(UUID().uuidString)").path
        defer {
            try? FileManager.default.removeItem(atPath: output + ".out")
            try? FileManager.default.removeItem(atPath: output + ".err")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output + ".out", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, output + ".err", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let variables = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, executable, &actions, nil, argv, envp)
        guard spawned == 0 else { throw TestProcessError(description: "\(executable): posix_spawn failed, errno \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let out = (try? String(contentsOfFile: output + ".out", encoding: .utf8)) ?? ""
        // Exited normally with 0: the low seven bits (the signal) and the exit code (the next eight) are zero.
        guard status == 0 else {
            let err = (try? String(contentsOfFile: output + ".err", encoding: .utf8)) ?? ""
            throw TestProcessError(description: "\(executable) \(arguments.joined(separator: " ")) ended with status \(status): \(out)\(err)")
        }
        return out
    }
}

public struct TestProcessError: Error, CustomStringConvertible {
    public let description: String

    public init(description: String) {
        self.description = description
    }
}
