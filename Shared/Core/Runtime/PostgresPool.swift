import PostgresNIO
import ServiceLifecycle

/// The Postgres pool as a service that, when its group is cancelled, still answers the transactions in flight.
///
/// A ServiceGroup shuts down gracefully in reverse order (the pool, added first, stops last), but a cancelled
/// group (a service failed, or a test's app threw) cancels every service at once. `PostgresClient.run()`
/// cancelled then may close under a transaction in flight and never answer it, and a service awaiting it never
/// ends, nor does the group. So once the group is cancelled the pool waits `grace` (the other services are
/// stopping meanwhile) before it closes; after a graceful shutdown alone it closes at once.
public struct PostgresPool: Service {
    public let client: PostgresClient
    let grace: Duration

    public init(_ client: PostgresClient, grace: Duration = .seconds(3)) {
        self.client = client
        self.grace = grace
    }

    public func run() async {
        // Detached: neither the group's cancellation nor its graceful-shutdown signal (a task-local, which
        // `PostgresClient.run()` obeys) may reach the client before this service decides.
        let pool = Task.detached { [client] in await client.run() }
        try? await gracefulShutdown()
        // Cancelled (also after the signal: a cancelled group signals each service as others end, not in order).
        if Task.isCancelled {
            await Task.detached { [grace] in try? await Task.sleep(for: grace) }.value
        }
        pool.cancel()
        await pool.value
    }
}
