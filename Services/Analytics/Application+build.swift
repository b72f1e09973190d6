import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import Shared

/// Analytics: folds `tracking.events` into report tables and serves the Reports API.
func buildApplication(settings: ServiceSettings) throws -> some ApplicationProtocol {
    let runtime = try ServiceRuntime(settings: settings, usesPostgres: true)
    let router = runtime.makeRouter(checks: runtime.readinessChecks())
    var app = Application(router: router, configuration: runtime.httpConfiguration, logger: runtime.logger)
    app.addServices(runtime.baseServices)
    app.beforeServerStarts {
        try await runtime.prepare(migrations: AnalyticsMigrations.runner)
    }
    return app
}
