import NIOCore

/// Placed first in the pipeline (next to the socket) by `PipelineResponder`, which writes through its
/// context responses it has already encoded. Passes everything else on untouched.
final class SocketWriter: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    private(set) var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }
}
