import Dispatch
import Foundation

extension Array where Element: Sendable {
    /// `map` on all cores when there are enough elements to be worth it (loading or publishing a whole catalog),
    /// in order. Use it off the event loops: it blocks the calling thread until every element is done.
    /// `elementsPerTask`: at least so many elements per unit of work handed to a core (few for costly elements).
    public func concurrentMap<Output: Sendable>(minimumCount: Int = 256, elementsPerTask: Int = 64,
                                                _ transform: @Sendable (Element) -> Output) -> [Output] {
        guard count >= Swift.max(minimumCount, 2) else { return map(transform) }
        let chunkCount = Swift.max(1, Swift.min(count / Swift.max(elementsPerTask, 1), ProcessInfo.processInfo.activeProcessorCount * 4))
        let results = UnsafeMutableBufferPointer<Output?>.allocate(capacity: count)
        results.initialize(repeating: nil)
        defer {
            _ = results.deinitialize()
            results.deallocate()
        }
        nonisolated(unsafe) let shared = results
        DispatchQueue.concurrentPerform(iterations: chunkCount) { chunk in
            // Each chunk writes only its own indices of `shared`.
            for index in Swift.stride(from: chunk, to: count, by: chunkCount) {
                shared[index] = transform(self[index])
            }
        }
        // Every index was written above.
        return results.map { $0! }
    }

    /// `concurrentMap` for async code: it waits on a Dispatch thread, so neither the cooperative pool nor
    /// an event loop is blocked while the cores work.
    public func concurrentMapOffThePool<Output: Sendable>(minimumCount: Int = 256, elementsPerTask: Int = 64,
                                                          _ transform: @escaping @Sendable (Element) -> Output) async -> [Output] {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: self.concurrentMap(minimumCount: minimumCount, elementsPerTask: elementsPerTask, transform))
            }
        }
    }
}
