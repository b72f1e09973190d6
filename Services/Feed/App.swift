import ArgumentParser
import Hummingbird
import NIOCore
import NIOPosix
import Shared

/// `feed [serve]`, `feed config [--json]`.
@main
struct FeedMain: AsyncParsableCommand {
    static let configuration = FeedProgram.rootConfiguration()
}

/// What the feed executable reads from its environment (no Postgres: the feed keeps its projection in memory).
enum FeedProgram: ServiceProgram {
    static let name = "feed"
    static let port = 8080
    // Postgres's variables too: the feed reads media files from the media store (DESIGN.md, "Media library").
    static let variables = ConfigVariable.unique(ServiceSettings.variables(defaultPort: port) + FeedSettings.variables)
    static let abstract = "The iTour feed: the phones' API, served from a projection of catalog.events; tracking events to tracking.events."

    static func serve(environment: Shared.Environment) async throws {
        GlibcMalloc.limitArenas(to: 2)
        // Run Swift concurrency on NIO's event loops, so a request's handler runs on the thread that read
        // it instead of hopping to the concurrency pool and back (a third of a GET's cost otherwise).
        // Nothing in the feed blocks a task: librdkafka calls and rendering run on Dispatch threads.
        _ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        let settings = try ServiceSettings(serviceName: name, defaultPort: port, environment: environment)
        try await buildApplication(settings: settings, feed: try FeedSettings(environment: environment)).runService(drain: .process)
    }
}
