import Hummingbird
import NIOCore
import NIOPosix
import Shared

@main
struct FeedMain {
    static func main() async throws {
        // Run Swift concurrency on NIO's event loops, so a request's handler runs on the thread that read
        // it instead of hopping to the concurrency pool and back (a third of a GET's cost otherwise).
        // Nothing in the feed blocks a task: librdkafka calls and rendering run on Dispatch threads.
        _ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        let app = try buildApplication(settings: try ServiceSettings(serviceName: "feed", defaultPort: 8080))
        try await app.runService()
    }
}
