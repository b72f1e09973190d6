import Foundation
import Metrics
import NIOCore
import Shared
import Synchronization

/// First in the pipeline of a connection over its address's limit: answers `503` with `Retry-After` and closes it.
final class ConnectionRefuser: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    private var done = false

    static let answer = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nRetry-After: 10\r\n"
        + "Connection: close\r\nContent-Length: 48\r\n\r\nToo many connections from this address at once.\n"

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { refuse(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        refuse(context: context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Nothing it sends is read.
    }

    private func refuse(context: ChannelHandlerContext) {
        guard !done else { return }
        done = true
        let buffer = context.channel.allocator.buffer(string: Self.answer)
        // A flush writes to the socket at once; what the kernel does not take is dropped with the connection.
        context.writeAndFlush(NIOAny(buffer), promise: nil)
        context.close(promise: nil)
    }
}
