import Foundation
import Synchronization

/// A dedicated OS thread that calls a blocking librdkafka poll in a loop, so blocking waits never
/// occupy Swift's cooperative thread pool.
final class PollThread: Sendable {
    private let running = Flag(true)

    init(name: String, poll: @escaping @Sendable () -> Void) {
        let thread = Thread { [running] in
            while running.value { poll() }
        }
        thread.name = name
        thread.start()
    }

    var isRunning: Bool { running.value }

    func stop() { running.value = false }
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

/// Runs a blocking librdkafka call on a Dispatch thread, off the cooperative pool.
func runBlocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async {
            continuation.resume(with: Result { try body() })
        }
    }
}

extension Duration {
    var milliseconds: Int32 {
        let (seconds, attoseconds) = components
        return Int32(clamping: seconds * 1_000 + attoseconds / 1_000_000_000_000_000)
    }
}
