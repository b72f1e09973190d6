import ServiceLifecycle

/// Runs a service only once start-up work (topics, migrations) is done.
public struct AfterStartup: Service {
    let barrier: StartupBarrier
    let service: any Service

    public init(_ barrier: StartupBarrier, _ service: any Service) {
        self.barrier = barrier
        self.service = service
    }

    public func run() async throws {
        do {
            try await cancelWhenGracefulShutdown { try await barrier.wait() }
        } catch is CancellationError {
            // Stopped before start-up finished: nothing ran, nothing to report.
            return
        }
        guard barrier.isOpen else { return }
        try await service.run()
    }
}
