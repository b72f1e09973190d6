import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import PostgresNIO
import ServiceLifecycle

/// The parts every service shares: logger, Postgres client, producer, topic creation and migrations at
/// start-up, readiness checks and the router's standard middleware. Each service's
/// `Application+build.swift` starts from one of these.
public struct ServiceRuntime: Sendable {
    public let settings: ServiceSettings
    public let logger: Logger
    public let postgres: PostgresClient?
    public let producer: KafkaProducer
    /// Opens when topics exist and migrations ran; consumers wait for it.
    public let startup = StartupBarrier()

    public init(settings: ServiceSettings, usesPostgres: Bool) throws {
        LoggingSetup.bootstrap(format: settings.logFormat, level: settings.logLevel)
        MetricsSetup.bootstrap(serviceName: settings.serviceName)
        var logger = Logger(label: settings.serviceName)
        logger.logLevel = settings.logLevel
        self.settings = settings
        self.logger = logger
        postgres = usesPostgres ? settings.database.makeClient(logger: logger) : nil
        producer = try KafkaProducer(configuration: settings.kafka, logger: logger)
    }

    /// Long-running pieces every service runs: the Postgres pool, the topic guard and the producer's poll
    /// loop. The producer comes last so it shuts down after the services that send through it.
    public var baseServices: [any Service] {
        (postgres.map { [$0] } ?? []) + [AfterStartup(startup, TopicGuard(producer: producer, logger: logger)), producer]
    }

    /// Start-up work, run before the server accepts requests: topics, then migrations (the service's schema, then
    /// any store it writes, such as the media store). Retries while the broker or Postgres is not yet up (a compose
    /// start), then gives up with the cause.
    public func prepare(migrations: [MigrationRunner], attempts: Int = 30) async throws {
        var attempt = 0
        while true {
            attempt += 1
            var step = "creating topics on the broker (\(settings.kafka.brokers))"
            do {
                try await producer.createTopics(Topic.all)
                if let postgres {
                    for runner in migrations {
                        step = "migrating schema \(runner.schema) on Postgres (\(settings.database.host):\(settings.database.port))"
                        let applied = try await runner.run(on: postgres, logger: logger)
                        if !applied.isEmpty { logger.info("migrations applied", metadata: ["schema": "\(runner.schema)", "versions": "\(applied)"]) }
                    }
                }
                startup.open()
                return
            } catch {
                // A migration that fails will fail again: only unreachable dependencies are worth waiting for.
                if attempt >= attempts || error is MigrationError {
                    startup.fail(error)
                    throw StartupError(step: step, attempts: attempt, underlying: error)
                }
                logger.warning("start-up not possible yet; retrying", metadata: ["error": "\(error)", "attempt": "\(attempt)"])
                try await Task.sleep(for: .seconds(1))
            }
        }
    }

    /// Why start-up gave up, for the one line the executable logs: the step, where, and the cause.
    public struct StartupError: Error, CustomStringConvertible {
        public let step: String
        public let attempts: Int
        public let underlying: any Error
        public var description: String { "start-up failed while \(step), attempt \(attempts): \(underlying)" }
    }

    /// Postgres and broker reachability, plus whatever else the service needs to be ready.
    public func readinessChecks(_ extra: [ReadinessCheck] = []) -> [ReadinessCheck] {
        var checks: [ReadinessCheck] = [ReadinessCheck("startup") { [startup] in startup.isOpen }]
        if let postgres {
            checks.append(ReadinessCheck("postgres") { [logger] in await postgres.isReachable(logger: logger) })
        }
        checks.append(ReadinessCheck("broker") { [producer] in await producer.isBrokerReachable() })
        return checks + extra
    }

    /// A router with the standard middleware (request id, problem details, per-route metrics) and
    /// `/health`, `/ready`, `/metrics`.
    public func makeRouter<Context: RequestContext>(context: Context.Type = BasicRequestContext.self, checks: [ReadinessCheck],
                                                    beforeScrape: @escaping @Sendable () async -> Void = {}) -> Router<Context> {
        // HEAD on every GET route (DESIGN.md "Feed API"): download managers and caches ask it before they fetch.
        let router = Router(context: Context.self, options: .autoGenerateHeadEndpoints)
        router.add(middleware: RequestIdMiddleware())
        router.add(middleware: MetricsMiddleware())
        router.add(middleware: ProblemMiddleware())
        OperationalRoutes(serviceName: settings.serviceName, checks: checks, metricsToken: settings.metricsToken, beforeScrape: beforeScrape)
            .register(on: router)
        return router
    }

    /// Where the service listens, its server name, and how long a connection may sit idle
    /// (`HTTP_IDLE_TIMEOUT_SECONDS`). `Application(router:configuration:logger:)` takes it as it is.
    public var httpConfiguration: ServiceHTTPConfiguration {
        ServiceHTTPConfiguration(
            application: ApplicationConfiguration(address: .hostname(settings.httpHost, port: settings.httpPort), serverName: "itour-\(settings.serviceName)"),
            idleTimeout: .seconds(Int64(settings.httpIdleTimeoutSeconds)))
    }
}

/// A service's HTTP server settings: Hummingbird's `ApplicationConfiguration` and the idle timeout, which
/// Hummingbird sets on the HTTP/1 channel instead. A connection on which no request part arrives for
/// `idleTimeout` while nothing is being answered is closed: a client that sent half a request head (no part
/// arrives until the head is complete), or nothing, or stopped in the middle of a body.
public struct ServiceHTTPConfiguration: Sendable {
    public var application: ApplicationConfiguration
    public var idleTimeout: TimeAmount

    public init(application: ApplicationConfiguration, idleTimeout: TimeAmount) {
        self.application = application
        self.idleTimeout = idleTimeout
    }

    public var serverName: String? { application.serverName }

    /// HTTP/1 with the idle timeout.
    public var server: HTTPServerBuilder { .http1(configuration: .init(idleTimeout: idleTimeout)) }
}

extension Application {
    /// An application serving `router` with a service's HTTP configuration (its address, name and idle timeout).
    public init<ResponderBuilder: HTTPResponderBuilder>(router: ResponderBuilder, configuration: ServiceHTTPConfiguration, logger: Logger? = nil)
    where Responder == ResponderBuilder.Responder {
        self.init(router: router, server: configuration.server, configuration: configuration.application, logger: logger)
    }
}

/// Gives each request an id (`RequestId`: the caller's `X-Request-Id` when it is sane, else a new one), logs with it,
/// returns it, and lets handlers pass it on in Kafka headers (`RequestIdMiddleware.id(of:)`).
public struct RequestIdMiddleware<Context: RequestContext>: RouterMiddleware {
    public init() {}

    public static func id(of context: Context) -> String? {
        context.logger[metadataKey: "request_id"].map { "\($0)" }
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        let id = RequestId.id(given: request.headers[.xRequestId])
        context.logger[metadataKey: "request_id"] = "\(id)"
        do {
            var response = try await next(request, context)
            response.headers[.xRequestId] = id
            return response
        } catch let error as any HTTPResponseError {
            throw RequestIdError(base: error, requestId: id)
        }
    }
}

/// Carries the request id onto error responses too.
struct RequestIdError: HTTPResponseError {
    let base: any HTTPResponseError
    let requestId: String
    var status: HTTPResponse.Status { base.status }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = try base.response(from: request, context: context)
        response.headers[.xRequestId] = requestId
        return response
    }
}

extension HTTPField.Name {
    public static let xRequestId = Self("X-Request-Id")!
}
