import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import Shared

/// Catalog: the system of record for content. It consumes `catalog.commands`, applies each in one
/// Postgres transaction with its outbox rows, and relays the outbox to `catalog.events` and
/// `catalog.command-results`. HTTP only for health, readiness and metrics.
/// `snapshotWindow`: how long catalog gathers snapshot requests to answer them with one snapshot (`CATALOG_SNAPSHOT_WINDOW_MS`).
func buildApplication(settings: ServiceSettings, snapshotWindow: Duration = CommandConsumer.defaultSnapshotWindow) throws -> some ApplicationProtocol {
    let runtime = try ServiceRuntime(settings: settings, usesPostgres: true)
    let postgres = runtime.postgres!
    let logger = runtime.logger
    let repository = PostgresCatalogRepository(client: postgres, logger: logger)
    let relay = OutboxRelay(repository: repository, producer: runtime.producer, logger: logger)
    let eventsTopic = settings.kafka.topic(Topic.catalogEvents)
    let producer = runtime.producer
    let handler = CatalogCommandHandler(
        repository: repository, topics: settings.kafka,
        eventPartitions: { try await producer.partitionCounts(topics: [eventsTopic])[eventsTopic] ?? 1 },
        producer: producer, logger: logger)
    guard let signature = settings.kafka.commandSignature else {
        throw ConfigurationError(name: ConfigVariable.catalogCommandKey.name, message: "is required: catalog applies only signed commands")
    }
    let commands = CommandConsumer(signature: signature, makeConsumer: {
                                       try await KafkaConsumer.open(configuration: settings.kafka,
                                                                    subscription: .group(id: settings.kafka.topic("catalog"),
                                                                                         topics: [settings.kafka.topic(Topic.catalogCommands)]),
                                                                    logger: logger, name: "catalog-commands")
                                   }, handler: handler, relay: relay,
                                   deadLetters: DeadLetterSink(producer: runtime.producer, consumerName: "catalog", logger: logger),
                                   logger: logger, snapshotWindow: snapshotWindow)

    let commandsLag = try LagWatch.watching(commands.progress, name: "catalog-commands", topic: settings.kafka.topic(Topic.catalogCommands),
                                            configuration: settings.kafka, logger: logger)
    let router = runtime.makeRouter(checks: runtime.readinessChecks([commandsLag.watch.readinessCheck]), beforeScrape: {
        await relay.recordBacklog()
        await commands.recordLag(consumerName: "catalog-commands")
    })
    var app = Application(router: router, configuration: runtime.httpConfiguration, logger: logger)
    app.addServices(runtime.baseServices)
    app.addServices(AfterStartup(runtime.startup, relay), AfterStartup(runtime.startup, commands),
                    AfterStartup(runtime.startup, CatalogEventsWatch(relay: relay, handler: handler, logger: logger)),
                    AfterStartup(runtime.startup, commandsLag.ends), AfterStartup(runtime.startup, commandsLag.watch),
                    AfterStartup(runtime.startup, SnapshotCacheWarmer(handler: handler, logger: logger)),
                    AfterStartup(runtime.startup, TourScheduler(repository: repository, handler: handler, relay: relay, logger: logger)))
    app.beforeServerStarts {
        try await runtime.prepare(migrations: [CatalogMigrations.runner])
    }
    return app
}
