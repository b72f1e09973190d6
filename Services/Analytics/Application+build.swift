import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import Shared

/// What analytics reads from its environment beyond ServiceSettings.
struct AnalyticsOptions: Sendable {
    /// The bearer token of the Reports API (`REPORTS_TOKEN`; the demo value in demo mode).
    var reportsToken: String
    /// The bearer token of `DELETE /v1/devices/{deviceId}` (`ERASURE_TOKEN`; empty: erasures are not enabled).
    var erasureToken = ""
    /// How device and tourist ids are stored (`ANALYTICS_ID_KEY`; the demo key in demo mode, else required).
    var pseudonyms: IdPseudonyms
    var ingest = TrackingIngest.Options()
    /// How long the ingest's lag may wait without shrinking before it is degraded (`CONSUMER_STALL_SECONDS`, 30).
    var stallWindow: Duration = .seconds(30)
    /// `TRUSTED_PROXIES`: who the client of a report request is, for the wrong-token throttle.
    var trustedProxies = TrustedProxies.none
    /// `REPORTS_TOKEN_FAILURES_PER_MINUTE` (10): wrong tokens a client may send in a minute before it waits (0: no limit).
    var tokenFailuresPerMinute = AnalyticsOptions.defaultTokenFailuresPerMinute
    /// `ANALYTICS_RETENTION_DAYS` (400) and the dedupe window: what pruning keeps.
    var retention = RetentionPolicy()
    static let defaultTokenFailuresPerMinute = 10

    init(reportsToken: String, pseudonyms: IdPseudonyms) {
        self.reportsToken = reportsToken
        self.pseudonyms = pseudonyms
    }

    /// The variables `init(environment:)` reads.
    static let variables: [ConfigVariable] = [.reportsToken, .analyticsIdKey, .demo, .analyticsBatchSize, .consumerStallSeconds, .reportsTokenFailuresPerMinute, .analyticsRetentionDays, .erasureToken]
        + TrustedProxies.variables

    init(environment: Shared.Environment = Shared.Environment()) throws {
        reportsToken = try environment.required(.reportsToken)
        pseudonyms = try IdPseudonyms(environment: environment)
        ingest.batchSize = try environment.int(.analyticsBatchSize)
        stallWindow = .seconds(try environment.int(.consumerStallSeconds))
        trustedProxies = try TrustedProxies(environment: environment)
        tokenFailuresPerMinute = try environment.int(.reportsTokenFailuresPerMinute, in: 0...1_000_000, unit: "wrong tokens a minute")
        retention.eventDays = try environment.int(.analyticsRetentionDays, in: RetentionPolicy.minimumEventDays...RetentionPolicy.maximumDays, unit: "days")
        erasureToken = environment.string(.erasureToken)
        guard !erasureToken.hasPrefix("CHANGE-ME") else {
            throw ConfigurationError(name: ConfigVariable.erasureToken.name, message: "is the secret template's placeholder; set a token of your own")
        }
        guard erasureToken.isEmpty || erasureToken != reportsToken else {
            throw ConfigurationError(name: ConfigVariable.erasureToken.name, message: "must differ from REPORTS_TOKEN: erasing needs more than reading reports")
        }
    }
}

extension ConfigVariable {
    static let analyticsBatchSize = optional(
        "ANALYTICS_BATCH_SIZE", default: String(TrackingIngest.Options().batchSize), "tracking events the ingest reads and counts per transaction")
    static let erasureToken = optional(
        "ERASURE_TOKEN", default: "", secret: true,
        "bearer token of DELETE /v1/devices/{deviceId}, the erasure of a device (staff only; not the reports token); empty: erasures are not enabled")
    static let reportsTokenFailuresPerMinute = optional(
        "REPORTS_TOKEN_FAILURES_PER_MINUTE", default: String(AnalyticsOptions.defaultTokenFailuresPerMinute),
        "wrong reports tokens one client may send in a minute, per analytics replica, before its requests get 429 until the minute is over (0: no limit)")
}

