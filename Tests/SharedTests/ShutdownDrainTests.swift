import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Shared
import Testing

/// Rollouts nobody notices (issue 44): once graceful shutdown begins, `/ready` answers 503 while the server still
/// serves every route, for the drain's delay; then the server stops accepting and the group ends.
@Suite("Graceful shutdown: /ready first")
struct ShutdownDrainTests {
    @Test("after graceful shutdown starts, /ready answers 503 (status shutting down) while /health and a route still answer; the port closes after the delay")
    func readyTurnsFalseBeforeTheServerStops() async throws {
        // Long enough for the four requests below on a loaded machine (a CI run's took over 2 s).
        let delay: Duration = .seconds(10)
        let drain = ShutdownDrain(delay: delay)
        let logger = Logger(label: "shutdown-drain-test")
        let router = Router()
        OperationalRoutes(serviceName: "drain-test", checks: [ReadinessCheck("always") { true }], drain: drain).register(on: router)
        router.get("/work") { _, _ in "done" }
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                              onServerRunning: { channel in portContinuation.yield(channel.localAddress?.port ?? 0) }, logger: logger)
        let group = ShutdownDrain.serviceGroup(running: app, drain: drain, trappingSignals: false, logger: logger)

        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var iterator = ports.makeAsyncIterator()
            let port = try #require(await iterator.next())
            let base = "http://127.0.0.1:\(port)"

            let before = try await HTTPFetch.get(base + "/ready", timeout: .seconds(8))
            #expect(before.status == 200, "ready before shutdown: \(before.text)")
            #expect(!drain.isDraining)

            let started = ContinuousClock.now
            await group.triggerGracefulShutdown()
            // The drain is told first, on the group's own task: wait (briefly) until it has flipped.
            while !drain.isDraining && ContinuousClock.now - started < .seconds(5) { try await Task.sleep(for: .milliseconds(10)) }
            #expect(drain.isDraining)

            let ready = try await HTTPFetch.get(base + "/ready", timeout: .seconds(8))
            #expect(ready.status == 503)
            let body = try JSONSerialization.jsonObject(with: Data(ready.body)) as? [String: Any]
            #expect(body?["status"] as? String == "shutting down")
            #expect(body?["ready"] as? Bool == false)
            #expect((body?["checks"] as? [String: Bool]) == ["shutdown": false])
            // Still serving: liveness and the service's own routes answer as before.
            #expect(try await HTTPFetch.get(base + "/health", timeout: .seconds(8)).status == 200)
            let work = try await HTTPFetch.get(base + "/work", timeout: .seconds(8))
            #expect(work.status == 200 && work.text == "done")
            #expect(ContinuousClock.now - started < delay, "the checks above ran within the drain's delay")

            // Then the application shuts down: the group ends, not before the delay, and the port is closed.
            try await tasks.next()
            #expect(ContinuousClock.now - started >= delay)
            await #expect(throws: (any Error).self) { _ = try await HTTPFetch.get(base + "/health", timeout: .seconds(5)) }
        }
    }

    @Test("a group cancelled (not shut down gracefully) does not drain: nothing waits for the delay")
    func cancellationSkipsTheDelay() async throws {
        // An hour: a group that waited for it would hold the test far beyond the bound below, whatever the machine's load.
        let drain = ShutdownDrain(delay: .seconds(3600))
        let group = ServiceGroup(configuration: .init(services: [drain], logger: Logger(label: "shutdown-drain-test")))
        let started = ContinuousClock.now
        let task = Task { try? await group.run() }
        try await Task.sleep(for: .milliseconds(50))
        task.cancel()
        await task.value
        #expect(!drain.isDraining)
        // Far under the hour it would have waited (a loaded machine took 39 s just to get here once).
        #expect(ContinuousClock.now - started < .seconds(600))
    }
}
