import ArgumentParser
import Hummingbird
import Shared

/// `catalog [serve]`, `catalog import FILE [--skip-bad-rows]`, `catalog load-demo FILE`, `catalog config [--json]`.
@main
struct CatalogMain: AsyncParsableCommand {
    static let configuration = CatalogProgram.rootConfiguration(others: [Import.self, LoadDemo.self])

    struct ImportOptions: ParsableArguments {
        @Argument(help: ArgumentHelp("A .json file in the demo file's format, or a .csv file.", valueName: "FILE"))
        var file: String

        @Flag(help: "Import the rows that are good and report the others (without it: all or nothing).")
        var skipBadRows = false

        func run(_ command: String) async throws {
            try await CatalogProgram.runTool(command) { environment in
                var settings = try ServiceSettings(serviceName: CatalogProgram.name, defaultPort: CatalogProgram.port, environment: environment)
                settings.kafka.commandSignature = try CommandSignature(environment: environment)
                try await ContentImport.run(file: file, skipBadRows: skipBadRows, settings: settings)
            }
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import the tours, POIs and categories of FILE through catalog.import commands.",
            discussion: """
            The rows go to a running catalog over the broker, as the admin's import page sends them: a file that fits \
            one command (2 000 rows, 900 kB) all or nothing, or with --skip-bad-rows the good rows; a bigger file as \
            several commands in turn, each all or nothing (importing the file again completes one that stopped). \
            Prints a report per failed row; exits 1 unless every row was applied.
            """)

        @OptionGroup var options: ImportOptions

        func run() async throws { try await options.run("import") }
    }

    struct LoadDemo: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "load-demo", abstract: "The same as import, for the demo content (deploy/demo/uncw-itour.json).")

        @OptionGroup var options: ImportOptions

        func run() async throws { try await options.run("load-demo") }
    }
}

/// What the catalog executable reads from its environment.
enum CatalogProgram: ServiceProgram {
    static let name = "catalog"
    static let port = 8082
    static let variables = ConfigVariable.unique(ServiceSettings.variables(defaultPort: port) + CommandSignature.variables
                                                 + [.demo, .catalogSnapshotWindowMs])
    static let abstract = "The iTour catalog: applies catalog.commands to tours, POIs and categories and publishes catalog.events."

    static func serve(environment: Shared.Environment) async throws {
        var settings = try ServiceSettings(serviceName: name, defaultPort: port, environment: environment)
        settings.kafka.commandSignature = try CommandSignature(environment: environment)
        let window = try environment.int(.catalogSnapshotWindowMs, in: 0...60_000, unit: "milliseconds")
        try await buildApplication(settings: settings, snapshotWindow: .milliseconds(window)).runService(drain: .process)
    }
}

extension ConfigVariable {
    /// DESIGN.md "One snapshot for many readers".
    static let catalogSnapshotWindowMs = optional(
        "CATALOG_SNAPSHOT_WINDOW_MS", default: "1000",
        "how long catalog gathers readers' snapshot requests to answer them with one snapshot, 0 to 60000 (0: each request its own)")
}
