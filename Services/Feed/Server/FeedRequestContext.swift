import Hummingbird
import NIOCore

/// The feed's request context: Hummingbird's basic one and the client's address, which `POST /v1/events` is
/// limited by (`EventIngest.clientKey`), as `PipelineResponder` takes it from its channel.
struct FeedRequestContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}
