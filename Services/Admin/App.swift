import ArgumentParser
import Hummingbird
import Shared

/// `admin [serve]`, `admin config [--json]`.
@main
struct AdminMain: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: AdminProgram.name,
        abstract: "The iTour admin site: staff edit tours and POIs (through catalog's commands), read reports, see system status.",
        discussion: AdminProgram.environmentHelp,
        version: BuildInfo.version,
        subcommands: [Serve.self, ConfigCommand<AdminProgram>.self],
        defaultSubcommand: Serve.self)

    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Run the admin site (what runs with no command).")

        func run() async throws {
            try await AdminProgram.runService { environment in
                let settings = try ServiceSettings(serviceName: AdminProgram.name, defaultPort: AdminProgram.port, environment: environment)
                try await buildApplication(settings: settings, admin: try AdminSettings(environment: environment)).runService()
            }
        }
    }
}

/// What the admin executable reads from its environment (the status page's targets included).
enum AdminProgram: Program {
    static let name = "admin"
    static let port = 8081
    static let variables = ConfigVariable.unique(ServiceSettings.variables(defaultPort: port) + AdminSettings.variables + StatusTargets.variables)
}
