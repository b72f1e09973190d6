import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Analytics

/// The bridge between librdkafka's assignment hook, which must block its thread until it has the stored
/// offsets, and the task that reads them (issue 16): answered while served, never left waiting after.
@Suite("Stored offsets for the assignment hook")
struct StoredOffsetsRequestsTests {
    /// Asks on a Dispatch thread, as librdkafka does from the consumer's queue. The timeout only bounds a failure:
    /// the serving task runs on the cooperative pool, which other suites' work can hold for seconds on two cores.
    func askOnAThread(_ requests: StoredOffsetsRequests, timeout: Duration = .seconds(60)) async -> (offsets: [Int32: Int64]?, waited: Duration) {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                let started = ContinuousClock.now
                let offsets = requests.ask(timeout: timeout)
                continuation.resume(returning: (offsets, ContinuousClock.now - started))
            }
        }
    }

    @Test("a question from a thread is answered by the serving task")
    func answered() async throws {
        let requests = StoredOffsetsRequests()
        let serving = Task { await requests.serve { [0: 42, 3: 7] } }
        let answers = await withTaskGroup(of: [Int32: Int64]?.self) { group in
            for _ in 0..<8 { group.addTask { await askOnAThread(requests).offsets } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers == Array(repeating: [0: 42, 3: 7], count: 8))
        serving.cancel()
        await serving.value
    }

    @Test("when the serving task is cancelled, a waiting question gets nil at once, and so does every later one")
    func cancelledWhileAsked() async throws {
        let requests = StoredOffsetsRequests()
        let reading = Atomic<Bool>(false)
        let serving = Task {
            await requests.serve {
                reading.store(true, ordering: .releasing)
                // Postgres that does not answer: only cancellation ends the read.
                try? await Task.sleep(for: .seconds(60))
                return Task.isCancelled ? nil : [0: 1]
            }
        }
        // Its own timeout far away: nil before it means the cancellation answered it.
        async let waiting = askOnAThread(requests, timeout: .seconds(120))
        while !reading.load(ordering: .acquiring) { try await Task.sleep(for: .milliseconds(5)) }
        serving.cancel()
        let answer = await waiting
        #expect(answer.offsets == nil)
        #expect(answer.waited < .seconds(60))
        await serving.value
        let later = await askOnAThread(requests, timeout: .seconds(120))
        #expect(later.offsets == nil)
        #expect(later.waited < .seconds(60))
    }
}
