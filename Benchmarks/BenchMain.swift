import ArgumentParser
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import Shared

/// `itour-bench`: benchmarks against a running suite (`make up`); prints figures, medians and percentiles.
@main
struct BenchMain: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: BenchProgram.name,
        abstract: "Benchmarks against a running iTour suite (make up); prints figures, medians and percentiles.",
        discussion: BenchProgram.environmentHelp,
        version: BuildInfo.version,
        subcommands: [ThinPath.self, AdminPath.self, GenerateCity.self, SnapshotReaders.self, FeedQueries.self, EventBodies.self, TrackingCodecCommand.self, MediaFileCommand.self, Analytics.self,
                      ConfigCommand<BenchProgram>.self])

    struct ThinPath: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "thin-path", abstract: "Command-to-feed latency of a published edit (tour.update until GET /v1/tours shows it).")
        @Option(help: "Edits to time.") var runs = 100
        func run() async throws { try await BenchProgram.runTool("thin-path") { _ in try await ThinPathBenchmark.run(runs: runs) } }
    }

    struct AdminPath: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "admin-path", abstract: "The same through the admin site's Manage Tour form, logged in as ADMIN_EMAIL.")
        @Option(help: "Edits to time.") var runs = 100
        func run() async throws { try await BenchProgram.runTool("admin-path") { _ in try await AdminPathBenchmark.run(runs: runs) } }
    }

    struct GenerateCity: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "generate-city", abstract: "A synthetic city loaded through catalog's import batches, for the feed benchmarks.")
        @Option(help: "POIs.") var pois = 100_000
        @Option(help: "Tours.") var tours = 1_000
        @Option(help: "Published calendar events.") var events = 10_000
        @Option(help: "Published people in the directory.") var people = 5_000
        @Option(help: "Seed of the city (the same seed gives the same ids).") var seed: UInt64 = 1
        @Option(help: "Import commands in flight at a time.") var window = 4
        func run() async throws {
            try await BenchProgram.runTool("generate-city") { _ in
                try await FeedCityGenerator.run(pois: pois, tours: tours, events: events, people: people, seed: seed, window: window)
            }
        }
    }

    struct SnapshotReaders: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "snapshot-readers",
            abstract: "N catalog.events readers started together: the snapshots catalog published for them and the bytes each read (issue 44).")
        @Option(help: "Readers started together.") var readers = 10
        @Option(help: "Seconds to wait for every reader to be loaded.") var timeout = 600
        func run() async throws {
            try await BenchProgram.runTool("snapshot-readers") { _ in
                try await SnapshotReadersBench.run(readers: readers, timeout: .seconds(timeout))
            }
        }
    }

    struct MediaFileCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "media-file", abstract: "Puts a file of random bytes in the media store and the library; prints its SHA-256.")
        @Option(help: "The file's size in bytes.") var bytes = 200_000
        @Option(help: ArgumentHelp("Where to write the bytes too (for nginx).", valueName: "FILE")) var out: String
        func run() async throws {
            try await BenchProgram.runTool("media-file") { _ in try await MediaFile.run(bytes: bytes, out: out) }
        }
    }

    struct FeedQueries: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "feed-queries", abstract: "Near and search: in-process (Server-Timing) and HTTP latency, one request at a time.")
        @Option(help: "Requests.") var count = 3_000
        @Option(help: ArgumentHelp("Where to write request lists for wrk (near.txt, search.txt).", valueName: "DIR")) var paths: String?
        func run() async throws {
            try await BenchProgram.runTool("feed-queries") { _ in try FeedBench.queries(count: count, pathsDirectory: paths) }
        }
    }

    struct EventBodies: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "feed-event-bodies",
            abstract: "POST /v1/events bodies, one per line, and the same events as tracking.events messages (key TAB value).")
        @Option(help: "Bodies.") var batches = 2_000
        @Option(help: "Events per body.") var batchSize = 50
        @Option(help: ArgumentHelp("The bodies' file.", valueName: "FILE")) var out: String
        @Option(help: ArgumentHelp("The messages' file.", valueName: "FILE")) var envelopes: String?
        @Option(help: "POIs of the generated city the events name (the feed refuses ids it does not know).") var pois = 100_000
        @Option(help: "Tours of the generated city the events name.") var tours = 1_000
        func run() async throws {
            try await BenchProgram.runTool("feed-event-bodies") { _ in
                try FeedEventBodies.write(batches: batches, batchSize: batchSize, pois: pois, tours: tours, to: out, envelopes: envelopes)
            }
        }
    }

    struct TrackingCodecCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "tracking-codec",
            abstract: "The feed's per-event CPU in reading, checking and writing events (the bodies of feed-event-bodies), against JSONSerialization.")
        @Option(help: ArgumentHelp("Bodies from feed-event-bodies.", valueName: "FILE")) var bodies: String
        @Option(help: "Passes over the bodies, alternating with the baseline.") var passes = 9
        func run() async throws {
            try await BenchProgram.runTool("tracking-codec") { _ in try TrackingCodecBench.run(bodiesPath: bodies, passes: passes) }
        }
    }

    /// `itour-bench analytics STEP` (scripts/bench-analytics.sh runs the steps in order).
    struct Analytics: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The analytics benchmarks.", subcommands: [Produce.self, Ingest.self, Queries.self, Lag.self])

        static func run(_ step: String, _ body: @escaping (AnalyticsBench.Settings) async throws -> Void) async throws {
            try await BenchProgram.runTool("analytics \(step)") { _ in
                LoggingSetup.bootstrap(format: .text, level: .warning)
                try await body(AnalyticsBench.Settings())
            }
        }

        struct Produce: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "N events over the last D days to tracking.events, and the same events as CSV for a Postgres COPY.")
            @Option(help: "Events.") var events = 1_000_000
            @Option(help: "Days they spread over.") var days = 90
            @Option(help: ArgumentHelp("Where to write them as CSV.", valueName: "FILE")) var csv: String?
            func run() async throws {
                try await Analytics.run("produce") { try await AnalyticsBench.produce(count: events, days: days, csv: csv, settings: $0) }
            }
        }

        struct Ingest: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Waits until analytics counted N events; events per second.")
            @Option(help: "Events.") var events = 1_000_000
            func run() async throws { try await Analytics.run("ingest") { try await AnalyticsBench.ingest(count: events, settings: $0) } }
        }

        struct Queries: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Report latency over the last D days.")
            @Option(help: "Requests per report.") var runs = 300
            @Option(help: "Days.") var days = 90
            func run() async throws {
                try await Analytics.run("queries") { try await AnalyticsBench.queries(runs: runs, days: days, settings: $0) }
            }
        }

        struct Lag: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "POST /v1/events on the feed until the summary counts it.")
            @Option(help: "Events to time.") var runs = 100
            @Option(help: "Events a second produced to tracking.events meanwhile, as a steady load (0: none).") var background = 0
            func run() async throws {
                try await Analytics.run("lag") { try await AnalyticsBench.lag(runs: runs, background: background, settings: $0) }
            }
        }
    }
}

