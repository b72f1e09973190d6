import Dispatch
import Synchronization

/// Where blocking librdkafka calls run: a Dispatch queue of the client's own, so a call that waits on the
/// broker (metadata, watermarks, commit, seek, flush, topic admin, close, poll) never holds an event loop
/// or a thread of the cooperative pool (the feed runs its tasks on NIO's event loops). `run` bridges a call
/// back to async code.
struct RDKafkaQueue: Sendable {
    private let queue: DispatchQueue

    /// `serial`: calls run one after the other in the order queued (a consumer's, which must not overlap its
    /// poll); otherwise they may overlap.
    init(label: String, serial: Bool) {
        queue = DispatchQueue(label: label, attributes: serial ? [] : .concurrent)
    }

    /// Runs `body` on the queue; the caller waits without holding its thread.
    func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }

    /// Queues `body` without waiting for it.
    func async(_ body: @escaping @Sendable () -> Void) {
        queue.async(execute: body)
    }
}

/// Calls a blocking librdkafka poll in a loop until stopped, on an `RDKafkaQueue` of its own.
final class PollLoop: Sendable {
    private let running = Flag(true)

    init(label: String, poll: @escaping @Sendable () -> Void) {
        RDKafkaQueue(label: label, serial: true).async { [running] in
            while running.value { poll() }
        }
    }

    var isRunning: Bool { running.value }

    func stop() { running.value = false }
}

/// A value handed to another thread whose safety the code around it ensures (a C handle used by one call at a time).
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
}

/// A boolean shared between threads (an `Atomic` that closures can capture).
final class Flag: Sendable {
    private let atomic: Atomic<Bool>

    init(_ value: Bool) { atomic = Atomic(value) }

    var value: Bool {
        get { atomic.load(ordering: .acquiring) }
        set { atomic.store(newValue, ordering: .releasing) }
    }

    /// Sets the flag; returns its previous value.
    func set() -> Bool { atomic.exchange(true, ordering: .acquiringAndReleasing) }

    /// Clears the flag; returns its previous value.
    func clear() -> Bool { atomic.exchange(false, ordering: .acquiringAndReleasing) }
}

extension Duration {
    var milliseconds: Int32 {
        let (seconds, attoseconds) = components
        return Int32(clamping: seconds * 1_000 + attoseconds / 1_000_000_000_000_000)
    }
}
