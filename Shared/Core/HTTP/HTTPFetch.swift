import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// A small HTTP/1.1 GET for service-to-service calls (the admin reading analytics reports and every
/// service's health): one connection per request, a hard timeout, the body in memory. Enough for a few
/// calls a second between services; not a general client.
public enum HTTPFetch {
    public struct Response: Sendable {
        public let status: Int
        public let headers: [(String, String)]
        public let body: [UInt8]

        public func header(_ name: String) -> String? {
            headers.first { $0.0.caseInsensitiveCompare(name) == .orderedSame }?.1
        }

        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    public enum FetchError: Error, CustomStringConvertible {
        case badURL(String)
        case tooLarge(Int)
        case incomplete

        public var description: String {
            switch self {
            case .badURL(let url): "not an http URL: \(url)"
            case .tooLarge(let limit): "response larger than \(limit) bytes"
            case .incomplete: "connection closed before the response ended"
            }
        }
    }

    /// GETs `url` (http only), failing after `timeout` whatever the other side does.
    public static func get(_ url: String, headers: [(String, String)] = [], timeout: Duration = .seconds(2),
                           maxBodyBytes: Int = 16 << 20) async throws -> Response {
        guard let components = URLComponents(string: url), components.scheme == "http", let host = components.host else {
            throw FetchError.badURL(url)
        }
        let port = components.port ?? 80
        var path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let query = components.percentEncodedQuery { path += "?" + query }
        let requestPath = path
        return try await withTimeout(timeout) {
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(.milliseconds(Int64(timeout.components.seconds * 1_000 + timeout.components.attoseconds / 1_000_000_000_000_000)))
                .connect(host: host, port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(wrappingChannelSynchronously: channel)
                    }
                }
            return try await channel.executeThenClose { inbound, outbound in
                var head = HTTPHeaders([("Host", "\(host):\(port)"), ("Connection", "close"), ("Accept-Encoding", "identity")])
                for (name, value) in headers { head.add(name: name, value: value) }
                try await outbound.write(.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: requestPath, headers: head)))
                try await outbound.write(.end(nil))
                var status = 0
                var responseHeaders: [(String, String)] = []
                var body: [UInt8] = []
                for try await part in inbound {
                    switch part {
                    case .head(let response):
                        status = Int(response.status.code)
                        responseHeaders = response.headers.map { ($0.name, $0.value) }
                    case .body(let buffer):
                        body += buffer.readableBytesView
                        if body.count > maxBodyBytes { throw FetchError.tooLarge(maxBodyBytes) }
                    case .end:
                        return Response(status: status, headers: responseHeaders, body: body)
                    }
                }
                throw FetchError.incomplete
            }
        }
    }
}
