import Foundation
import HummingbirdTesting
import PostgresNIO
import Shared
import Testing
import TestSupport
@testable import Catalog

/// The catalog service as it runs, on the real Postgres and broker: commands arrive on `catalog.commands`,
/// results leave on `catalog.command-results`, and the outbox reaches `catalog.events` in order.
@Suite("Catalog service over the broker", .serialized, .stopsIfHung)
struct CatalogServiceTests {
    let logger = TestServices.logger

    /// Runs catalog and a command client; `events` reads `catalog.events` from the beginning.
    func withCatalog(_ body: @Sendable (CatalogCommandClient, KafkaConsumer, DatabaseSettings, KafkaConfiguration) async throws -> Void) async throws {
        let database = try await TestServices.freshDatabase()
        let kafka = TestServices.kafka()
        let catalog = try Catalog.buildApplication(settings: TestServices.serviceSettings(name: "catalog", database: database, kafka: kafka))
        let producer = try KafkaProducer(configuration: kafka, logger: logger)
        let startup = StartupBarrier()
        let commands = CatalogCommandClient(producer: producer, configuration: kafka, startup: startup, source: "test", logger: logger)
        try await catalog.test(.router) { client in
            try await TestServices.waitUntilReady(client, "catalog")
            startup.open()
            let events = try await KafkaConsumer.open(configuration: kafka, subscription: .allPartitions(topics: [kafka.topic(Topic.catalogEvents)], from: .beginning),
                                                      logger: logger)
            try await TestServices.withServices([producer, commands]) {
                // The first command waits for catalog's consumer group to form, which takes a while on a fresh broker.
                let warmUp = try await commands.execute(CatalogCommand(action: .snapshot, actor: "test"), timeout: .seconds(60))
                try #require(warmUp.outcome == .applied)
                try await body(commands, events, database, kafka)
            }
            await events.close()
        }
    }

    /// Reads events until `count` arrived (or `timeout` passed), leaving out the warm-up snapshot's markers.
    func read(_ count: Int, from consumer: KafkaConsumer, timeout: Duration = .seconds(15)) async throws -> [EnvelopeHeader] {
        var headers: [EnvelopeHeader] = []
        let deadline = ContinuousClock.now + timeout
        while headers.count < count, ContinuousClock.now < deadline {
            for message in try await consumer.poll(maxMessages: 100, timeout: .milliseconds(200)) {
                let header = try EnvelopeDecoder.header(message.value)
                if header.type != CatalogEvent.Kind.snapshotMarker.rawValue { headers.append(header) }
            }
        }
        return headers
    }

    @Test("each applied command's events reach catalog.events once; its result comes back; a resent command is answered again, not reapplied")
    func commandsOverTheBroker() async throws {
        try await withCatalog { commands, events, database, _ in
            let category = try await commands.executeInTest(CatalogCommand(action: .createCategory, actor: "t", category: CategoryContent(name: "Eat")))
            #expect(category.outcome == .applied)
            let poi = CatalogCommand(action: .createPoi, actor: "t", poi: PoiContent(name: "Café", latitude: 34.2, longitude: -77.8, category: "Eat"))
            let created = try await commands.executeInTest(poi)
            #expect(created.outcome == .applied)
            #expect(created.poi?.content.category == "Eat")
            let resent = try await commands.executeInTest(poi)
            #expect(resent.repeated == true && created.repeated == nil)
            var unmarked = resent
            unmarked.repeated = nil
            #expect(unmarked == created)
            let refused = try await commands.executeInTest(CatalogCommand(action: .createPoi, actor: "t", poi: PoiContent(name: "X", latitude: -91, longitude: 0)))
            #expect(refused.outcome == .rejected)
            #expect(refused.errors == [FieldError(field: "latitude", message: "Latitude must be between -90 and 90")])
            let stale = try await commands.executeInTest(CatalogCommand(action: .updatePoi, actor: "t", entityId: created.entityId, expectedVersion: 7,
                                                                  poi: PoiContent(name: "Y", latitude: 0, longitude: 0)))
            #expect(stale.outcome == .conflict)
            #expect(stale.poi?.content.name == "Café")

            let seen = try await read(2, from: events)
            // Keyed by entity, so on different partitions: compare without order.
            #expect(seen.map(\.type).sorted() == ["category.changed", "poi.changed"])
            #expect(try await read(1, from: events, timeout: .seconds(2)).isEmpty, "nothing more: the resend, the refusal and the conflict publish no event")
            let backlog = try await TestServices.eventually {
                try await TestServices.withPostgres(database) { client in
                    try await client.fetch("SELECT count(*)::bigint FROM catalog.outbox", as: Int.self, logger: logger) == [0]
                }
            }
            #expect(backlog, "the relay drained the outbox")
        }
    }

