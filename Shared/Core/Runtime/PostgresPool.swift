import PostgresNIO
import ServiceLifecycle

/// The Postgres pool as a service that, when its group is cancelled, still answers the queries in flight.
///
/// A ServiceGroup shuts down gracefully in reverse order (the pool, added first, stops last), but a cancelled
/// group (a service failed, or a test's app threw) cancels every service at once. `PostgresClient.run()`
/// cancelled then closes its connections under the queries in flight without answering them, and a service
/// awaiting one never ends, nor does the group. So on cancellation the pool keeps running for `grace` (the
/// other services are stopping meanwhile) before it closes; on graceful shutdown it closes at once.
public struct PostgresPool: Service {
    public let client: PostgresClient
    let grace: Duration

    public init(_ client: PostgresClient, grace: Duration = .seconds(3)) {
        self.client = client
        self.grace = grace
    }

    public func run() async {
        // Unstructured: the group's cancellation must reach the pool only after the grace.
        let pool = Task { [client] in await client.run() }
        do {
            try await gracefulShutdown()
        } catch {
            // Cancelled: an unstructured sleep, which the cancellation does not cut short.
            await Task { [grace] in try? await Task.sleep(for: grace) }.value
        }
        pool.cancel()
        await pool.value
    }
}
