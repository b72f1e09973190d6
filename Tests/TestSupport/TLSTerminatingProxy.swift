import NIOCore
import NIOPosix
import NIOSSL

/// A TLS server on a free loopback port that relays each connection, decrypted, to a plain TCP port: what puts
/// a broker that speaks no TLS itself (tansu 0.6.0) behind TLS, as a load balancer or a sidecar would. The broker
/// must advertise the proxy's address, so that clients come back through it after the bootstrap.
public final class TLSTerminatingProxy: Sendable {
    public let port: Int
    private let channel: any Channel

    private init(port: Int, channel: any Channel) {
        self.port = port
        self.channel = channel
    }

    /// Serves `certificate` (PEM chain) with `key` and relays to `127.0.0.1:upstreamPort`, which need not be open yet:
    /// each connection connects upstream when it arrives, and is closed when either side closes or fails (a refused
    /// handshake, a broker gone). With `clientAuthority`, only clients presenting a certificate it signed get through
    /// (mutual TLS, as brokers that authenticate clients by certificate do).
    public static func start(certificate: String, key: String, upstreamPort: Int, clientAuthority: String? = nil) async throws -> TLSTerminatingProxy {
        let chain = try NIOSSLCertificate.fromPEMFile(certificate).map { NIOSSLCertificateSource.certificate($0) }
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain,
                                                                     privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem)))
        if let clientAuthority {
            configuration.certificateVerification = .noHostnameVerification
            configuration.trustRoots = .file(clientAuthority)
        }
        let context = try NIOSSLContext(configuration: configuration)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                    try channel.pipeline.syncOperations.addHandler(UpstreamConnector(upstreamPort: upstreamPort))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        guard let port = channel.localAddress?.port else { throw TestProcessError(description: "proxy: no local port") }
        return TLSTerminatingProxy(port: port, channel: channel)
    }

    /// Stops accepting connections. Those relayed already end when either side closes.
    public func stop() async {
        try? await channel.close()
    }
}

/// On the client's (decrypted) side: connects upstream when the client connects, keeps what the client sends
/// meanwhile, then glues the two channels together and steps aside.
private final class UpstreamConnector: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    private let upstreamPort: Int
    private var pending: [NIOAny] = []

    init(upstreamPort: Int) {
        self.upstreamPort = upstreamPort
    }

    func channelActive(context: ChannelHandlerContext) {
        // On the client's event loop, so that both channels of the pair share one and glue synchronously.
        ClientBootstrap(group: context.eventLoop)
            .connect(host: "127.0.0.1", port: upstreamPort)
            .assumeIsolated()
            .whenComplete { result in
                switch result {
                case .success(let upstream): self.glue(upstream, context: context)
                case .failure: context.close(promise: nil)
                }
            }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        pending.append(data)
    }

    private func glue(_ upstream: any Channel, context: ChannelHandlerContext) {
        let (client, server) = GlueHandler.matchedPair()
        do {
            try context.pipeline.syncOperations.addHandler(client, position: .after(self))
            try upstream.pipeline.syncOperations.addHandler(server)
        } catch {
            context.close(promise: nil)
            upstream.close(promise: nil)
            return
        }
        for data in pending { context.fireChannelRead(data) }
        pending = []
        context.fireChannelReadComplete()
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}

/// Half of a pair that relays what one channel reads to the other, with back-pressure (a channel is read only while
/// its partner can write), and closes both when either closes or fails. After swift-nio's connect-proxy example.
private final class GlueHandler: ChannelDuplexHandler {
    typealias InboundIn = NIOAny
    typealias OutboundIn = NIOAny
    typealias OutboundOut = NIOAny

    private var partner: GlueHandler?
    private var context: ChannelHandlerContext?
    private var pendingRead = false

    static func matchedPair() -> (GlueHandler, GlueHandler) {
        let first = GlueHandler(), second = GlueHandler()
        first.partner = second
        second.partner = first
        return (first, second)
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        partner = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) { partner?.context?.write(data, promise: nil) }
    func channelReadComplete(context: ChannelHandlerContext) { partner?.context?.flush() }
    func channelInactive(context: ChannelHandlerContext) { partner?.context?.close(promise: nil) }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        partner?.context?.close(promise: nil)
        context.close(promise: nil)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { partner?.partnerBecameWritable() }
        context.fireChannelWritabilityChanged()
    }

    func read(context: ChannelHandlerContext) {
        if partner?.context?.channel.isWritable ?? false {
            context.read()
        } else {
            pendingRead = true
        }
    }

    private func partnerBecameWritable() {
        guard pendingRead, let context else { return }
        pendingRead = false
        context.read()
    }
}
