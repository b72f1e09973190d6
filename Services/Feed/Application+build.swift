import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import Shared

/// Feed: the phones' API. Reads come from an in-memory projection of `catalog.events`; tracking events
/// go to `tracking.events`.
func buildApplication(settings: ServiceSettings, feed: FeedSettings? = nil) throws -> some ApplicationProtocol {
    let feed = try feed ?? FeedSettings()
    // Tracking events are small messages sent on the path of the answer to POST /v1/events: lz4 raised the broker's own
    // limit but not the feed's rate (docs/BENCHMARKS.md, "The broker"), so the feed sends them as they are.
    var settings = settings
    settings.kafka.compressionCodec = "none"
    let runtime = try ServiceRuntime(settings: settings, usesPostgres: false)
    let logger = runtime.logger
    let projection = CatalogProjection(feedPublicURL: feed.site.publicURL, languages: feed.site.languages)
    let commands = CatalogCommandClient(producer: runtime.producer, configuration: settings.kafka, startup: runtime.startup,
                                        source: "feed", logger: logger)
    let events = CatalogEventFeed(configuration: settings.kafka, startup: runtime.startup, commands: commands,
                                  deadLetters: DeadLetterSink(producer: runtime.producer, consumerName: "feed", logger: logger),
                                  source: "feed", logger: logger, handler: { events in
        projection.apply(events)
    }, categoryHandler: { envelope in
        projection.apply(envelope.data)
    }, recordHandlers: CatalogRecordHandler.every(projection), onSnapshotLoaded: { projection.snapshotLoaded() })
    let publisher = ProjectionPublisher(projection: projection, isSourceLoaded: { events.isLoaded }, logger: logger)
    let ingest = EventIngest(producer: runtime.producer, topic: settings.kafka.topic(Topic.trackingEvents),
                             rateLimiter: EventRateLimiter(eventsPerMinute: feed.eventsPerMinutePerDevice),
                             clientRateLimiter: EventRateLimiter(eventsPerMinute: feed.eventsPerMinutePerClient),
                             newDevices: NewDeviceLimiter(devicesPerHour: feed.newDevicesPerHourPerClient),
                             // Before the first snapshot nothing is known yet; the feed is not ready then either.
                             unknownReference: { event in events.isLoaded ? projection.unknownReference(in: event) : nil })

    let eventsLag = try LagWatch.watching(events.progress, name: "feed-catalog-events", topic: settings.kafka.topic(Topic.catalogEvents),
                                          configuration: settings.kafka, logger: logger)
    let router = runtime.makeRouter(context: FeedRequestContext.self,
                                    checks: runtime.readinessChecks([ReadinessCheck("projection") { publisher.isReady }, eventsLag.watch.readinessCheck]),
                                    beforeScrape: { await events.recordLag() })
    // Media bytes come from the media store (DESIGN.md, "Media library"): a Postgres client of its own, not part of
    // readiness, as every other answer comes from memory. Its only queries are the cache's reads, at most
    // `MediaCache.defaultMaximumReads` at once, so its pool never needs more connections than that, whatever
    // POSTGRES_MAX_CONNECTIONS says (the fleet's sum of pools: deploy/kubernetes/README.md).
    var mediaDatabaseSettings = settings.database
    mediaDatabaseSettings.maximumConnections = min(mediaDatabaseSettings.maximumConnections, MediaCache.defaultMaximumReads)
    let mediaDatabase = mediaDatabaseSettings.makeClient(logger: logger)
    let mediaCache = MediaCache(store: PostgresMediaStore(client: mediaDatabase, logger: logger), budgetBytes: feed.mediaCacheBytes)
    FeedAPI.register(on: router, projection: projection, ingest: ingest, media: MediaRoutes(cache: mediaCache, logger: logger),
                     bundles: BundleRoutes(cache: mediaCache, logger: logger), site: feed.site, proxies: feed.trustedProxies)

    // The stored GETs and the common batches are answered in the connection pipeline, ahead of the router, from
    // the same table (PipelineResponder); it keeps the connection's idle timeout too: Hummingbird's would not
    // see the requests answered there.
    let http = runtime.httpConfiguration
    let routes = PipelineRoutes(FeedAPI.routes, projection: projection, ingest: ingest, mediaCache: mediaCache, serverName: http.serverName ?? "itour-feed",
                                proxies: feed.trustedProxies)
    let connections = ConnectionLimiter(perClient: feed.maxConnectionsPerClient, proxies: feed.trustedProxies)
    var app = Application(router: router,
                          server: .feedHTTP1(configuration: .init(), connections: connections) { PipelineResponder(routes: routes, idleTimeout: http.idleTimeout) },
                          configuration: http.application, logger: logger)
    app.addServices(runtime.baseServices)
    app.addServices(mediaDatabase)
    app.addServices(commands, events, publisher, AfterStartup(runtime.startup, eventsLag.ends), AfterStartup(runtime.startup, eventsLag.watch))
    app.beforeServerStarts {
        try await runtime.prepare(migrations: [])
    }
    return app
}