    @Test("a command the database cannot store is answered as rejected, and the commands after it still go through")
    func poisonCommand() async throws {
        try await withCatalog { commands, _, _, _ in
            // Content is validated (no NUL), but the actor is not: Postgres refuses NUL in text.
            let poison = try await commands.executeInTest(CatalogCommand(action: .createTour, actor: "x\u{0}y", tour: TourContent(name: "Poison")))
            #expect(poison.outcome == .rejected)
            #expect(poison.message?.hasPrefix("catalog could not store this command") == true)
            let next = try await commands.executeInTest(CatalogCommand(action: .createTour, actor: "t", tour: TourContent(name: "After the poison")))
            #expect(next.outcome == .applied)
            let refused = try await commands.executeInTest(CatalogCommand(action: .createTour, actor: "t", tour: TourContent(name: "NUL\u{0}name")))
            #expect(refused.errors == [FieldError(field: "name", message: "Tour's Name must not contain control characters")])
        }
    }

    @Test("unreadable messages among commands in one batch: each is dead-lettered with its bytes, and the commands around them are applied")
    func unreadableAmongCommands() async throws {
        try await withCatalog { commands, _, _, kafka in
            let producer = try KafkaProducer(configuration: kafka, logger: logger)
            let topic = kafka.topic(Topic.catalogCommands)
            let first = CatalogCommand(action: .createTour, actor: "t", tour: TourContent(name: "First"))
            let second = CatalogCommand(action: .createTour, actor: "t", tour: TourContent(name: "Second"))
            func message(_ bytes: [UInt8]) -> KafkaOutgoingMessage { KafkaOutgoingMessage(topic: topic, key: "batch", value: bytes, partition: 0) }
            func message(_ command: CatalogCommand) -> KafkaOutgoingMessage {
                var message = message(CatalogEventCodec.write(Envelope(type: command.action.rawValue, source: "test", data: command)))
                message.headers = [TestServices.commandSignature.header(for: Array(message.value))]
                return message
            }
            let unreadable = ["{\"type\":\"tour.create\",", "[1,2,3]"]
            let batch = [message(Array(unreadable[0].utf8)), message(first), message(Array(unreadable[1].utf8)), message(second)]
            try await TestServices.withServices([producer]) {
                // One send to one partition: catalog reads them in one poll, each command while the one before it is handled.
                _ = try await producer.send(batch)
            }
            #expect(try await commands.result(of: first.commandId, timeout: .seconds(30)).outcome == .applied)
            #expect(try await commands.result(of: second.commandId, timeout: .seconds(30)).outcome == .applied)
            let letters = try await TestServices.deadLetters(kafka, count: 2)
            #expect(letters.map(\.data.value) == unreadable)
            #expect(letters.allSatisfy { !$0.data.reason.isEmpty }, "\(letters.map(\.data.reason))")
        }
    }

