import Foundation
import Hummingbird
import Shared

@main
struct AnalyticsMain {
    static func main() async throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        do {
            let settings = try ServiceSettings(serviceName: "analytics", defaultPort: 8083)
            switch arguments.first {
            case nil, "serve":
                let app = try buildApplication(settings: settings, options: try AnalyticsOptions())
                try await app.runService()
            case "replay":
                try await ReplayTool(command: try ReplayTool.Command(arguments: Array(arguments.dropFirst())), settings: settings).run()
            default:
                throw UsageError()
            }
        } catch let error as UsageError {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            exit(64)
        } catch let error as ConfigurationError {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            exit(78)
        }
    }
}

struct UsageError: Error, CustomStringConvertible {
    var detail: String?

    var description: String {
        (detail.map { "analytics: \($0)\n" } ?? "") + """
        usage: analytics [serve]                          run the analytics service
               analytics replay --from-beginning [--schema S]
                                                          count tracking.events from its beginning into fresh tables
                                                          in schema S (default analytics_replay)
               analytics replay --file EVENTS.jsonl [--schema S]
                                                          the same from a file, one event (or envelope) per line
               analytics replay --activate [--schema S]   swap S in for the live analytics schema (kept as
                                                          analytics_previous_<time>); a running service follows
        """
    }
}
