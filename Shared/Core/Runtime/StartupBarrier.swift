import Synchronization

/// Start-up work (migrations, topic creation) runs once before the server accepts requests; the services
/// that depend on it wait here. If it fails, every waiter gets the error and the group shuts down.
public final class StartupBarrier: Sendable {
    private enum State {
        /// Waiters by ticket, so a cancelled one can be taken out.
        case waiting([Int: CheckedContinuation<Void, any Error>], nextTicket: Int)
        case open
        case failed(any Error)
    }

    private let state = Mutex<State>(.waiting([:], nextTicket: 0))

    public init() {}

    /// Returns once the barrier opens; throws its error if it failed, or `CancellationError` as soon as the
    /// waiting task is cancelled (a service stopped before start-up finished must not hang its group).
    public func wait() async throws {
        // The ticket is taken before the continuation exists, so the cancellation handler, which may run
        // first or at the same time, knows which waiter to take out.
        let ticket: Int? = state.withLock { state in
            guard case .waiting(let list, let next) = state else { return nil }
            state = .waiting(list, nextTicket: next + 1)
            return next
        }
        guard let ticket else { return try outcomeOnceFinished() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Void, any Error>? = state.withLock { state in
                    switch state {
                    case .waiting(var list, let next):
                        if Task.isCancelled { return .failure(CancellationError()) }
                        list[ticket] = continuation
                        state = .waiting(list, nextTicket: next)
                        return nil
                    case .open: return .success(())
                    case .failed(let error): return .failure(error)
                    }
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let cancelled: CheckedContinuation<Void, any Error>? = state.withLock { state in
                guard case .waiting(var list, let next) = state, let continuation = list.removeValue(forKey: ticket) else { return nil }
                state = .waiting(list, nextTicket: next)
                return continuation
            }
            cancelled?.resume(throwing: CancellationError())
        }
    }

    /// Tasks waiting now; for tests (a cancelled waiter is taken out).
    var waiterCount: Int {
        state.withLock { if case .waiting(let list, _) = $0 { list.count } else { 0 } }
    }

    public var isOpen: Bool { state.withLock { if case .open = $0 { true } else { false } } }

    public func open() { finish(.success(())) }

    public func fail(_ error: any Error) { finish(.failure(error)) }

    private func outcomeOnceFinished() throws {
        let outcome: Result<Void, any Error> = state.withLock { state in
            if case .failed(let error) = state { .failure(error) } else { .success(()) }
        }
        try outcome.get()
    }

    private func finish(_ outcome: Result<Void, any Error>) {
        let waiters: [CheckedContinuation<Void, any Error>] = state.withLock { state in
            guard case .waiting(let list, _) = state else { return [] }
            switch outcome {
            case .success: state = .open
            case .failure(let error): state = .failed(error)
            }
            return Array(list.values)
        }
        for waiter in waiters { waiter.resume(with: outcome) }
    }
}
