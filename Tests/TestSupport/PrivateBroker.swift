import Foundation
import Glibc
import Synchronization

/// A tansu broker of the test's own, on a free port, that the test may pause (SIGSTOP), kill (-9) and
/// start again empty on the same port, without disturbing the shared test broker.
public final class PrivateBroker: Sendable {
    public let port: Int
    public let address: String
    /// The running tansu (a new one after `restartEmpty`).
    private let current: Mutex<ProcessBox>

    /// `Process` is not Sendable; it is only signalled and stopped after start.
    private struct ProcessBox: @unchecked Sendable {
        let process: Process
    }

    private init(process: Process, port: Int) {
        self.port = port
        address = "127.0.0.1:\(port)"
        current = Mutex(ProcessBox(process: process))
    }

    /// A tansu of this test's own on a free port; a few tries, since the port can be taken in between.
    /// Waits for it on a thread of its own: tests start several at once, and waiting on the cooperative pool
    /// (two threads on a two-core machine) would hold up every other test meanwhile.
    public static func start() async throws -> PrivateBroker {
        try await offPool {
            var lastError: (any Error)?
            for _ in 0..<3 {
                do {
                    let port = try freePort()
                    return PrivateBroker(process: try launch(port: port), port: port)
                } catch { lastError = error }
            }
            throw lastError!
        }
    }

    /// Runs blocking `body` (process start-up, polling with usleep) on a new thread; the caller suspends.
    private static func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }

    private static func launch(port: Int) throws -> Process {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized
        let process = Process()
        process.executableURL = root.appendingPathComponent(".local/bin/tansu")
        process.arguments = ["broker", "--listener-url", "tcp://127.0.0.1:\(port)", "--advertised-listener-url", "tcp://127.0.0.1:\(port)",
                             "--storage-engine", "memory://tansu/"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(30)
        while !isOpen(port) {
            guard Date() < deadline, process.isRunning else {
                stop(process)
                throw PrivateBrokerError(description: "tansu did not open port \(port) within 30 s")
            }
            usleep(100_000)
        }
        // Tests run in parallel: if another process took the port between freePort() and tansu's bind, the
        // open port is someone else's and this tansu has exited. Pausing it would then pause nothing.
        usleep(300_000)
        guard process.isRunning else {
            throw PrivateBrokerError(description: "tansu exited after start (port \(port) taken by another process?)")
        }
        return process
    }

    private var pid: Int32 { current.withLock { $0.process.processIdentifier } }

    public func pause() { kill(pid, SIGSTOP) }
    public func resume() { kill(pid, SIGCONT) }

    /// Kills the broker with SIGKILL (everything it held is gone: it keeps its log in memory) and starts a
    /// new, empty one on the same port.
    public func restartEmpty() async throws {
        try await Self.offPool { try self.restartEmptyBlocking() }
    }

    private func restartEmptyBlocking() throws {
        let old = current.withLock { $0.process }
        kill(old.processIdentifier, SIGKILL)
        for _ in 0..<50 where old.isRunning { usleep(100_000) }
        var lastError: (any Error)?
        for _ in 0..<20 {
            do {
                let process = try Self.launch(port: port)
                current.withLock { $0 = ProcessBox(process: process) }
                return
            } catch {
                lastError = error
                usleep(250_000)   // the port may linger for a moment after the kill
            }
        }
        throw lastError!
    }

    /// SIGKILL, sent at once: the broker keeps nothing worth a graceful end (its log is in memory), and tansu started
    /// from a test thread inherits that thread's blocked signals, SIGTERM among them, so only SIGKILL ends it. Sent
    /// here rather than by a thread of its own: when the last test stops its broker, the test process may exit
    /// before such a thread runs, and the broker would outlive it. Called from `defer`, where it cannot suspend.
    public func stop() {
        resume()
        kill(pid, SIGKILL)
    }

    /// Polls `isRunning` rather than `waitUntilExit`, which spins a run loop and can miss the exit off the main thread.
    private static func stop(_ process: Process) {
        kill(process.processIdentifier, SIGKILL)
        for _ in 0..<50 where process.isRunning { usleep(100_000) }
    }

    public static func freePort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0 }
        }
        guard bound else { throw PrivateBrokerError(description: "no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    public static func isOpen(_ port: Int) -> Bool {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}

public struct PrivateBrokerError: Error, CustomStringConvertible {
    public let description: String
}
