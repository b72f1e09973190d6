import Foundation
import Synchronization

/// A dedicated OS thread that calls a blocking librdkafka poll in a loop, so blocking waits never
/// occupy Swift's cooperative thread pool.
final class PollThread: Sendable {
    private let running = Atomic<Bool>(true)
    private let finished = Mutex<Bool>(false)

    init(name: String, poll: @escaping @Sendable () -> Void) {
        let thread = Thread { [running, finished] in
            while running.load(ordering: .acquiring) { poll() }
            finished.withLock { $0 = true }
        }
        thread.name = name
        thread.start()
    }

    var isRunning: Bool { running.load(ordering: .acquiring) }

    func stop() { running.store(false, ordering: .releasing) }
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
