import Foundation
import Glibc
import Hummingbird
import HummingbirdTesting
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Shared
import Testing
import TestSupport
@testable import Feed

/// What a connection costs the server when its client misbehaves: one that never finishes a request, one
/// that never reads its answers. Seen from a raw socket, on the real server (`.live`).
@Suite("Connections", .serialized, .stopsIfHung)
struct ConnectionTests {
    /// The feed answers most requests in its own pipeline handler, where Hummingbird's idle timer does not see
    /// them; the idle timeout must hold there too, without closing a connection that keeps asking.
    @Test("the feed closes a connection left with half a request line, or silent, after its idle timeout; a busy one stays")
    func feedIdleTimeout() async throws {
        // 2 s, not 1: a busy connection's GETs are 0.4 s apart, and on a loaded machine a 1 s bound was missed (a broken pipe).
        try await FeedHTTPTests.withFeed(idleTimeoutSeconds: 2, testing: .live) { _, client in
            let port = try #require(client.port)
            try await Self.expectClosedWhenIdle(port: port)

            // A GET every 0.4 s for longer than the timeout, answered in the pipeline: the connection stays.
            let busy = try RawSocket(port: port)
            for _ in 0..<8 {
                try busy.sendAll(Array("GET /v1/tours HTTP/1.1\r\nHost: feed\r\n\r\n".utf8))
                try await Task.sleep(for: .milliseconds(400))
            }
            try busy.sendAll(Array("GET /health HTTP/1.1\r\nHost: feed\r\nConnection: close\r\n\r\n".utf8))
            let answers = try await busy.readUntilClosed(timeout: .seconds(20))
            #expect(answers.components(separatedBy: "HTTP/1.1 200 ").count - 1 == 9, "\(answers.prefix(600))")
        }
    }

