import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import Shared

/// Admin: the staff's web site. Reads content from its projection of `catalog.events`, writes through
/// catalog commands.
func buildApplication(settings: ServiceSettings) throws -> some ApplicationProtocol {
    let runtime = try ServiceRuntime(settings: settings, usesPostgres: true)
    let router = runtime.makeRouter(checks: runtime.readinessChecks())
    var app = Application(router: router, configuration: runtime.httpConfiguration, logger: runtime.logger)
    app.addServices(runtime.baseServices)
    app.beforeServerStarts {
        try await runtime.prepare(migrations: AdminMigrations.runner)
    }
    return app
}
