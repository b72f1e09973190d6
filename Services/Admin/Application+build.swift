import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import Shared

/// Admin: the staff's web site (server-rendered HTML, no JavaScript needed). It reads content from its own
/// projection of `catalog.events` and changes content only through catalog commands, waiting for each
/// command's result; users, sessions, tour editors and import jobs live in its `admin` schema.
func buildApplication(settings: ServiceSettings, admin: AdminSettings) throws -> some ApplicationProtocol {
    let runtime = try ServiceRuntime(settings: settings, usesPostgres: true)
    let logger = runtime.logger
    let repository = PostgresAdminRepository(client: runtime.postgres!, logger: logger)
    let projection = AdminCatalogProjection()
    let commands = CatalogCommandClient(producer: runtime.producer, configuration: settings.kafka, startup: runtime.startup,
                                        source: "admin", logger: logger)
    let events = CatalogEventFeed(configuration: settings.kafka, startup: runtime.startup, commands: commands,
                                  deadLetters: DeadLetterSink(producer: runtime.producer, consumerName: "admin", logger: logger),
                                  source: "admin", logger: logger,
                                  handler: { events in projection.apply(events) },
                                  categoryHandler: { envelope in projection.apply(envelope.data) },
                                  recordHandlers: CatalogRecordHandler.every(projection))
    let writer = LiveCatalogWriter(client: commands, projection: projection, timeout: admin.commandTimeout, logger: logger)
    let hasher = PasswordHasher(cost: admin.bcryptCost)
    let lease = ImportLease(owner: ImportLease.ownerId(), duration: admin.importLease, heartbeat: admin.importHeartbeat)
    let imports = ImportRunner(jobs: repository, writer: writer, lease: lease, logger: logger)
    let leases = ImportLeaseKeeper(jobs: repository, lease: lease, logger: logger)

    let eventsLag = try LagWatch.watching(events.progress, name: "admin-catalog-events", topic: settings.kafka.topic(Topic.catalogEvents),
                                          configuration: settings.kafka, logger: logger)
    let router = runtime.makeRouter(context: AdminRequestContext.self,
                                    checks: runtime.readinessChecks([ReadinessCheck("projection") { events.isLoaded }, eventsLag.watch.readinessCheck]),
                                    beforeScrape: { await events.recordLag() })
    // Every page: only for the site's own host names (421 otherwise: DNS rebinding; /health, /ready and /metrics answer
    // any, for probes by pod address), the client's address, security headers, the session, HTML error pages, and the
    // CSRF check of every POST (which reads multipart bodies only on the upload routes, after the session is known).
    // Routes check the role themselves (Auth/Access.swift).
    let pages = router.group()
        .add(middleware: HostCheckMiddleware(allowed: admin.allowedHosts))
        .add(middleware: ClientAddressMiddleware(proxies: admin.trustedProxies))
        .add(middleware: SecurityHeadersMiddleware())
        .add(middleware: SessionMiddleware(sessions: repository))
        .add(middleware: AdminErrorMiddleware())
        .add(middleware: CSRFMiddleware(secureCookies: admin.secureCookies,
                                       uploadPaths: ImportController.uploadPaths.merging(MediaController.uploadPaths(maxBytes: admin.mediaMaxBytes)) { $1 }
                                           .merging(TranslationsController.uploadPaths) { $1 }))
    let throttle = LoginThrottle(repository: repository, perAccount: admin.failuresPerAccount, perAddress: admin.failuresPerAddress,
                                 firstDelay: TimeInterval(admin.loginFirstDelay), maximumDelay: TimeInterval(admin.loginMaximumDelay))
    AuthController(users: repository, sessions: repository, throttle: throttle,
                   hasher: hasher, sessionLifetime: admin.sessionLifetime, secureCookies: admin.secureCookies).register(on: pages)
    let leaflet = MapAssetsController(directory: admin.map.leafletDirectory, logger: logger)
    leaflet.register(on: pages)
    let map = AdminMap(settings: admin.map, hasLeaflet: leaflet.isAvailable)
    ToursController(projection: projection, writer: writer, editors: repository, users: repository, map: map,
                    feedPublicURL: admin.feedPublicURL, clock: admin.clock, languages: admin.languages).register(on: pages)
    PoisController(projection: projection, writer: writer, editors: repository, map: map, feedPublicURL: admin.feedPublicURL,
                   clock: admin.clock, languages: admin.languages).register(on: pages)
    CategoriesController(projection: projection, writer: writer, editors: repository, languages: admin.languages).register(on: pages)
    RecordController<CalendarPages>(projection: projection, writer: writer, editors: repository, languages: admin.languages).register(on: pages)
    RecordController<PeoplePages>(projection: projection, writer: writer, editors: repository, languages: admin.languages).register(on: pages)
    RecordController<ContentPages>(projection: projection, writer: writer, editors: repository, languages: admin.languages).register(on: pages)
    RecordController<FeaturedPages>(projection: projection, writer: writer, editors: repository, languages: admin.languages).register(on: pages)
    DeletedController(writer: writer, editors: repository, clock: admin.clock).register(on: pages)
    UsersController(users: repository, editors: repository, hasher: hasher).register(on: pages)
    ImportController(jobs: repository, editors: repository, runner: imports, projection: projection, clock: admin.clock).register(on: pages)
    TranslationsController(projection: projection, editors: repository, languages: admin.languages, jobs: repository, runner: imports)
        .register(on: pages)
    MediaController(projection: projection, writer: writer, editors: repository,
                    store: PostgresMediaStore(client: runtime.postgres!, logger: logger), maxBytes: admin.mediaMaxBytes,
                    feedPublicURL: admin.feedPublicURL, images: ImageVariants(), languages: admin.languages, maxPixels: admin.mediaMaxPixels)
        .register(on: pages)
    if !ImageVariants.isAvailable {
        logger.warning("libvips's tools (vipsthumbnail, vipsheader) are not installed: image uploads will be refused")
    }
    SystemStatusController(probe: SystemStatusProbe(targets: StatusTargets(ownPort: settings.httpPort), metricsToken: settings.metricsToken), editors: repository,
                           clock: admin.clock).register(on: pages)
    ReportsController(analytics: try AnalyticsClient(url: admin.analyticsURL, token: admin.reportsToken), projection: projection).register(on: pages)
    pages.get("**") { _, _ -> Response in throw AdminError.notFound("There is no such page.") }

    var app = Application(router: router, configuration: runtime.httpConfiguration, logger: logger)
    app.addServices(runtime.baseServices)
    app.addServices(commands, events, AfterStartup(runtime.startup, imports), AfterStartup(runtime.startup, leases),
                    AfterStartup(runtime.startup, eventsLag.ends),
                    AfterStartup(runtime.startup, eventsLag.watch))
    app.beforeServerStarts {
        try await runtime.prepare(migrations: [AdminMigrations.runner, PostgresMediaStore.migrations])
        try await OwnerBootstrap(users: repository, hasher: hasher, owner: admin.bootstrapOwner, logger: logger).run()
        // Only imports whose admin is gone (lease expired); other replicas' running imports keep going (issue 44).
        try await leases.sweep()
    }
    return app
}

/// The first owner, from ADMIN_EMAIL / ADMIN_PASSWORD (demo values in demo mode). An existing account is
/// left as it is (its password may have been changed since); with no owner and no credentials, start-up fails.
struct OwnerBootstrap {
    let users: any UserRepository
    let hasher: PasswordHasher
    let owner: (email: String, password: String)?
    let logger: Logger

    func run() async throws {
        if let owner {
            let created = try await users.createIfAbsent(AdminUser(id: UUID.random(), email: owner.email, role: .owner),
                                                         passwordHash: try await hasher.hash(owner.password))
            if created { logger.info("first owner created", metadata: ["email": "\(owner.email)"]) }
        } else if try await users.ownerCount() == 0 {
            throw ConfigurationError(name: "ADMIN_EMAIL / ADMIN_PASSWORD", message: "are required to create the first owner (there is no owner yet)")
        }
    }
}