    /// Catalog, analytics and admin build their server from `ServiceRuntime.httpConfiguration` alone.
    @Test("a server built from ServiceRuntime.httpConfiguration closes a connection left with half a request line")
    func runtimeIdleTimeout() async throws {
        var settings = try TestServices.serviceSettings(name: "idle-probe", database: DatabaseSettings(port: TestServices.postgresPort),
                                                        kafka: TestServices.kafka())
        settings.httpIdleTimeoutSeconds = 1
        let runtime = try ServiceRuntime(settings: settings, usesPostgres: false)
        let router = Router()
        router.get("/hello") { _, _ in "hello" }
        let app = Application(router: router, configuration: runtime.httpConfiguration, logger: runtime.logger)
        try await app.test(.live) { client in
            #expect(try await client.execute(uri: "/hello", method: .get).status == .ok)
            try await Self.expectClosedWhenIdle(port: try #require(client.port))
        }
    }

    static func expectClosedWhenIdle(port: Int, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let half = try RawSocket(port: port)
        try half.sendAll(Array("GET /v1/tou".utf8))
        let silent = try RawSocket(port: port)
        let started = ContinuousClock.now
        // Generous bounds: closed at all within 10 s, and not at once (the timeout is 1 s).
        #expect(try await half.waitForClose(timeout: .seconds(10)), "half a request line: still open", sourceLocation: sourceLocation)
        #expect(try await silent.waitForClose(timeout: .seconds(10)), "nothing sent: still open", sourceLocation: sourceLocation)
        let elapsed = ContinuousClock.now - started
        #expect(elapsed > .milliseconds(500) && elapsed < .seconds(8), "closed after \(elapsed)", sourceLocation: sourceLocation)
    }

    /// The pipeline handler reads NIO's HTTP/1 head, ahead of the conversion the router's requests go through: what
    /// it leaves to the router (HTTP/1.0, a request that closes, the absolute form) must get the same answer, and
    /// what it answers must read the head as the router would (a header given twice is one list).
    @Test("HTTP/1.0, Connection: close and the absolute form get the pipeline's answer; a header given twice is one list")
    func requestShapes() async throws {
        try await FeedHTTPTests.withFeed(testing: .live) { _, client in
            let port = try #require(client.port)
            let path = "/v1/tours/\(DemoContent.tourId)"
            let expected = try await client.execute(uri: path, method: .get)
            #expect(expected.status == .ok)
            let body = String(buffer: expected.body)
            let etag = try #require(expected.headers[.eTag])

            for request in ["GET \(path) HTTP/1.0\r\n\r\n",
                            "GET \(path) HTTP/1.1\r\nHost: feed\r\nConnection: close\r\n\r\n",
                            "GET http://feed\(path) HTTP/1.1\r\nHost: feed\r\nConnection: close\r\n\r\n"] {
                let socket = try RawSocket(port: port)
                try socket.sendAll(Array(request.utf8))
                // Hummingbird leaves an HTTP/1.0 connection open: read until the body is in, not until closed.
                var received: [UInt8] = []
                let deadline = ContinuousClock.now + .seconds(20)
                while !String(decoding: received, as: UTF8.self).hasSuffix(body), ContinuousClock.now < deadline, let chunk = socket.receiveSome() {
                    if chunk.isEmpty { try await Task.sleep(for: .milliseconds(2)) } else { received += chunk }
                }
                let answer = String(decoding: received, as: UTF8.self)
                #expect(answer.hasPrefix("HTTP/1.1 200 ") || answer.hasPrefix("HTTP/1.0 200 "), "\(request): \(answer.prefix(200))")
                #expect(answer.hasSuffix("\r\n\r\n" + body), "\(request)")
                #expect(answer.contains(etag), "\(request)")
            }

            // Kept open, so answered in the pipeline; the last request closes.
            let socket = try RawSocket(port: port)
            try socket.sendAll(Array(("GET \(path) HTTP/1.1\r\nHost: feed\r\nAccept-Encoding: identity\r\nAccept-Encoding: gzip\r\nX-Request-Id:\r\n\r\n"
                                      + "GET \(path) HTTP/1.1\r\nHost: feed\r\nIf-None-Match: \"other\"\r\nIf-None-Match: \(etag)\r\n\r\n"
                                      + "GET /health HTTP/1.1\r\nHost: feed\r\nConnection: close\r\n\r\n").utf8))
            let answers = Array(try await socket.readUntilClosed(timeout: .seconds(20)).components(separatedBy: "HTTP/1.1 ").dropFirst())
            try #require(answers.count == 3, "\(answers)")
            let lines = answers[0].components(separatedBy: "\r\n").map { $0.lowercased() }
            #expect(lines.first == "200 ok")
            #expect(lines.contains("content-encoding: gzip"), "\(answers[0].prefix(600))")
            // An empty id is no id: a new one is made.
            let id = lines.first { $0.hasPrefix("x-request-id: ") }?.dropFirst("x-request-id: ".count)
            #expect(id.map { !$0.isEmpty } == true, "\(answers[0].prefix(600))")
            #expect(answers[1].hasPrefix("304 "), "\(answers[1].prefix(300))")
            #expect(answers[2].hasPrefix("200 "))
        }
    }

    /// Which requests `PipelineResponder` answers itself and which it passes on, on an `EmbeddedChannel`: what the
    /// live test above cannot tell apart, as the router gives the same answers.
    @Test("the pipeline answers a kept-open HTTP/1.1 GET in origin form of a stored route; HTTP/1.0, closing and absolute-form requests go on")
    func pipelineRouting() throws {
        let projection = CatalogProjection()
        for event in FeedHTTPTests.content { projection.apply(event) }
        _ = projection.publish()
        let producer = try KafkaProducer(configuration: TestServices.kafka(), logger: TestServices.logger)
        let ingest = EventIngest(producer: producer, topic: "unused", rateLimiter: EventRateLimiter(eventsPerMinute: 0),
                                 clientRateLimiter: EventRateLimiter(eventsPerMinute: 0))
        let routes = PipelineRoutes(FeedAPI.routes, projection: projection, ingest: ingest, serverName: "itour-feed")
        let path = "/v1/tours/\(DemoContent.tourId)"
        func head(_ version: HTTPVersion, _ uri: String, _ headers: [(String, String)]) -> HTTPRequestHead {
            HTTPRequestHead(version: version, method: .GET, uri: uri, headers: HTTPHeaders(headers))
        }
        let cases: [(HTTPRequestHead, answered: Bool)] = [
            (head(.http1_1, path, [("Host", "feed")]), true),
            (head(.http1_1, path + "?x=1", [("Host", "feed"), ("Connection", "keep-alive")]), true),
            (head(.http1_0, path, [("Connection", "keep-alive")]), false),
            (head(.http1_0, path, []), false),
            (head(.http1_1, path, [("Host", "feed"), ("Connection", "close")]), false),
            (head(.http1_1, "http://feed" + path, [("Host", "feed")]), false),
            (head(.http1_1, path, [("Host", "feed"), ("Transfer-Encoding", "chunked")]), false),
            (head(.http1_1, "/v1/tours/\(UUID())", [("Host", "feed")]), false),
        ]
        for (request, answered) in cases {
            let channel = EmbeddedChannel()
            try channel.pipeline.syncOperations.addHandler(PipelineResponder(routes: routes, idleTimeout: .seconds(30)))
            try channel.writeInbound(HTTPServerRequestPart.head(request))
            try channel.writeInbound(HTTPServerRequestPart.end(nil))
            let passedOn = try channel.readInbound(as: HTTPServerRequestPart.self)
            let written = try channel.readOutbound(as: IOData.self)
            if answered {
                #expect(passedOn == nil, "\(request)")
                guard case .byteBuffer(let bytes) = written else {
                    Issue.record("no answer written for \(request)")
                    continue
                }
                #expect(String(buffer: bytes).hasPrefix("HTTP/1.1 200 OK\r\n"), "\(request)")
            } else {
                #expect(passedOn == .head(request), "\(request)")
                #expect(written == nil, "\(request)")
            }
            _ = try channel.finish()
        }
    }

    /// 4 000 pipelined GETs of the OpenAPI document, each padded to about 4 KB (16 MB of requests), from a client
    /// that reads nothing. A server that keeps reading takes all 16 MB and queues every answer; one that stops
    /// while its channel is not writable leaves the rest in the kernel's buffers, and the client's send stalls.
    @Test("a client that never reads stops the feed reading its pipelined requests; reading resumes when it reads")
    func unreadAnswersStopReading() async throws {
        try await FeedHTTPTests.withFeed(testing: .live) { _, client in
            let port = try #require(client.port)
            let socket = try RawSocket(port: port, sendBuffer: 65_536)
            socket.setNonBlocking()
            let count = 4_000
            let request = Array("GET /openapi.json HTTP/1.1\r\nHost: feed\r\nX-Pad: \(String(repeating: "p", count: 4_000))\r\n\r\n".utf8)
            var requests: [UInt8] = []
            requests.reserveCapacity(request.count * count)
            for _ in 0..<count { requests += request }

            // Send without reading until nothing more goes for 3 s (or everything went).
            var sent = 0
            var lastProgress = ContinuousClock.now
            while sent < requests.count, ContinuousClock.now - lastProgress < .seconds(3) {
                let count = try socket.sendSome(requests, from: sent)
                if count > 0 {
                    sent += count
                    lastProgress = ContinuousClock.now
                } else {
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
            #expect(sent < requests.count / 2, "the feed read \(sent) of \(requests.count) bytes of requests from a client that reads none of its answers")

            // Now the client reads: the feed reads on and answers every request.
            var answered = 0
            var carry: [UInt8] = []
            let status = Array("HTTP/1.1 200 ".utf8)
            let deadline = ContinuousClock.now + .seconds(60)
            while answered < count, ContinuousClock.now < deadline {
                var progressed = false
                if sent < requests.count {
                    let count = try socket.sendSome(requests, from: sent)
                    sent += count
                    progressed = count > 0
                }
                if let chunk = socket.receiveSome(), !chunk.isEmpty {
                    progressed = true
                    let text = carry + chunk
                    var index = 0
                    while index + status.count <= text.count {
                        if text[index] == status[0], Array(text[index..<(index + status.count)]) == status {
                            answered += 1
                            index += status.count
                        } else {
                            index += 1
                        }
                    }
                    carry = Array(text.suffix(status.count - 1))
                }
                if !progressed { try await Task.sleep(for: .milliseconds(5)) }
            }
            #expect(sent == requests.count)
            #expect(answered == count)
        }
    }
}

/// A TCP connection to 127.0.0.1, for tests that watch what the server does to a socket.
final class RawSocket {
    let fd: Int32

    /// `sendBuffer` fixes the socket's send buffer (no autotuning), so what the kernel holds for it is small.
    init(port: Int, sendBuffer: Int? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        if var size = sendBuffer.map(Int32.init) {
            setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
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

    func setNonBlocking() {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }

    func sendAll(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw POSIXError(.EPIPE) }
            sent += count
        }
    }

    /// What a non-blocking socket takes of `bytes[offset...]` now: 0 when its buffer is full.
    func sendSome(_ bytes: [UInt8], from offset: Int) throws -> Int {
        let count = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if count >= 0 { return count }
        if errno == EAGAIN || errno == EWOULDBLOCK { return 0 }
        throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
    }

    /// What has arrived (empty when nothing has yet), or nil once the server closed.
    func receiveSome() -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 262_144)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        if count > 0 { return Array(buffer[0..<count]) }
        if count < 0, errno == EAGAIN || errno == EWOULDBLOCK { return [] }
        return nil
    }

    /// True when the server closes the connection (end of stream or reset) within `timeout`; what it sends
    /// before is dropped.
    func waitForClose(timeout: Duration) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard let chunk = receiveSome() else { return true }
            if chunk.isEmpty { try await Self.pause() }
        }
        return false
    }

    /// Everything the server sends until it closes (or `timeout`).
    func receiveUntilClosed(timeout: Duration) async throws -> [UInt8] {
        var received: [UInt8] = []
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard let chunk = receiveSome() else { break }
            if chunk.isEmpty { try await Self.pause() } else { received += chunk }
        }
        return received
    }

    func readUntilClosed(timeout: Duration) async throws -> String {
        String(decoding: try await receiveUntilClosed(timeout: timeout), as: UTF8.self)
    }

    /// Waits by sleeping, never in poll(2) or a blocking recv: the in-process services answer their router's
    /// requests on the cooperative pool (two threads on a two-core machine), which a blocked test would starve.
    private static func pause() async throws { try await Task.sleep(for: .milliseconds(2)) }
}
