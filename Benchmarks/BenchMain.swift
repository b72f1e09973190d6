import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import Shared

/// Benchmarks against a running suite (`make up`): prints figures, medians and percentiles.
/// `itour-bench thin-path [--runs N]`: command-to-feed latency of a published edit.
/// `itour-bench admin-path [--runs N]`: the same through the admin site's Manage Tour form.
@main
struct BenchMain {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let runs = arguments.firstIndex(of: "--runs").flatMap { $0 + 1 < arguments.count ? Int(arguments[$0 + 1]) : nil } ?? 100
        do {
            switch arguments.first {
            case "thin-path": try await ThinPathBenchmark.run(runs: runs)
            case "admin-path": try await AdminPathBenchmark.run(runs: runs)
            case "generate-city", "feed-queries", "feed-event-bodies": try await FeedBench.run(arguments)
            case "analytics": try await AnalyticsBench.run(Array(arguments.dropFirst()))
            default:
                print("usage: itour-bench thin-path|admin-path [--runs N] | generate-city|feed-queries|feed-event-bodies … | analytics …")
                exit(64)
            }
        } catch {
            // A failed benchmark says why and exits 1, instead of the runtime's crash report.
            FileHandle.standardError.write(Data("itour-bench \(arguments.first ?? ""): \(error)\n".utf8))
            exit(1)
        }
    }
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
        LoggingSetup.bootstrap(format: "text", level: "warning")
        let logger = Logger(label: "bench")
        let environment = Environment()
        let feedURL = environment.string("FEED_URL", default: "http://127.0.0.1:8080")
        var kafka = KafkaConfiguration(brokers: environment.string("KAFKA_BROKERS", default: "127.0.0.1:9092"), clientId: "itour-bench")
        kafka.topicPrefix = environment.string("KAFKA_TOPIC_PREFIX", default: "")
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
