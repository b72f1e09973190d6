import Synchronization

/// Start-up work (migrations, topic creation) runs once before the server accepts requests; the services
/// that depend on it wait here. If it fails, every waiter gets the error and the group shuts down.
public final class StartupBarrier: Sendable {
    private enum State {
        case waiting([CheckedContinuation<Void, any Error>])
        case open
        case failed(any Error)
    }

    private let state = Mutex<State>(.waiting([]))

    public init() {}

    public func wait() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let outcome: Result<Void, any Error>? = state.withLock { state in
                switch state {
                case .waiting(var list):
                    list.append(continuation)
                    state = .waiting(list)
                    return nil
                case .open: return .success(())
                case .failed(let error): return .failure(error)
                }
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }

    public var isOpen: Bool { state.withLock { if case .open = $0 { true } else { false } } }

    public func open() { finish(.success(())) }

    public func fail(_ error: any Error) { finish(.failure(error)) }

    private func finish(_ outcome: Result<Void, any Error>) {
        let waiters: [CheckedContinuation<Void, any Error>] = state.withLock { state in
            guard case .waiting(let list) = state else { return [] }
            switch outcome {
            case .success: state = .open
            case .failure(let error): state = .failed(error)
            }
            return list
        }
        for waiter in waiters { waiter.resume(with: outcome) }
    }
}
