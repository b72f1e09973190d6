import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Shared
import Testing
import TestSupport
@testable import Feed

/// Issue 43's findings on the feed, over real sockets: the rate limits count the client a trusted proxy names, a
/// client's connections are capped (a trusted proxy's are not), and an unreadable chunked body is a 400.
@Suite("Feed hardening (issue 43)", .serialized, .stopsIfHung)
struct FeedHardeningTests {
    static func batch(_ count: Int) -> String {
        "{\"events\": [" + (0..<count).map { _ in EventHTTPTests.event(deviceId: "fresh-\(UUID())") }.joined(separator: ",") + "]}"
    }

    /// A batch through the pipeline's fast path (the live client keeps its connection open).
    static func post(_ client: any TestClientProtocol, _ body: String, forwardedFor: String?) async throws -> HTTPResponse.Status {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let forwardedFor { headers[.xForwardedFor] = forwardedFor }
        return try await client.execute(uri: "/v1/events", method: .post, headers: headers, body: ByteBuffer(string: body)).status
    }

    /// A batch through the router (`Connection: close` is not the pipeline's).
    static func postToRouter(port: Int, _ body: String, forwardedFor: String?) async throws -> Int {
        let answer = try await TCPConnection.exchange(port: port, "POST /v1/events HTTP/1.1\r\nHost: feed\r\nConnection: close\r\nContent-Type: application/json\r\n"
                                                      + (forwardedFor.map { "X-Forwarded-For: \($0)\r\n" } ?? "")
                                                      + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)")
        return Int(answer.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    @Test("behind a trusted proxy each forwarded client has its own allowance, in the pipeline and in the router")
    func forwardedClients() async throws {
        try await FeedHTTPTests.withFeed(eventsPerMinute: 0, eventsPerMinutePerClient: 10, testing: .live, configure: {
            $0.trustedProxies = try! TrustedProxies("127.0.0.0/8,::1/128")
        }) { _, client in
            let port = try #require(client.port)
            #expect(try await Self.post(client, Self.batch(6), forwardedFor: "198.51.100.7") == .accepted)
            #expect(try await Self.post(client, Self.batch(6), forwardedFor: "198.51.100.7") == .tooManyRequests)
            // A spoofed address left of the proxy's entry changes nothing: the right-most untrusted one is the client.
            #expect(try await Self.post(client, Self.batch(6), forwardedFor: "203.0.113.1, 198.51.100.7") == .tooManyRequests)
            #expect(try await Self.postToRouter(port: port, Self.batch(6), forwardedFor: "198.51.100.7") == 429)
            // Others behind the same proxy, on the same connection: their own allowance.
            #expect(try await Self.post(client, Self.batch(6), forwardedFor: "198.51.100.8") == .accepted)
            #expect(try await Self.postToRouter(port: port, Self.batch(6), forwardedFor: "198.51.100.9") == 202)
            // A chain of trusted proxies: the first untrusted address from the right.
            #expect(try await Self.post(client, Self.batch(6), forwardedFor: "198.51.100.10, 127.0.0.5") == .accepted)
            #expect(try await Self.post(client, Self.batch(6), forwardedFor: "198.51.100.10") == .tooManyRequests)
        }
    }

    @Test("without trusted proxies X-Forwarded-For is ignored: fresh forwarded addresses do not escape the allowance")
    func untrustedForwardedFor() async throws {
        try await FeedHTTPTests.withFeed(eventsPerMinute: 0, eventsPerMinutePerClient: 10, testing: .live) { _, client in
            let port = try #require(client.port)
            #expect(try await Self.post(client, Self.batch(6), forwardedFor: "198.51.100.1") == .accepted)
            #expect(try await Self.post(client, Self.batch(6), forwardedFor: "198.51.100.2") == .tooManyRequests)
            #expect(try await Self.postToRouter(port: port, Self.batch(6), forwardedFor: "198.51.100.3") == 429)
        }
    }

    @Test("one address holds at most FEED_MAX_CONNECTIONS_PER_CLIENT connections; more get 503 and are closed; a closed one frees its place")
    func connectionCap() async throws {
        try await FeedHTTPTests.withFeed(testing: .live, configure: { $0.maxConnectionsPerClient = 4 }) { _, client in
            let port = try #require(client.port)
            // The test client holds one or so; idle ones fill the rest, and the next is told no and closed.
            var held: [TCPConnection] = []
            var refused: (text: String, closed: Bool)?
            for _ in 0..<8 {
                let connection = try TCPConnection(port: port)
                let answer = await connection.receive(timeout: .milliseconds(400))
                if answer.closed {
                    refused = answer
                    break
                }
                held.append(connection)
            }
            #expect((2...4).contains(held.count), "\(held.count) held")
            #expect(refused?.text.hasPrefix("HTTP/1.1 503") == true, "\(String(describing: refused))")
            #expect(try await client.execute(uri: "/health", method: .get).status == .ok, "the connections it has still work")
            held.removeFirst()  // closed: its place is free again
            try await Task.sleep(for: .milliseconds(300))
            let again = try await TCPConnection.exchange(port: port, "GET /health HTTP/1.1\r\nHost: feed\r\nConnection: close\r\n\r\n")
            #expect(again.hasPrefix("HTTP/1.1 200"), "\(again.prefix(200))")
            withExtendedLifetime(held) {}
        }
    }

    @Test("a trusted proxy's connections are not capped: behind an ingress every connection comes from it")
    func proxyConnectionsUncapped() async throws {
        try await FeedHTTPTests.withFeed(testing: .live, configure: {
            $0.maxConnectionsPerClient = 2
            $0.trustedProxies = try! TrustedProxies("127.0.0.1/32")
        }) { _, client in
            let port = try #require(client.port)
            let held = try (0..<5).map { _ in try TCPConnection(port: port) }
            let answer = try await TCPConnection.exchange(port: port, "GET /health HTTP/1.1\r\nHost: feed\r\nConnection: close\r\n\r\n")
            #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer.prefix(200))")
            withExtendedLifetime(held) {}
        }
    }

    @Test("an invalid chunk-size line is a 400, not a 500")
    func invalidChunkSize() async throws {
        try await FeedHTTPTests.withFeed(testing: .live) { _, client in
            let port = try #require(client.port)
            let answer = try await TCPConnection.exchange(port: port, "POST /v1/events HTTP/1.1\r\nHost: feed\r\nContent-Type: application/json\r\n"
                                                          + "Transfer-Encoding: chunked\r\n\r\nzz-not-a-size\r\n{}\r\n0\r\n\r\n")
            #expect(answer.hasPrefix("HTTP/1.1 400"), "\(answer.prefix(300))")
            #expect(answer.contains("could not be read"))
        }
    }
}
