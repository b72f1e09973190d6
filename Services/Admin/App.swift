import ArgumentParser
import Hummingbird
import Shared

/// `admin [serve]`, `admin config [--json]`.
@main
struct AdminMain: AsyncParsableCommand {
    static let configuration = AdminProgram.rootConfiguration()
}

/// What the admin executable reads from its environment (the status page's targets included).
enum AdminProgram: ServiceProgram {
    static let name = "admin"
    static let port = 8081
    static let variables = ConfigVariable.unique(ServiceSettings.variables(defaultPort: port) + AdminSettings.variables + StatusTargets.variables
                                                 + CommandSignature.variables)
    static let abstract = "The iTour admin site: staff edit tours and POIs (through catalog's commands), read reports, see system status."

    static func serve(environment: Shared.Environment) async throws {
        var settings = try ServiceSettings(serviceName: name, defaultPort: port, environment: environment)
        settings.kafka.commandSignature = try CommandSignature(environment: environment)
        try await buildApplication(settings: settings, admin: try AdminSettings(environment: environment)).runService(drain: .process)
    }
}