    @Test("a command written straight to the broker is applied only with a valid signature: unsigned, forged or tampered ones are set aside and audited nowhere")
    func signedCommands() async throws {
        try await withCatalog { commands, _, database, kafka in
            let producer = try KafkaProducer(configuration: kafka, logger: logger)
            let topic = kafka.topic(Topic.catalogCommands)
            let tour = try await commands.executeInTest(CatalogCommand(action: .createTour, actor: "editor@example.edu", tour: TourContent(name: "Ours")))
            try #require(tour.outcome == .applied)
            func update(_ name: String) -> CatalogCommand {
                CatalogCommand(action: .updateTour, actor: "admin@example.edu", entityId: tour.entityId, tour: TourContent(name: name))
            }
            func send(_ command: CatalogCommand, signedWith key: String?, tamper: Bool = false) -> KafkaOutgoingMessage {
                var value = CatalogEventCodec.write(Envelope(type: command.action.rawValue, source: "attacker", data: command))
                let headers = try! key.map { [try CommandSignature(key: $0).header(for: value)] } ?? []
                if tamper { value = Array(String(decoding: value, as: UTF8.self).replacingOccurrences(of: "Forged 3", with: "Forged 4").utf8) }
                return KafkaOutgoingMessage(topic: topic, key: command.key, value: value, partition: 0, headers: headers)
            }
            let forged = [send(update("Forged 1"), signedWith: nil), send(update("Forged 2"), signedWith: "a-key-of-the-attackers-own"),
                          send(update("Forged 3"), signedWith: TestServices.commandKey, tamper: true)]
            try await TestServices.withServices([producer]) { _ = try await producer.send(forged) }
            let letters = try await TestServices.deadLetters(kafka, count: 3)
            #expect(letters.count == 3 && letters.allSatisfy { $0.data.reason.hasPrefix("unsigned") }, "\(letters.map(\.data.reason))")
            // A signed command after them is applied: nothing of the forged ones was.
            let signed = try await commands.executeInTest(CatalogCommand(action: .updateTour, actor: "editor@example.edu", entityId: tour.entityId,
                                                                       expectedVersion: tour.version, tour: TourContent(name: "Ours, renamed")))
            #expect(signed.outcome == .applied, "the forged updates changed nothing, so the version is still the one we read")
            let audit = try await TestServices.withPostgres(database) { client in
                try await client.fetch("SELECT actor FROM catalog.audit_log WHERE entity_id = \(tour.entityId) ORDER BY id", as: String.self, logger: logger)
            }
            #expect(audit == ["editor@example.edu", "editor@example.edu"], "the forged actor appears nowhere")
        }
    }

    @Test("unsigned snapshot requests are answered in a burst of 16, then one per 30 s")
    func unsignedSnapshotAllowance() {
        let allowance = UnsignedSnapshotAllowance()
        let start = ContinuousClock.now
        #expect((0..<16).allSatisfy { _ in allowance.take(now: start) })
        #expect(!allowance.take(now: start))
        #expect(allowance.take(now: start + .seconds(30)) && !allowance.take(now: start + .seconds(30)))
    }

    @Test("the previous command key is accepted while the key is rotated; a key too short is refused at start")
    func keyRotation() throws {
        let previous = try CommandSignature(key: "the-old-command-key")
        let rotating = try CommandSignature(key: "the-new-command-key", previousKey: "the-old-command-key")
        let value = Array("{\"a\":1}".utf8)
        let (_, oldSignature) = previous.header(for: value)
        #expect(rotating.isValid(String(decoding: oldSignature, as: UTF8.self), for: value))
        #expect(!(try CommandSignature(key: "the-new-command-key")).isValid(String(decoding: oldSignature, as: UTF8.self), for: value))
        #expect(!rotating.isValid(String(decoding: oldSignature, as: UTF8.self), for: value + [0x20]))
        #expect(throws: ConfigurationError.self) { try CommandSignature(key: "short") }
        #expect(throws: ConfigurationError.self) { try CommandSignature(environment: Environment([:])) }
        #expect((try? CommandSignature(environment: Environment(["ITOUR_DEMO": "1"]))) != nil)
    }

    @Test("a bulk import over the broker: its result carries the per-row report")
    func importOverTheBroker() async throws {
        try await withCatalog { commands, events, _, _ in
            let plan = try ContentImportFile.plan(Data("""
                name,latitude,longitude,category
                Bank,53.8,-1.54,Shop/Fashion
                Nowhere,95,0,
                """.utf8), format: .csv, actor: "import")
            let refused = try await commands.executeInTest(plan.command(actor: "owner", skipInvalidRows: false))
            #expect(refused.outcome == .rejected)
            // The category row ensures the whole path Shop/Fashion.
            #expect(refused.rows?.map(\.label) == ["category Shop/Fashion", "line 2", "line 3"])
            #expect(refused.rows?.map(\.outcome) == [.notApplied, .notApplied, .failed])
            let skipped = try await commands.executeInTest(plan.command(actor: "owner", skipInvalidRows: true))
            #expect(skipped.outcome == .applied)
            #expect(skipped.message == "imported 1 of 2 rows and 1 category; 1 row failed and was skipped")
            #expect(try await read(3, from: events).map(\.type).sorted() == ["category.changed", "category.changed", "poi.changed"])
        }
    }
}