/// Analytics: folds `tracking.events` into report tables (Ingest/) and serves the Reports API (Reports/).
/// Tour and POI names come from `catalog.events`.
func buildApplication(settings: ServiceSettings, options: AnalyticsOptions) throws -> some ApplicationProtocol {
    let runtime = try ServiceRuntime(settings: settings, usesPostgres: true)
    let postgres = runtime.postgres!
    let logger = runtime.logger
    let store = PostgresIngestStore(client: postgres, schema: .live, logger: logger)
    let deadLetters = DeadLetterSink(producer: runtime.producer, consumerName: "analytics", logger: logger)
    let ingest = TrackingIngest(configuration: settings.kafka, store: store, deadLetters: deadLetters, pseudonyms: options.pseudonyms,
                                options: options.ingest, logger: logger)
    // Opens once the rows stored before ids were hashed are converted (IdConversion, a service once the server is up): the
    // ingest and the pruning wait for it, readiness reports it, and erasures are refused before it (they would miss the
    // rows still unconverted).
    let idsConverted = StartupBarrier()

    let commands = CatalogCommandClient(producer: runtime.producer, configuration: settings.kafka, startup: runtime.startup,
                                        source: "analytics", logger: logger)
    let names = CatalogEventFeed(configuration: settings.kafka, startup: runtime.startup, commands: commands, deadLetters: deadLetters,
                                 source: "analytics", logger: logger, handler: { events in
        // A deletion keeps the name: reports over past days still show what was visited.
        try await store.saveNames(events.compactMap { event in
            if let tour = event.tour, event.kind == .tourChanged {
                CatalogName(entityId: tour.id, kind: "tour", name: tour.content.name, version: tour.version, stops: tour.stops)
            } else if let poi = event.poi, event.kind == .poiChanged {
                CatalogName(entityId: poi.id, kind: "poi", name: poi.content.name, version: poi.version, stops: nil)
            } else {
                nil
            }
        })
    }, recordHandlers: CatalogRecordHandler.every(RecordNames(store: store), of: ReportedRecords.all))

    let trackingEnds = try KafkaTopicEnds(topic: settings.kafka.topic(Topic.trackingEvents), configuration: settings.kafka, logger: logger)
    let lagWatch = IngestLagWatch.make(ends: trackingEnds, store: store, window: options.stallWindow, logger: logger)
    let namesLag = try LagWatch.watching(names.progress, name: "analytics-catalog-events", topic: settings.kafka.topic(Topic.catalogEvents),
                                         configuration: settings.kafka, logger: logger)
    let router = runtime.makeRouter(context: PeerRequestContext.self, checks: runtime.readinessChecks([ReadinessCheck("catalog names") { names.isLoaded },
                                                                     ReadinessCheck("ids converted") { idsConverted.isOpen }, lagWatch.readinessCheck,
                                                                     namesLag.watch.readinessCheck]),
                                    beforeScrape: { await ingest.recordLag() })
    ReportRoutes(repository: PostgresReportRepository(client: postgres, schema: .live, logger: logger), token: options.reportsToken,
                 freshness: { lagWatch.reportFreshness() }, proxies: options.trustedProxies, tokenFailuresPerMinute: options.tokenFailuresPerMinute)
        .register(on: router)
    ErasureRoutes(store: PostgresErasureStore(client: postgres, schema: .live, logger: logger), pseudonyms: options.pseudonyms,
                  converted: idsConverted, token: options.erasureToken, reportsToken: options.reportsToken, proxies: options.trustedProxies, tokenFailuresPerMinute: options.tokenFailuresPerMinute,
                  logger: logger)
        .register(on: router)
    let trackingTopic = settings.kafka.topic(Topic.trackingEvents), producer = runtime.producer
    let oldest = try KafkaOldestMessage(configuration: settings.kafka)
    let pruning = PruningService(store: PostgresPruningStore(client: postgres, schema: .live, logger: logger), policy: options.retention,
                                 topicConfig: { try await producer.topicConfig(trackingTopic) },
                                 oldestMessage: { try await oldest.sent(topic: trackingTopic) }, logger: logger)
    var app = Application(router: router, configuration: runtime.httpConfiguration, logger: logger)
    app.addServices(runtime.baseServices)
    let conversion = IdConversion(client: postgres, schema: .live, pseudonyms: options.pseudonyms, logger: logger)
    app.addServices(commands, names, IdConversionService(conversion: conversion, startup: runtime.startup, converted: idsConverted),
                    AfterStartup(idsConverted, ingest), AfterStartup(idsConverted, pruning), AfterStartup(runtime.startup, trackingEnds), AfterStartup(runtime.startup, lagWatch),
                    AfterStartup(runtime.startup, namesLag.ends), AfterStartup(runtime.startup, namesLag.watch))
    app.beforeServerStarts {
        try await runtime.prepare(migrations: [AnalyticsMigrations.runner])
        try await IdKeyFingerprint.check(options.pseudonyms, client: postgres, schema: .live, logger: logger)
    }
    return app
}
