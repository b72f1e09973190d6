import Shared
import Testing

@Suite("concurrentMap")
struct ConcurrentMapTests {
    @Test("maps every element once, in order, below and above the parallel threshold and at any task size",
          arguments: [0, 1, 2, 3, 255, 256, 257, 1_000, 10_007])
    func inOrder(count: Int) {
        let input = Array(0..<count)
        for perTask in [1, 7, 64, 100_000] {
            #expect(input.concurrentMap(minimumCount: 2, elementsPerTask: perTask) { $0 * 3 + 1 } == input.map { $0 * 3 + 1 })
        }
        #expect(input.concurrentMap { String($0) } == input.map { String($0) })
    }
}
