import Foundation
import Synchronization
import Testing
import TestSupport
@testable import Shared

@Suite("Startup barrier", .stopsIfHung)
struct StartupBarrierTests {
    struct Failed: Error {}

    @Test("waiters return when it opens, and at once once open")
    func opens() async throws {
        let barrier = StartupBarrier()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<10 { group.addTask { try await barrier.wait() } }
            try await waitUntil { barrier.waiterCount == 10 }
            barrier.open()
            try await group.waitForAll()
        }
        try await barrier.wait()
        #expect(barrier.isOpen)
    }

    @Test("waiters get the error it failed with")
    func fails() async throws {
        let barrier = StartupBarrier()
        let waiter = Task { try await barrier.wait() }
        try await waitUntil { barrier.waiterCount == 1 }
        barrier.fail(Failed())
        await #expect(throws: Failed.self) { try await waiter.value }
        await #expect(throws: Failed.self) { try await barrier.wait() }
    }

    @Test("a cancelled waiter throws CancellationError at once and is taken out; the others still wait")
    func cancelledWaiter() async throws {
        let barrier = StartupBarrier()
        let cancelledEnded = Atomic<Bool>(false)
        let cancelled = Task {
            defer { cancelledEnded.store(true, ordering: .releasing) }
            try await barrier.wait()
        }
        let staying = Task { try await barrier.wait() }
        try await waitUntil { barrier.waiterCount == 2 }
        cancelled.cancel()
        // Bounded, so a waiter that ignores cancellation fails the test instead of hanging it.
        try await waitUntil { cancelledEnded.load(ordering: .acquiring) }
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(barrier.waiterCount == 1)
        barrier.open()
        try await staying.value
    }

    @Test("a task cancelled before it waits does not wait")
    func cancelledBeforeWaiting() async throws {
        let barrier = StartupBarrier()
        let waiter = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await barrier.wait()
        }
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(barrier.waiterCount == 0)
    }

    @Test("waiters cancelled while it opens either return or throw CancellationError, and none is left behind")
    func cancellationRacingOpen() async throws {
        for _ in 0..<50 {
            let barrier = StartupBarrier()
            let waiters = (0..<20).map { _ in Task { try await barrier.wait() } }
            for (index, waiter) in waiters.enumerated() where index % 2 == 0 { waiter.cancel() }
            barrier.open()
            for waiter in waiters {
                do { try await waiter.value } catch is CancellationError {}
            }
            #expect(barrier.waiterCount == 0)
        }
    }

    @Test("a service waiting for start-up stops cleanly when its group shuts down before start-up finished")
    func afterStartupShutDownEarly() async throws {
        let barrier = StartupBarrier()
        let producer = try KafkaProducer(configuration: TestServices.kafka(), logger: TestServices.logger)
        let ended = Atomic<Bool>(false)
        let outcome = Mutex<Result<Void, any Error>?>(nil)
        // Unstructured and polled below, so a group that never stops fails the test instead of hanging it.
        let running = Task {
            defer { ended.store(true, ordering: .releasing) }
            do {
                try await TestServices.withServices([AfterStartup(barrier, producer)]) {
                    try await waitUntil { barrier.waiterCount == 1 }
                }
                outcome.withLock { $0 = .success(()) }
            } catch {
                outcome.withLock { $0 = .failure(error) }
            }
        }
        try await waitUntil { ended.load(ordering: .acquiring) }
        _ = await running.result
        #expect(throws: Never.self) { try outcome.withLock { $0 }?.get() }
        #expect(barrier.waiterCount == 0)
        await producer.shutdown()
    }

    private func waitUntil(_ condition: () -> Bool) async throws {
        // A bound that catches a hang, not a slow start: the full run starts ~200 tests at once on two cores.
        let deadline = ContinuousClock.now + .seconds(90)
        while !condition() {
            try #require(ContinuousClock.now < deadline, "condition not reached")
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}
