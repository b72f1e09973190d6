import Foundation
import Synchronization
import Testing
import TestSupport
@testable import Shared

/// The command client's waiting for results (issue 16): a result and its waiter may arrive in either
/// order and at the same moment; none of them may leave the caller waiting for the timeout.
@Suite("Catalog command client", .stopsIfHung)
struct CatalogCommandClientTests {
    let logger = TestServices.logger

    static func result(_ id: UUID) -> CatalogCommandResult {
        CatalogCommandResult(commandId: id, action: .snapshot, outcome: .applied)
    }

    /// Runs `body` with a client reading its results over the broker (catalog is not running), its producer, and the
    /// results topic.
    func withListeningClient(_ body: @escaping @Sendable (CatalogCommandClient, KafkaProducer, String) async throws -> Void) async throws {
        let configuration = TestServices.kafka()
        let producer = try KafkaProducer(configuration: configuration, logger: logger)
        try await producer.createTopics(Topic.all)
        let startup = StartupBarrier()
        startup.open()
        let client = CatalogCommandClient(producer: producer, configuration: configuration, startup: startup, source: "test", logger: logger)
        try await TestServices.withServices([producer, client]) {
            // Sending opens once the client reads its results; nothing answers this one.
            try await client.send(CatalogCommand(action: .snapshot, actor: "test"))
            try await body(client, producer, configuration.topic(Topic.catalogCommandResults))
        }
    }

    @Test("a result that arrives while its caller is about to register is taken at once")
    func resultArrivingWhileRegistering() async throws {
        let configuration = TestServices.kafka()
        let producer = try KafkaProducer(configuration: configuration, logger: logger)
        let delivered = Mutex<[UUID]>([])
        let client = Box<CatalogCommandClient>()
        client.value = CatalogCommandClient(producer: producer, configuration: configuration, startup: StartupBarrier(), source: "test",
                                            logger: logger, beforeRegistering: { id in
            // The interleaving the two-lock client lost: the result lands after the caller began waiting,
            // before its continuation is stored.
            client.value?.deliver(Self.result(id))
            delivered.withLock { $0.append(id) }
        })
        let id = UUID()
        // Throws noAnswer if the result was lost between the checks.
        let answer = try await #require(client.value).result(of: id, timeout: .seconds(5))
        #expect(answer.commandId == id)
        #expect(delivered.withLock { $0 } == [id])
        await producer.shutdown()
    }

