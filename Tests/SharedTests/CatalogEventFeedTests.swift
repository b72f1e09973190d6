import Foundation
import Synchronization
import Testing
import TestSupport
@testable import Shared

@Suite("Catalog event feed")
struct CatalogEventFeedTests {
    let logger = TestServices.logger

    @Test("cancelled while its snapshot request waits for a command client that never started, it stops at once")
    func stopsWhileRequestingSnapshot() async throws {
        let configuration = TestServices.kafka()
        let producer = try KafkaProducer(configuration: configuration, logger: logger)
        try await producer.createTopics(Topic.all)
        let startup = StartupBarrier()
        startup.open()
        // Not run: its sends wait for a results consumer that never comes.
        let commands = CatalogCommandClient(producer: producer, configuration: configuration, startup: startup, source: "test", logger: logger)
        let feed = CatalogEventFeed(configuration: configuration, startup: startup, commands: commands,
                                    deadLetters: DeadLetterSink(producer: producer, consumerName: "test", logger: logger),
                                    source: "test", logger: logger, handler: { _ in })
        let finished = Atomic<Bool>(false)
        let running = Task {
            defer { finished.store(true, ordering: .releasing) }
            try await feed.run()
        }
        // Its consumer reads, and its snapshot request waits in `send`.
        let requesting = try await TestServices.eventually(timeout: .seconds(20)) { commands.listening.waiterCount == 1 }
        try #require(requesting)
        running.cancel()
        let stopped = try await TestServices.eventually(timeout: .seconds(30)) { finished.load(ordering: .acquiring) }
        #expect(stopped, "run() still running 30 s after its task was cancelled")
        await producer.shutdown()
    }
}
