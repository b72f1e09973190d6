import Synchronization

/// Runs `operation` so that cancelling the caller does not cancel it, and once the caller is cancelled waits
/// at most `grace` for it before throwing `CancellationError` and leaving it behind.
///
/// Why: a ServiceGroup that is cancelled (a service failed, or a test's app threw) cancels every service at
/// once, the Postgres pool included. PostgresNIO then closes the connection under a query in flight without
/// ever answering it, so awaiting that query would hold the group's shutdown forever. A batch left behind this
/// way may or may not have committed; either way it is read again after the restart and counted once (its
/// ids decide, and its offsets were stored only if it committed).
func awaitingAtMost<T: Sendable>(_ grace: Duration, onceCancelled operation: @escaping @Sendable () async throws -> T) async throws -> T {
    let outcome = SingleOutcome<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            outcome.install(continuation)
            // Unstructured: the caller's cancellation must not reach the operation.
            Task {
                do { outcome.finish(.success(try await operation())) } catch { outcome.finish(.failure(error)) }
            }
        }
    } onCancel: {
        Task {
            try? await Task.sleep(for: grace)
            outcome.finish(.failure(CancellationError()))
        }
    }
}

/// The first result reported, delivered once to the waiting continuation (whichever comes first).
private final class SingleOutcome<T: Sendable>: Sendable {
    private enum State {
        case waiting(CheckedContinuation<T, any Error>?)
        case early(Result<T, any Error>)
        case done
    }

    private let state = Mutex(State.waiting(nil))

    func install(_ continuation: CheckedContinuation<T, any Error>) {
        let early: Result<T, any Error>? = state.withLock { state in
            switch state {
            case .waiting:
                state = .waiting(continuation)
                return nil
            case .early(let result):
                state = .done
                return result
            case .done:
                preconditionFailure("a continuation installed after its outcome was delivered")
            }
        }
        if let early { continuation.resume(with: early) }
    }

    func finish(_ result: Result<T, any Error>) {
        let continuation: CheckedContinuation<T, any Error>? = state.withLock { state in
            switch state {
            case .waiting(let continuation?):
                state = .done
                return continuation
            case .waiting(nil):
                state = .early(result)
                return nil
            case .early, .done:
                return nil
            }
        }
        continuation?.resume(with: result)
    }
}