    @Test("results and waiters racing from many tasks, results decoded and as they came: every caller gets its result, none waits for the timeout")
    func resultsAndWaitersRacing() async throws {
        let configuration = TestServices.kafka()
        let producer = try KafkaProducer(configuration: configuration, logger: logger)
        let client = CatalogCommandClient(producer: producer, configuration: configuration, startup: StartupBarrier(), source: "test", logger: logger)
        // A caller whose result slipped past it throws noAnswer after the timeout, failing the test. The timeout is long:
        // in a full suite on two cores, CPU-bound tests beside this one have held its tasks back for more than 10 s.
        let answered = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<4_000 {
                let id = UUID()
                group.addTask {
                    try await client.result(of: id, timeout: .seconds(120)).commandId == id
                }
                group.addTask {
                    // 0 to 3 yields: the result comes before, during or after the caller's registration.
                    for _ in 0..<(index % 4) { await Task.yield() }
                    // Half as the topic brings them (kept undecoded when nobody waits yet), half decoded.
                    if index % 8 < 4 {
                        client.deliver(Self.result(id))
                    } else {
                        client.deliver(message: try Envelope(type: "command.applied", source: "catalog", data: Self.result(id)).encoded(), commandId: id)
                    }
                    return true
                }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(answered == 8_000)
        await producer.shutdown()
    }

    @Test("when its results consumer cannot open, a send fails with that error instead of waiting for good")
    func sendFailsWithoutResultsConsumer() async throws {
        // Nothing listens there: opening the results consumer fails when its metadata request times out.
        var configuration = TestServices.kafka()
        configuration.brokers = "127.0.0.1:1"
        let producer = try KafkaProducer(configuration: configuration, logger: logger)
        let startup = StartupBarrier()
        startup.open()
        let client = CatalogCommandClient(producer: producer, configuration: configuration, startup: startup, source: "test", logger: logger)
        let running = Task { try await client.run() }
        do {
            // The bound only turns a wait for good (the client before this test) into a failure.
            try await withTimeout(.seconds(120)) { try await client.send(CatalogCommand(action: .snapshot, actor: "test")) }
            Issue.record("a send succeeded with no broker")
        } catch {
            #expect(error is KafkaError, "\(error)")
        }
        await #expect(throws: KafkaError.self) { try await running.value }
        await producer.shutdown()
    }

    @Test("over the broker: results sent at the same time as their callers start waiting all arrive")
    func resultsOverTheBroker() async throws {
        try await withListeningClient { client, producer, topic in
            let answered = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<300 {
                    let id = UUID()
                    group.addTask { try await client.result(of: id, timeout: .seconds(20)).commandId == id }
                    group.addTask {
                        if index % 2 == 0 { await Task.yield() }
                        let envelope = Envelope(type: "command.applied", source: "catalog", data: Self.result(id))
                        _ = try await producer.send(KafkaOutgoingMessage(topic: topic, key: id.uuidString.lowercased(), value: try envelope.encoded()))
                        return true
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(answered == 600)
        }
    }

    @Test("over the broker: a result nobody waits for yet is kept as it came and read when taken; an undecodable one is dropped, not delivered")
    func resultsKeptUntilTaken() async throws {
        try await withListeningClient { client, producer, topic in
            let early = UUID.random(), garbled = UUID.random(), marker = UUID.random()
            func publish(_ id: UUID, _ value: [UInt8]) async throws {
                // One partition: the marker's arrival says the others arrived before it.
                _ = try await producer.send(KafkaOutgoingMessage(topic: topic, key: id.uuidString.lowercased(), value: value, partition: 0))
            }
            try await publish(early, try Envelope(type: "command.applied", source: "catalog", data: Self.result(early)).encoded())
            try await publish(garbled, Array(#"{"id": "not an envelope"#.utf8))
            try await publish(marker, try Envelope(type: "command.applied", source: "catalog", data: Self.result(marker)).encoded())
            #expect(try await client.result(of: marker, timeout: .seconds(30)).commandId == marker)
            // Both arrived before anyone waited: the good one is read now, the garbled one was not a result.
            #expect(try await client.result(of: early, timeout: .seconds(30)).commandId == early)
            await #expect(throws: CatalogCommandClient.CommandError.self) { try await client.result(of: garbled, timeout: .milliseconds(500)) }
            // Sent again well-formed, while its caller waits, it is delivered.
            async let answer = client.result(of: garbled, timeout: .seconds(30))
            try await Task.sleep(for: .milliseconds(100))
            try await publish(garbled, try Envelope(type: "command.applied", source: "catalog", data: Self.result(garbled)).encoded())
            #expect(try await answer.commandId == garbled)
        }
    }

    @Test("results nobody waits for are kept up to a byte budget, the oldest dropped first; one keyed by another command is not its answer")
    func earlyResultsBounded() async throws {
        let configuration = TestServices.kafka()
        let producer = try KafkaProducer(configuration: configuration, logger: logger)
        let client = CatalogCommandClient(producer: producer, configuration: configuration, startup: StartupBarrier(), source: "test", logger: logger)
        // Forty answers of about a megabyte each, as imports' are, arriving before anyone waits.
        let ids = (0..<40).map { _ in UUID.random() }
        for id in ids {
            var result = Self.result(id)
            result.message = String(repeating: "x", count: 1 << 20)
            client.deliver(message: try Envelope(type: "command.applied", source: "catalog", data: result).encoded(), commandId: id)
        }
        #expect(try await client.result(of: ids[39], timeout: .seconds(30)).message?.count == 1 << 20)
        #expect(try await client.result(of: ids[20], timeout: .seconds(30)).commandId == ids[20])
        for oldest in ids.prefix(4) {
            // The answer is discarded: a failure's message would otherwise print its megabyte.
            await #expect(throws: CatalogCommandClient.CommandError.self) { _ = try await client.result(of: oldest, timeout: .milliseconds(200)).commandId }
        }
        // A message keyed by one command that holds another's answer is neither's.
        let asked = UUID.random(), other = UUID.random()
        client.deliver(message: try Envelope(type: "command.applied", source: "catalog", data: Self.result(other)).encoded(), commandId: asked)
        await #expect(throws: CatalogCommandClient.CommandError.self) { _ = try await client.result(of: asked, timeout: .milliseconds(200)).commandId }
        await producer.shutdown()
    }

    @Test("a caller whose result never comes gets noAnswer after its timeout, and its waiter is gone")
    func timeout() async throws {
        let configuration = TestServices.kafka()
        let producer = try KafkaProducer(configuration: configuration, logger: logger)
        let client = CatalogCommandClient(producer: producer, configuration: configuration, startup: StartupBarrier(), source: "test", logger: logger)
        let id = UUID()
        await #expect(throws: CatalogCommandClient.CommandError.self) {
            try await client.result(of: id, timeout: .milliseconds(100))
        }
        // The late result is kept for a caller still to come, not handed to the one that gave up.
        client.deliver(Self.result(id))
        #expect(try await client.result(of: id, timeout: .milliseconds(100)).commandId == id)
        await producer.shutdown()
    }
}

/// A reference filled in after the closure that reads it was made.
private final class Box<Value: Sendable>: Sendable {
    private let stored = Mutex<Value?>(nil)
    var value: Value? {
        get { stored.withLock { $0 } }
        set { stored.withLock { $0 = newValue } }
    }
}
