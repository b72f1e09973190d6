import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import Shared

/// Feed: the phones' API. Reads come from an in-memory projection of `catalog.events`.
func buildApplication(settings: ServiceSettings) throws -> some ApplicationProtocol {
    let runtime = try ServiceRuntime(settings: settings, usesPostgres: false)
    let logger = runtime.logger
    let projection = CatalogProjection()
    let commands = CatalogCommandClient(producer: runtime.producer, configuration: settings.kafka, startup: runtime.startup,
                                        source: "feed", logger: logger)
    let events = CatalogEventFeed(configuration: settings.kafka, startup: runtime.startup, commands: commands,
                                  deadLetters: DeadLetterSink(producer: runtime.producer, consumerName: "feed", logger: logger),
                                  source: "feed", logger: logger) { envelope in
        projection.apply(envelope.data)
    }
    let router = runtime.makeRouter(checks: runtime.readinessChecks([ReadinessCheck("projection") { events.isLoaded }]))
    FeedRoutes(projection: projection).register(on: router)
    var app = Application(router: router, configuration: runtime.httpConfiguration, logger: logger)
    app.addServices(runtime.baseServices)
    app.addServices(commands, events)
    app.beforeServerStarts {
        try await runtime.prepare(migrations: nil)
    }
    return app
}
