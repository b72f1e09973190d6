import ArgumentParser
import Hummingbird
import NIOCore
import NIOPosix
import Shared

/// `feed [serve]`, `feed config [--json]`.
@main
struct FeedMain: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: FeedProgram.name,
        abstract: "The iTour feed: the phones' API, served from a projection of catalog.events; tracking events to tracking.events.",
        discussion: FeedProgram.environmentHelp,
        version: BuildInfo.version,
        subcommands: [Serve.self, ConfigCommand<FeedProgram>.self],
        defaultSubcommand: Serve.self)

    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Run the feed service (what runs with no command).")

        func run() async throws {
            // Run Swift concurrency on NIO's event loops, so a request's handler runs on the thread that read
            // it instead of hopping to the concurrency pool and back (a third of a GET's cost otherwise).
            // Nothing in the feed blocks a task: librdkafka calls and rendering run on Dispatch threads.
            _ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
            try await FeedProgram.runService { environment in
                let settings = try ServiceSettings(serviceName: FeedProgram.name, defaultPort: FeedProgram.port, usesPostgres: false,
                                                   environment: environment)
                try await buildApplication(settings: settings, feed: try FeedSettings(environment: environment)).runService()
            }
        }
    }
}

/// What the feed executable reads from its environment (no Postgres: the feed keeps its projection in memory).
enum FeedProgram: Program {
    static let name = "feed"
    static let port = 8080
    static let variables = ConfigVariable.unique(ServiceSettings.variables(defaultPort: port, usesPostgres: false) + FeedSettings.variables)
}
