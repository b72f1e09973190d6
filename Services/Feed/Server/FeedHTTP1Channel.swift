import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import Metrics
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import Shared
import Synchronization

/// Hummingbird's HTTP/1 channel, with a `PipelineResponder` placed right after the HTTP/1 decoder: ahead of the
/// conversion to HTTPTypes and of the router, which see only what it passes on.
struct FeedHTTP1Channel: ServerChildChannel, HTTPChannelHandler {
    typealias Value = HTTP1Channel.Value

    private let http1: HTTP1Channel
    private let makeResponder: @Sendable () -> PipelineResponder
    private let connections: ConnectionLimiter?
    var responder: HTTPChannelHandler.Responder { http1.responder }

    init(http1: HTTP1Channel, connections: ConnectionLimiter? = nil, responder makeResponder: @escaping @Sendable () -> PipelineResponder) {
        self.http1 = http1
        self.connections = connections
        self.makeResponder = makeResponder
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let admitted = connections?.admit(channel) ?? true
        return http1.setup(channel: channel, logger: logger).flatMapThrowing { [makeResponder] value in
            let pipeline = channel.pipeline.syncOperations
            if !admitted {
                // Over its address's connections: told so and closed, before any of its bytes are read.
                try pipeline.addHandler(ConnectionRefuser(), position: .first)
                return value
            }
            let decoder = try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try pipeline.addHandler(makeResponder(), position: .after(decoder))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await http1.handle(value: value, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// `.http1(configuration:)` with the feed's `PipelineResponder` in each connection's pipeline.
    static func feedHTTP1(configuration: HTTP1Channel.Configuration, connections: ConnectionLimiter? = nil,
                          responder: @escaping @Sendable () -> PipelineResponder) -> HTTPServerBuilder {
        .init { router in
            FeedHTTP1Channel(http1: HTTP1Channel(responder: router, configuration: configuration), connections: connections, responder: responder)
        }
    }
}
