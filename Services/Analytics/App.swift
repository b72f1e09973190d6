import ArgumentParser
import Hummingbird
import Shared

/// `analytics [serve]`, `analytics replay …`, `analytics config [--json]`.
@main
struct AnalyticsMain: AsyncParsableCommand {
    static let configuration = AnalyticsProgram.rootConfiguration(others: [Replay.self])

    struct Replay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Rebuild every report into fresh tables, or swap rebuilt tables in.",
            discussion: """
            Give one of --from-beginning, --file, --activate. A rebuild drops and recreates the schema, so report \
            definitions that changed apply to every event kept; --activate then swaps it in under a running service.
            """)

        @Flag(help: "Count tracking.events from its beginning (up to its end now) into fresh tables in the schema.")
        var fromBeginning = false

        @Option(help: ArgumentHelp("The same from a file, one event (or envelope) per line.", valueName: "EVENTS.jsonl"))
        var file: String?

        @Flag(help: "Swap the schema in for the live analytics schema (kept as analytics_previous_<time>); a running service follows.")
        var activate = false

        @Option(help: ArgumentHelp("Schema of the rebuilt tables: lowercase letters and underscores, not analytics.", valueName: "S"))
        var schema = AnalyticsSchema.replay.name

        func validate() throws {
            guard [fromBeginning, file != nil, activate].filter({ $0 }).count == 1 else {
                throw ValidationError("give one of --from-beginning, --file, --activate")
            }
            guard let named = AnalyticsSchema(schema) else {
                throw ValidationError("--schema needs a name of lowercase letters and underscores")
            }
            guard named != .live else { throw ValidationError("the replay schema must not be the live one (analytics)") }
        }

        func run() async throws {
            let schema = AnalyticsSchema(schema)!
            let command: ReplayTool.Command = if let file { .file(file, schema) } else if activate { .activate(schema) } else { .fromBeginning(schema) }
            try await AnalyticsProgram.runTool("replay") { environment in
                let settings = try ServiceSettings(serviceName: AnalyticsProgram.name, defaultPort: AnalyticsProgram.port, environment: environment)
                try await ReplayTool(command: command, settings: settings, pseudonyms: try IdPseudonyms(environment: environment)).run()
            }
        }
    }
}

/// What the analytics executable reads from its environment.
enum AnalyticsProgram: ServiceProgram {
    static let name = "analytics"
    static let port = 8083
    static let variables = ConfigVariable.unique(ServiceSettings.variables(defaultPort: port) + AnalyticsOptions.variables)
    static let abstract = "iTour analytics: counts tracking.events into report tables and serves the Reports API."

    static func serve(environment: Shared.Environment) async throws {
        let settings = try ServiceSettings(serviceName: name, defaultPort: port, environment: environment)
        try await buildApplication(settings: settings, options: try AnalyticsOptions(environment: environment)).runService(drain: .process)
    }
}
