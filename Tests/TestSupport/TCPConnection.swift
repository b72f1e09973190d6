import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A plain TCP connection to 127.0.0.1, for tests that must send what an HTTP client would not (another `Host`, a broken
/// chunk) or hold connections open. Blocking calls run off the cooperative pool.
public final class TCPConnection: @unchecked Sendable {
    private let fd: Int32

    public init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw POSIXError(.ECONNREFUSED)
        }
    }

    deinit { close(fd) }

    public func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw POSIXError(.EPIPE) }
            sent += count
        }
    }

    /// What the server sends until it closes the connection, or until `timeout` passes with the connection open
    /// (`closed` false then).
    public func receive(timeout: Duration = .seconds(10)) async -> (text: String, closed: Bool) {
        let fd = self.fd
        let deadline = ContinuousClock.now + timeout
        return await Task.detached {
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while ContinuousClock.now < deadline {
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 50) > 0 else { continue }
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if count <= 0 { return (String(decoding: received, as: UTF8.self), true) }
                received += buffer[0..<count]
            }
            return (String(decoding: received, as: UTF8.self), false)
        }.value
    }

    /// One request on a connection of its own; what the server answered until it closed or `timeout` passed.
    public static func exchange(port: Int, _ text: String, timeout: Duration = .seconds(30)) async throws -> String {
        let connection = try TCPConnection(port: port)
        try connection.send(text)
        return await connection.receive(timeout: timeout).text
    }
}
