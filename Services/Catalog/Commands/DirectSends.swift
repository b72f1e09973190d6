import Shared
import Synchronization

/// Messages one command sends straight to the broker, not through the outbox (a snapshot's chunks and records): each
/// batch goes out as soon as the command has it, so a reader starts on the first while the command reads the rest,
/// and `delivered()` waits for every one, so the command commits only once all were acknowledged.
final class DirectSends: Sendable {
    private struct State {
        var outstanding = 0
        var failure: (any Error)?
        var waiter: CheckedContinuation<Void, any Error>?
    }

    private let producer: KafkaProducer
    private let state = Mutex(State())

    init(producer: KafkaProducer) {
        self.producer = producer
    }

    /// Queues the messages on the producer now; their delivery is awaited by `delivered()`.
    func send(_ messages: [KafkaOutgoingMessage]) {
        guard !messages.isEmpty else { return }
        state.withLock { $0.outstanding += 1 }
        producer.send(messages) { [self] result in
            let waiter: (CheckedContinuation<Void, any Error>, (any Error)?)? = self.state.withLock { state in
                state.outstanding -= 1
                if case .failure(let error) = result, state.failure == nil { state.failure = error }
                guard state.outstanding == 0, let waiter = state.waiter else { return nil }
                state.waiter = nil
                return (waiter, state.failure)
            }
            if let (continuation, failure) = waiter { Self.resume(continuation, failure) }
        }
    }

    /// Returns once every message sent was acknowledged; throws the first failure.
    func delivered() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let done: (any Error)?? = state.withLock { state in
                guard state.outstanding > 0 else { return .some(state.failure) }
                precondition(state.waiter == nil, "one command waits for its direct sends once")
                state.waiter = continuation
                return .none
            }
            if let failure = done { Self.resume(continuation, failure) }
        }
    }

    private static func resume(_ continuation: CheckedContinuation<Void, any Error>, _ failure: (any Error)?) {
        if let failure { continuation.resume(throwing: failure) } else { continuation.resume() }
    }
}