/// What itour-bench reads from its environment: where the suite answers, and the demo credentials by default.
enum BenchProgram: Program {
    static let name = "itour-bench"
    static let variables = ConfigVariable.unique([
        .feedURL, .adminURL, .analyticsURL, .kafkaBrokers, .kafkaTopicPrefix, .benchAdminEmail, .benchAdminPassword, .benchReportsToken, .version,
    ] + CommandSignature.variables + [.demo])

    /// Kafka settings of the benchmarks' command clients, their commands signed as the admin's are (`CATALOG_COMMAND_KEY`:
    /// make up's is in .run/secrets/catalog-command-key; bench-feed.sh sets its own).
    static func commandsKafka(_ environment: Environment, clientId: String) throws -> KafkaConfiguration {
        var kafka = KafkaConfiguration(brokers: environment.string(.kafkaBrokers), clientId: clientId)
        kafka.topicPrefix = environment.string(.kafkaTopicPrefix)
        kafka.commandSignature = try CommandSignature(environment: environment)
        return kafka
    }
}

extension ConfigVariable {
    static let adminURL = optional("ADMIN_URL", default: "http://127.0.0.1:8081", "where the admin site answers")
    static let benchAdminEmail = optional("ADMIN_EMAIL", default: "admin@example.edu", "the owner admin-path logs in as")
    static let benchAdminPassword = optional("ADMIN_PASSWORD", default: "itour-demo", secret: true, "that owner's password")
    static let benchReportsToken = optional("REPORTS_TOKEN", default: "itour-demo-token", secret: true, "bearer token of the Reports API")
}

enum Statistics {
    static func percentile(_ values: [Double], _ p: Double) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        let rank = max(0, min(sorted.count - 1, Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1))
        return sorted[rank]
    }

    static func summary(_ label: String, milliseconds values: [Double]) -> String {
        String(format: "%@: n=%d median=%.1f ms p95=%.1f ms p99=%.1f ms max=%.1f ms", label, values.count,
               percentile(values, 50), percentile(values, 95), percentile(values, 99), values.max() ?? .nan)
    }
}

/// Sends `tour.update` commands for one published tour and times each until `GET /v1/tours` on the feed
/// shows the new name: catalog's transaction, the outbox relay, the broker and the feed's projection.
enum ThinPathBenchmark {
    struct TourList: Decodable {
        struct Tour: Decodable { let id: UUID; let name: String }
        let tours: [Tour]
    }

    static func run(runs: Int) async throws {
        LoggingSetup.bootstrap(format: .text, level: .warning)
        let logger = Logger(label: "bench")
        let environment = Environment()
        let feedURL = environment.string(.feedURL)
        let kafka = try BenchProgram.commandsKafka(environment, clientId: "itour-bench")
        let producer = try KafkaProducer(configuration: kafka, logger: logger)
        let startup = StartupBarrier()
        let commands = CatalogCommandClient(producer: producer, configuration: kafka, startup: startup, source: "bench", logger: logger)
        startup.open()
        let listener = Task { try await commands.run() }
        defer { listener.cancel() }

        let created = try await commands.execute(CatalogCommand(action: .createTour, actor: "bench",
                                                                 tour: TourContent(name: "Benchmark tour 0"), status: .published))
        guard created.outcome == .applied, let id = created.entityId else { throw BenchError("create failed: \(created)") }
        var samples: [Double] = []
        for run in 1...runs {
            let name = "Benchmark tour \(run)"
            let start = ContinuousClock.now
            let result = try await commands.execute(CatalogCommand(action: .updateTour, actor: "bench", entityId: id,
                                                                   tour: TourContent(name: name)))
            guard result.outcome == .applied else { throw BenchError("update failed: \(result)") }
            while try await !feedShows(id: id, name: name, feedURL: feedURL) {
                if ContinuousClock.now - start > .seconds(10) { throw BenchError("feed did not show run \(run) within 10 s") }
            }
            let elapsed = ContinuousClock.now - start
            samples.append(Double(elapsed.components.seconds) * 1_000 + Double(elapsed.components.attoseconds) / 1e15)
            FileHandle.standardError.write(Data("\rthin path: \(run)/\(runs)".utf8))
        }
        FileHandle.standardError.write(Data("\n".utf8))
        _ = try await commands.execute(CatalogCommand(action: .deleteTour, actor: "bench", entityId: id))
        print(Statistics.summary("command-to-feed latency (tour.update until GET /v1/tours shows it)", milliseconds: samples))
        await producer.shutdown()
    }

    static func feedShows(id: UUID, name: String, feedURL: String) async throws -> Bool {
        let (data, _) = try await URLSession.shared.data(from: URL(string: "\(feedURL)/v1/tours")!)
        let list = try JSONCoding.decoder.decode(TourList.self, from: data)
        return list.tours.contains { $0.id == id && $0.name == name }
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
