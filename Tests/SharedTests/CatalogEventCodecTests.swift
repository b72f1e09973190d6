import Foundation
@testable import Shared
import Testing
import TestSupport

/// The catalog.events codec against Foundation's JSONEncoder and JSONDecoder (JSONCoding), which read and
/// wrote these messages before it: what either writes, both read to the same values; on damaged input the
/// fast reader takes nothing Foundation would refuse or read differently.
@Suite("catalog.events codec", .stopsIfHung)
struct CatalogEventCodecTests {
    @Test("random events, snapshot chunks among them: the codec's bytes read back equal by JSONDecoder and by the codec; JSONEncoder's by the codec")
    func roundTrip() throws {
        var random = SplitMix64(seed: 16)
        for round in 0..<3_000 {
            let envelope = Self.envelope(&random)
            let ours = CatalogEventCodec.write(envelope)
            let foundation = try JSONCoding.decoder.decode(Envelope<CatalogEvent>.self, from: Data(ours))
            #expect(Self.same(foundation, envelope), "round \(round): \(String(decoding: ours.prefix(400), as: UTF8.self))")
            let theirs = Array(try JSONCoding.encoder.encode(envelope))
            for bytes in [ours, theirs] {
                // Another type is not a catalog event, whatever its data: the fast reader says which type it is.
                guard CatalogEvent.Kind(rawValue: envelope.type) != nil else {
                    guard case .other(let type)? = CatalogEventCodec.readFast(bytes) else { Issue.record("read as a catalog event"); continue }
                    #expect(type == envelope.type)
                    continue
                }
                guard case .catalog(let read)? = CatalogEventCodec.readFast(bytes) else {
                    Issue.record("fast reader refused round \(round): \(String(decoding: bytes.prefix(400), as: UTF8.self))")
                    continue
                }
                #expect(Self.same(read, envelope), "round \(round)")
            }
        }
    }

    @Test("stored content and audited states: the codec's text reads back equal by JSONDecoder, and JSONEncoder's content by the codec")
    func content() throws {
        var random = SplitMix64(seed: 7)
        for _ in 0..<2_000 {
            let poi = Self.poiContent(&random), tour = Self.tourContent(&random)
            #expect(try JSONCoding.decoder.decode(PoiContent.self, from: Data(CatalogEventCodec.text(poi).utf8)) == poi)
            #expect(try JSONCoding.decoder.decode(TourContent.self, from: Data(CatalogEventCodec.text(tour).utf8)) == tour)
            #expect(try CatalogEventCodec.readPoiContent(Array(try JSONCoding.encoder.encode(poi))) == poi)
            #expect(try CatalogEventCodec.readTourContent(Array(try JSONCoding.encoder.encode(tour))) == tour)
            let poiState = Self.poiState(&random), tourState = Self.tourState(&random)
            #expect(try JSONCoding.decoder.decode(PoiState.self, from: Data(CatalogEventCodec.text(poiState).utf8)) == poiState)
            #expect(try JSONCoding.decoder.decode(TourState.self, from: Data(CatalogEventCodec.text(tourState).utf8)) == tourState)
        }
    }

    @Test("command results, stored and as messages: the codec's text reads back equal by JSONDecoder")
    func commandResults() throws {
        var random = SplitMix64(seed: 23)
        for round in 0..<2_000 {
            let errors = (0..<random.below(3)).map { _ in FieldError(field: Self.text(&random), message: Self.text(&random)) }
            var result = CatalogCommandResult(
                commandId: UUID(), action: random.pick(CatalogAction.allCases), outcome: random.pick([.applied, .rejected, .conflict]),
                entityId: random.chance(2) ? UUID() : nil, version: random.chance(2) ? random.below(1_000) : nil, errors: errors,
                message: Self.optionalText(&random), tour: random.chance(3) ? Self.tourState(&random) : nil,
                poi: random.chance(3) ? Self.poiState(&random) : nil,
                category: random.chance(4) ? CategoryState(id: UUID(), version: random.below(9), name: Self.text(&random),
                                                           parentId: random.chance(2) ? UUID() : nil, path: Self.text(&random), updatedAt: Self.date(&random),
                                                           translations: Self.translations(&random, fields: CategoryState.translatableFields)) : nil,
                rows: random.chance(4) ? (0..<random.below(4)).map { _ in
                    CatalogBatchRowResult(label: Self.text(&random), outcome: random.pick([.applied, .failed, .notApplied]), errors: errors,
                                          message: Self.optionalText(&random), entityIds: (0..<random.below(3)).map { _ in UUID() })
                } : nil)
            func state<Content>(_ content: Content) -> CatalogRecordState<Content> {
                CatalogRecordState(id: UUID(), version: random.below(99), status: random.pick(ContentStatus.allCases), content: content,
                                   updatedAt: Self.date(&random))
            }
            switch random.below(8) {
            case 0: result.calendarEntry = state(Self.calendarEntry(&random))
            case 1: result.person = state(Self.person(&random))
            case 2: result.page = state(Self.page(&random))
            case 3: result.featured = state(Self.featured(&random))
            case 4: result.media = state(Self.media(&random))
            default: break
            }
            let stored = CatalogEventCodec.text(result)
            #expect(try JSONCoding.decoder.decode(CatalogCommandResult.self, from: Data(stored.utf8)) == result, "round \(round): \(stored)")
            #expect(try JSONSerialization.jsonObject(with: Data(stored.utf8)) as? NSDictionary
                == JSONSerialization.jsonObject(with: try JSONCoding.encoder.encode(result)) as? NSDictionary, "round \(round): \(stored)")
            let envelope = Envelope(type: "command.\(result.outcome.rawValue)", source: "catalog", data: result)
            let message = try JSONCoding.decoder.decode(Envelope<CatalogCommandResult>.self, from: Data(CatalogEventCodec.write(envelope)))
            #expect(message.data == result && message.id == envelope.id && message.type == envelope.type && abs(message.occurredAt.timeIntervalSince(envelope.occurredAt)) < 0.001)
        }
    }

    @Test("content as Postgres keeps it (jsonb, read back as text), records' among it, is taken by the fast reader and reads back equal")
    func contentFromPostgres() async throws {
        var random = SplitMix64(seed: 11)
        let pois = (0..<300).map { _ in Self.poiContent(&random) }, tours = (0..<300).map { _ in Self.tourContent(&random) }
        let entries = (0..<100).map { _ in Self.calendarEntry(&random) }, people = (0..<100).map { _ in Self.person(&random) }
        let mediaItems = (0..<100).map { _ in Self.media(&random) }, pages = (0..<50).map { _ in Self.page(&random) }
        let featuredItems = (0..<50).map { _ in Self.featured(&random) }
        let database = try await TestServices.freshDatabase()
        try await TestServices.withPostgres(database) { client in
            for poi in pois {
                let stored = try await client.fetch("SELECT \(CatalogEventCodec.text(poi))::jsonb::text", as: String.self, logger: TestServices.logger)
                #expect(CatalogEventCodec.readFastPoiContent(Array(stored[0].utf8)) == poi, "\(stored[0])")
            }
            for tour in tours {
                let stored = try await client.fetch("SELECT \(CatalogEventCodec.text(tour))::jsonb::text", as: String.self, logger: TestServices.logger)
                #expect(CatalogEventCodec.readFastTourContent(Array(stored[0].utf8)) == tour, "\(stored[0])")
            }
            func check<Content: CatalogRecordContent>(_ record: Content) async throws {
                let stored = try await client.fetch("SELECT \(CatalogEventCodec.text(record))::jsonb::text", as: String.self, logger: TestServices.logger)
                #expect(CatalogEventCodec.readFastRecordContent(Content.self, from: Array(stored[0].utf8)) == record, "\(stored[0])")
            }
            for entry in entries { try await check(entry) }
            for person in people { try await check(person) }
            for media in mediaItems { try await check(media) }
            for page in pages { try await check(page) }
            for item in featuredItems { try await check(item) }
        }
    }

    @Test("escapes and integer edges: \\u escapes and surrogate pairs read fast; integers past 2^53 go to JSONDecoder and read back exact")
    func escapesAndIntegerEdges() throws {
        let escaped = #"{"buildings":[],"description":"","latitude":1,"links":[],"longitude":-2.5,"name":"\u0048\u00e9\ud83c\udfdb\u2028\/","pictures":[],"summary":""}"#
        #expect(CatalogEventCodec.readFastPoiContent(Array(escaped.utf8))?.name == "H\u{E9}\u{1F3DB}\u{2028}/")
        #expect(CatalogEventCodec.readFastPoiContent(Array(escaped.replacingOccurrences(of: #"\ud83c\udfdb"#, with: #"\ud83c"#).utf8)) == nil)
        for legacyId in [0, -1, 9_007_199_254_740_991, -9_007_199_254_740_991, 9_007_199_254_740_992, Int.max, Int.min] {
            let poi = PoiContent(name: "n", latitude: 1, longitude: 2, legacyId: legacyId)
            let text = Array(CatalogEventCodec.text(poi).utf8)
            #expect(try CatalogEventCodec.readPoiContent(text) == poi, "\(legacyId)")
            #expect((CatalogEventCodec.readFastPoiContent(text) != nil) == (abs(Double(legacyId)) < 9_007_199_254_740_992), "\(legacyId)")
        }
    }

    @Test("damaged messages: the fast reader takes one only where JSONDecoder reads the same values; read() answers what JSONDecoder answers")
    func damaged() throws {
        var random = SplitMix64(seed: 2_026)
        var fastTook = 0, refused = 0
        for round in 0..<6_000 {
            var bytes = random.chance(2) ? CatalogEventCodec.write(Self.envelope(&random)) : Array(try JSONCoding.encoder.encode(Self.envelope(&random)))
            for _ in 0..<random.below(3) { Self.damage(&bytes, &random) }
            let foundation = try? JSONCoding.decoder.decode(Envelope<CatalogEvent>.self, from: Data(bytes))
            let shown = "round \(round): \(String(decoding: bytes.prefix(300), as: UTF8.self).debugDescription)"
            if case .catalog(let fast)? = CatalogEventCodec.readFast(bytes) {
                fastTook += 1
                guard let foundation else { Issue.record("fast reader took what JSONDecoder refuses: \(shown)"); continue }
                #expect(Self.same(fast, foundation), "\(shown)")
            }
            switch Result(catching: { () throws(EnvelopeError) in try CatalogEventCodec.read(bytes) }) {
            case .success(.catalog(let read)):
                #expect(foundation.map { Self.same(read, $0) } == true, "\(shown)")
            case .success(.other(let type)):
                #expect(CatalogEvent.Kind(rawValue: type) == nil && (try? EnvelopeDecoder.header(bytes).type) == type, "\(shown)")
            case .failure:
                refused += 1
                // JSONDecoder alone does not check the schema version; the codec refuses one it does not know.
                #expect(foundation.map { !(1...Envelope<Int>.currentSchemaVersion).contains($0.schemaVersion) } ?? true, "\(shown)")
            }
        }
        // The damage must leave both kinds of input.
        #expect(fastTook > 500 && refused > 500, "fast reader took \(fastTook), refused \(refused)")
    }

    @Test("a calendar command, as JSONEncoder writes it, is read whole by the fast reader")
    func calendarCommand() throws {
        let entry = CalendarEntryContent(title: "Open Day", startsAt: "2026-12-05T09:00", endsAt: "2026-12-05T16:00", timeZone: "America/New_York",
                                         recurrence: CalendarRecurrence(frequency: .weekly, byDay: ["TU"], count: 3), exceptionDates: ["2026-12-08T09:00"])
        let command = CatalogCommand(action: .createCalendarEntry, actor: "a", entityId: UUID(), status: .published, calendarEntry: entry)
        let bytes = try Envelope(type: command.action.rawValue, source: "admin", data: command).encoded()
        #expect(CatalogEventCodec.readFastCommand(bytes)?.data == command)
    }

    @Test("record events of every kind: the codec's bytes read back equal by JSONDecoder and by the codec, JSONEncoder's by the codec; read() names their type")
    func recordEvents() throws {
        var random = SplitMix64(seed: 18)
        for round in 0..<3_000 {
            switch round % 5 {
            case 0: try Self.checkRecordEvent(Self.calendarEntry(&random), &random, round)
            case 1: try Self.checkRecordEvent(Self.person(&random), &random, round)
            case 2: try Self.checkRecordEvent(Self.page(&random), &random, round)
            case 3: try Self.checkRecordEvent(Self.featured(&random), &random, round)
            default: try Self.checkRecordEvent(Self.media(&random), &random, round)
            }
        }
    }

    static func checkRecordEvent<Content: CatalogRecordContent>(_ content: Content, _ random: inout SplitMix64, _ round: Int) throws {
        let state = CatalogRecordState(id: UUID(), version: random.below(1_000), status: random.pick(ContentStatus.allCases), content: content,
                                       updatedAt: date(&random))
        let event = random.chance(4) ? CatalogRecordEvent<Content>(kind: .deleted, entityId: state.id, version: state.version)
            : CatalogRecordEvent.changed(state, snapshotId: random.chance(2) ? UUID() : nil)
        let envelope = Envelope(id: UUID(), type: event.type, occurredAt: date(&random), source: text(&random), data: event)
        let ours = CatalogEventCodec.write(envelope), theirs = Array(try JSONCoding.encoder.encode(envelope))
        let shown = "round \(round): \(String(decoding: ours.prefix(400), as: UTF8.self))"
        let foundation = try JSONCoding.decoder.decode(Envelope<CatalogRecordEvent<Content>>.self, from: Data(ours))
        #expect(foundation.data == event && foundation.id == envelope.id && foundation.occurredAt == envelope.occurredAt, "\(shown)")
        // The same members as JSONEncoder writes, key for key.
        #expect(try JSONSerialization.jsonObject(with: Data(ours)) as? NSDictionary == JSONSerialization.jsonObject(with: Data(theirs)) as? NSDictionary,
                "\(shown)")
        for bytes in [ours, theirs] {
            let fast = CatalogEventCodec.readFastRecordEvent(Content.self, from: bytes)
            #expect(fast?.data == event && fast?.id == envelope.id && fast?.occurredAt == envelope.occurredAt, "\(shown)")
            guard case .other(let type)? = CatalogEventCodec.readFast(bytes) else { Issue.record("not read as another type: \(shown)"); continue }
            #expect(type == event.type)
        }
        #expect(try JSONCoding.decoder.decode(Content.self, from: Data(CatalogEventCodec.text(content).utf8)) == content, "\(shown)")
        #expect(CatalogEventCodec.readFastRecordContent(Content.self, from: Array(try JSONCoding.encoder.encode(content))) == content, "\(shown)")
        #expect(try JSONCoding.decoder.decode(CatalogRecordState<Content>.self, from: Data(CatalogEventCodec.text(state).utf8)) == state, "\(shown)")
    }

    @Test("damaged record events and content, every kind: the fast reader takes one only where JSONDecoder reads the same values")
    func damagedRecordEvents() throws {
        var random = SplitMix64(seed: 1_818)
        var tally = (fastTook: 0, refused: 0)
        for round in 0..<5_000 {
            switch round % 5 {
            case 0:
                var entry = Self.calendarEntry(&random)
                if random.chance(2) { entry.recurrence = CalendarRecurrence(frequency: .weekly, interval: 2, byDay: ["MO", "TH"], count: 4) }
                try Self.checkDamaged(entry, &random, round, &tally)
            case 1: try Self.checkDamaged(Self.person(&random), &random, round, &tally)
            case 2: try Self.checkDamaged(Self.page(&random), &random, round, &tally)
            case 3: try Self.checkDamaged(Self.featured(&random), &random, round, &tally)
            default: try Self.checkDamaged(Self.media(&random), &random, round, &tally)
            }
        }
        #expect(tally.fastTook > 500 && tally.refused > 1_000, "fast reader took \(tally.fastTook), refused \(tally.refused)")
    }

    static func checkDamaged<Content: CatalogRecordContent>(_ content: Content, _ random: inout SplitMix64, _ round: Int,
                                                            _ tally: inout (fastTook: Int, refused: Int)) throws {
        let state = CatalogRecordState(id: UUID(), version: random.below(99), status: .published, content: content, updatedAt: date(&random))
        let event = CatalogRecordEvent.changed(state)
        let envelope = Envelope(type: event.type, source: "catalog", data: event)
        var bytes = random.chance(2) ? CatalogEventCodec.write(envelope) : Array(try JSONCoding.encoder.encode(envelope))
        for _ in 0..<(1 + random.below(2)) { damage(&bytes, &random) }
        let foundation = try? JSONCoding.decoder.decode(Envelope<CatalogRecordEvent<Content>>.self, from: Data(bytes))
        let shown = "round \(round): \(String(decoding: bytes.prefix(300), as: UTF8.self).debugDescription)"
        if let fast = CatalogEventCodec.readFastRecordEvent(Content.self, from: bytes) {
            tally.fastTook += 1
            guard let foundation else { Issue.record("fast reader took what JSONDecoder refuses: \(shown)"); return }
            #expect(fast.data == foundation.data && fast.id == foundation.id && fast.occurredAt == foundation.occurredAt, "\(shown)")
        } else {
            tally.refused += 1
        }
        if let read = try? CatalogEventCodec.readRecordEvent(Content.self, from: bytes) {
            #expect(read.data == foundation?.data, "\(shown)")
        } else {
            #expect(foundation.map { !(1...Envelope<Int>.currentSchemaVersion).contains($0.schemaVersion) } ?? true, "\(shown)")
        }
        // Stored content, damaged the same ways.
        var stored = Array(CatalogEventCodec.text(content).utf8)
        damage(&stored, &random)
        let storedByFoundation = try? JSONCoding.decoder.decode(Content.self, from: Data(stored))
        if let fast = CatalogEventCodec.readFastRecordContent(Content.self, from: stored) {
            #expect(fast == storedByFoundation, "round \(round): \(String(decoding: stored, as: UTF8.self).debugDescription)")
        }
    }

    @Test("UUIDs sort as their uuidString does (the feed's orders and cursors count on it)")
    func uuidOrder() {
        var random = SplitMix64(seed: 5)
        let edges = ["00000000-0000-0000-0000-000000000000", "00000000-0000-0000-0000-00000000000A", "00000000-0000-0000-0000-000000000009",
                     "A0000000-0000-0000-0000-000000000000", "90000000-0000-0000-0000-000000000000", "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF"]
            .compactMap(UUID.init(uuidString:))
        let randomOnes = (0..<2_000).map { _ in
            UUID(uuid: withUnsafeBytes(of: (random.next(), random.next())) { $0.load(as: uuid_t.self) })
        }
        let ids = edges + randomOnes
        for (a, b) in zip(ids, ids.dropFirst() + ids.prefix(1)) {
            #expect((a < b) == (a.uuidString < b.uuidString), "\(a) \(b)")
        }
    }

    @Test("commands, imports among them: JSONEncoder's bytes read by the fast reader equal JSONDecoder's reading; damaged ones taken only where JSONDecoder reads the same")
    func commands() throws {
        var random = SplitMix64(seed: 31)
        var fastTook = 0, refused = 0
        for round in 0..<3_000 {
            let envelope = Envelope(id: UUID(), type: "catalog.import", occurredAt: Self.date(&random), source: Self.text(&random),
                                    data: Self.command(&random, depth: 0))
            var bytes = Array(try JSONCoding.encoder.encode(envelope))
            let intact = round % 2 == 0
            if !intact { for _ in 0..<(1 + random.below(2)) { Self.damage(&bytes, &random) } }
            let foundation = try? JSONCoding.decoder.decode(Envelope<CatalogCommand>.self, from: Data(bytes))
            let shown = "round \(round): \(String(decoding: bytes.prefix(300), as: UTF8.self).debugDescription)"
            if let fast = CatalogEventCodec.readFastCommand(bytes) {
                fastTook += 1
                guard let foundation else { Issue.record("fast reader took what JSONDecoder refuses: \(shown)"); continue }
                #expect(fast.data == foundation.data && fast.id == foundation.id && fast.type == foundation.type
                    && fast.occurredAt == foundation.occurredAt && fast.source == foundation.source, "\(shown)")
            } else if intact {
                Issue.record("fast reader refused an intact command: \(shown)")
            }
            if let read = try? CatalogEventCodec.readCommand(bytes) {
                #expect(read.data == foundation?.data, "\(shown)")
            } else {
                refused += 1
                #expect(foundation == nil, "\(shown)")
            }
        }
        #expect(fastTook > 1_500 && refused > 300, "fast reader took \(fastTook), refused \(refused)")
    }

    @Test("commands as the codec writes them, imports and records among them: JSONDecoder reads them equal, and they hold what JSONEncoder writes")
    func writtenCommands() throws {
        var random = SplitMix64(seed: 47)
        for round in 0..<2_000 {
            let command = Self.command(&random, depth: 0)
            let envelope = Envelope(id: UUID(), type: command.action.rawValue, occurredAt: Self.date(&random), source: Self.text(&random), data: command)
            let written = CatalogEventCodec.write(envelope)
            let shown = "round \(round): \(String(decoding: written.prefix(300), as: UTF8.self).debugDescription)"
            let read = try JSONCoding.decoder.decode(Envelope<CatalogCommand>.self, from: Data(written))
            #expect(read.data == command && read.id == envelope.id && read.occurredAt == envelope.occurredAt && read.source == envelope.source,
                    "\(shown)")
            let foundation = try JSONSerialization.jsonObject(with: try JSONCoding.encoder.encode(envelope)) as? NSDictionary
            let ours = try JSONSerialization.jsonObject(with: Data(written)) as? NSDictionary
            #expect(ours != nil && ours == foundation, "\(shown)")
            if let rows = command.rows, command.actor.utf8.count < 200 {
                // What cutting an import into commands counts on: its rows' sizes and 1 KiB cover the message (and a record
                // of the command's own, which an import's command has not).
                func size(_ record: (some CatalogRecordContent)?) -> Int { record.map { CatalogEventCodec.text($0).utf8.count + 20 } ?? 0 }
                let records: Int = size(command.calendarEntry) + size(command.person) + size(command.page) + size(command.featured)
                    + size(command.media)
                #expect(written.count <= rows.map { CatalogEventCodec.byteCount(of: $0) + 1 }.reduce(1_024 + records, +), "\(shown)")
            }
        }
    }

    // MARK: generators

    static func command(_ random: inout SplitMix64, depth: Int) -> CatalogCommand {
        var command = CatalogCommand(action: random.pick(CatalogAction.allCases), actor: text(&random), entityId: random.chance(3) ? nil : UUID(),
                                     expectedVersion: random.chance(2) ? nil : random.below(1_000))
        switch random.below(6) {
        case 0: command.poi = poiContent(&random)
        case 1: command.tour = tourContent(&random)
        case 2: command.stops = (0..<random.below(5)).map { _ in UUID() }
        case 3: command.status = random.pick(ContentStatus.allCases)
        case 4: command.category = CategoryContent(name: text(&random), parentId: random.chance(2) ? nil : UUID(), path: optionalText(&random),
                                                   translations: translations(&random, fields: CategoryContent.translatableFields))
        default:
            if depth < 2 {
                command.rows = (0..<random.below(4)).map { _ in
                    CatalogBatchRow(label: text(&random), commands: (0..<(1 + random.below(2))).map { _ in Self.command(&random, depth: depth + 1) })
                }
            }
        }
        if random.chance(3) { command.skipInvalidRows = random.chance(2) }
        if random.chance(5) { command.chunkedSnapshot = random.chance(2) }
        if random.chance(5) { command.revertToVersion = random.below(100) }
        if random.chance(5) { command.confirmFarStops = random.chance(2) }
        if random.chance(5) { command.asDraft = random.chance(2) }
        if random.chance(5) { command.scheduleAt = date(&random) }
        switch random.below(16) {
        case 0: command.calendarEntry = calendarEntry(&random)
        case 1: command.person = person(&random)
        case 2: command.page = page(&random)
        case 3: command.featured = featured(&random)
        case 4: command.media = media(&random)
        default: break
        }
        return command
    }

    static func calendarEntry(_ random: inout SplitMix64) -> CalendarEntryContent {
        CalendarEntryContent(title: text(&random), summary: text(&random), description: text(&random), startsAt: text(&random), endsAt: text(&random),
                             timeZone: text(&random), allDay: random.chance(2), placePoiId: random.chance(2) ? UUID() : nil,
                             placeText: optionalText(&random), url: optionalText(&random), registrationUrl: optionalText(&random),
                             categories: (0..<random.below(3)).map { _ in text(&random) },
                             recurrence: random.chance(2) ? nil : CalendarRecurrence(
                                frequency: random.pick(CalendarRecurrence.Frequency.allCases), interval: random.chance(2) ? nil : random.below(9),
                                byDay: random.chance(2) ? nil : (0..<random.below(3)).map { _ in text(&random) },
                                count: random.chance(2) ? nil : random.below(99), until: optionalText(&random)),
                             exceptionDates: (0..<random.below(3)).map { _ in text(&random) },
                             translations: translations(&random, fields: CalendarEntryContent.translatableFields))
    }

    static func person(_ random: inout SplitMix64) -> PersonContent {
        var person = personWithoutTranslations(&random)
        person.translations = PersonContent.tidy(translations(&random, fields: PersonContent.translatableFields))
        return person
    }

    static func personWithoutTranslations(_ random: inout SplitMix64) -> PersonContent {
        PersonContent(name: text(&random), role: text(&random), department: text(&random), email: optionalText(&random), phone: optionalText(&random),
                      officePoiId: random.chance(2) ? UUID() : nil, officeText: optionalText(&random),
                      interests: (0..<random.below(3)).map { _ in text(&random) }, profileUrl: optionalText(&random), photoUrl: optionalText(&random))
    }

    static func page(_ random: inout SplitMix64) -> PageContent {
        PageContent(slug: text(&random), title: text(&random), summary: text(&random), body: text(&random), order: random.below(200) - 100,
                    translations: translations(&random, fields: PageContent.translatableFields))
    }

    static func featured(_ random: inout SplitMix64) -> FeaturedContent {
        FeaturedContent(targetKind: random.pick(FeaturedContent.TargetKind.allCases), targetId: UUID(), title: optionalText(&random),
                        imageUrl: text(&random), imageAlt: text(&random), order: random.below(50),
                        translations: translations(&random, fields: FeaturedContent.translatableFields))
    }

    static func media(_ random: inout SplitMix64) -> MediaContent {
        MediaContent(sha256: text(&random), format: random.pick(MediaFormat.allCases), byteCount: random.below(1 << 30), fileName: text(&random),
                     title: text(&random), altText: optionalText(&random), width: random.chance(2) ? nil : random.below(4_000),
                     height: random.chance(2) ? nil : random.below(4_000),
                     variants: (0..<random.below(3)).map { _ in
                         MediaContent.Variant(width: random.below(1_280), height: random.below(1_280), sha256: text(&random), byteCount: random.below(1 << 20))
                     },
                     captions: optionalText(&random), captionsByteCount: random.chance(2) ? nil : random.below(9_999), transcript: optionalText(&random),
                     translations: translations(&random, fields: MediaContent.translatableFields))
    }

    static func same(_ a: Envelope<CatalogEvent>, _ b: Envelope<CatalogEvent>) -> Bool {
        a.id == b.id && a.type == b.type && a.schemaVersion == b.schemaVersion && a.occurredAt == b.occurredAt && a.source == b.source
            && a.data == b.data
    }

    static func envelope(_ random: inout SplitMix64) -> Envelope<CatalogEvent> {
        let kinds: [CatalogEvent.Kind] = [.tourChanged, .tourDeleted, .poiChanged, .poiDeleted, .snapshotMarker, .snapshotChunk]
        let kind = random.pick(kinds)
        var event = CatalogEvent(kind: kind, entityId: random.chance(5) ? nil : UUID(), version: random.chance(5) ? nil : random.below(1_000_000))
        switch kind {
        case .tourChanged: event.tour = tourState(&random)
        case .poiChanged: event.poi = poiState(&random)
        case .snapshotMarker:
            event.partition = Int32(random.below(12))
            event.partitionCount = 1 + random.below(12)
            event.snapshotId = UUID()
        case .snapshotChunk:
            event.snapshotId = UUID()
            if !random.chance(3) { event.pois = (0..<random.below(5)).map { _ in poiState(&random) } }
            if !random.chance(3) { event.tours = (0..<random.below(3)).map { _ in tourState(&random) } }
        case .tourDeleted, .poiDeleted: break
        }
        if random.chance(4) { event.snapshotId = UUID() }
        return Envelope(id: UUID(), type: random.chance(10) ? "something.else" : kind.rawValue, occurredAt: date(&random),
                        source: text(&random), data: event)
    }

    static func poiState(_ random: inout SplitMix64) -> PoiState {
        PoiState(id: UUID(), version: random.below(100_000), status: random.chance(2) ? .published : .draft, content: poiContent(&random),
                 updatedAt: date(&random), draft: random.chance(4) ? poiContent(&random) : nil)
    }

    static func tourState(_ random: inout SplitMix64) -> TourState {
        TourState(id: UUID(), version: random.below(100_000), status: random.pick(ContentStatus.allCases), content: tourContent(&random),
                  stops: (0..<random.below(6)).map { _ in UUID() }, updatedAt: date(&random))
    }

    static func poiContent(_ random: inout SplitMix64) -> PoiContent {
        PoiContent(name: text(&random), summary: text(&random), description: text(&random), latitude: number(&random), longitude: number(&random),
                   categories: (0..<random.below(4)).map { _ in text(&random) }, buildings: (0..<random.below(3)).map { _ in text(&random) },
                   pictures: (0..<random.below(3)).map { _ in text(&random) },
                   links: (0..<random.below(3)).map { _ in MediaLink(name: text(&random), type: random.pick(MediaType.allCases), url: text(&random)) },
                   address: optionalText(&random), phone: optionalText(&random), website: optionalText(&random),
                   openingHours: optionalText(&random), legacyId: random.chance(2) ? nil : Int(random.next() >> 12) - (1 << 51),
                   priceLevel: random.chance(2) ? nil : random.below(5), accessibility: optionalText(&random),
                   pictureAlts: random.chance(2) ? [] : (0..<random.below(3)).map { _ in random.chance(3) ? "" : text(&random) },
                   triggerRadiusMeters: random.chance(2) ? nil : random.below(600), narration: optionalText(&random),
                   translations: translations(&random, fields: PoiContent.translatableFields))
    }

    /// Now and then texts in a language or two (DESIGN.md "Languages"), some fields of each.
    static func translations(_ random: inout SplitMix64, fields: [String]) -> Translations? {
        guard random.chance(2) else { return nil }
        var translations: Translations = [:]
        for language in ["es", "pt-BR", "zh-Hant"] where random.chance(2) {
            for field in fields where random.chance(2) { translations[language, default: [:]][field] = text(&random) }
        }
        return translations
    }

    static func tourContent(_ random: inout SplitMix64) -> TourContent {
        TourContent(name: text(&random), summary: text(&random), purpose: text(&random), legacyId: random.chance(2) ? nil : random.below(1_000) - 500,
                    coverImage: optionalText(&random), coverImageAlt: optionalText(&random),
                    estimatedMinutes: random.chance(2) ? nil : random.below(2_000) - 100, color: optionalText(&random),
                    route: random.chance(2) ? nil : LineString((0..<random.below(6)).map { _ in
                        Coordinate(latitude: number(&random), longitude: number(&random))
                    }), translations: translations(&random, fields: TourContent.translatableFields))
    }

    static func optionalText(_ random: inout SplitMix64) -> String? { random.chance(3) ? nil : text(&random) }

    /// Plain words, and now and then quotes, backslashes, slashes, control characters, accents and emoji.
    static func text(_ random: inout SplitMix64) -> String {
        let pieces = ["Hall", " ", "Café", "\"", "\\", "/", "\n", "\t", "\u{01}", "\u{1F}", "é", "ß", "日本", "🏛️", "\u{2028}", "a", "0", "&<>", "\u{7F}"]
        return String((0..<random.below(12)).map { _ in random.pick(pieces) }.joined())
    }

    static func number(_ random: inout SplitMix64) -> Double {
        switch random.below(5) {
        case 0: Double(random.below(181)) - 90
        case 1: Double(bitPattern: random.next() & 0x7FEF_FFFF_FFFF_FFFF) * (random.chance(2) ? 1 : -1)
        case 2: 1e-7 * Double(random.below(1_000))
        default: (Double(random.below(360_000_000)) - 180_000_000) / 1_000_000
        }
    }

    /// Whole milliseconds, as RFC 3339 text keeps them, from 1970 to 2100.
    static func date(_ random: inout SplitMix64) -> Date {
        Date(timeIntervalSince1970: Double(random.below(4_102_444_800_000)) / 1_000)
    }

    static func damage(_ bytes: inout [UInt8], _ random: inout SplitMix64) {
        guard !bytes.isEmpty else { return }
        let at = random.below(bytes.count)
        switch random.below(5) {
        case 0: bytes[at] = random.pick(Array("{}[]\",:0-.eE tnfx\\".utf8))
        case 1: bytes.removeSubrange(at..<min(bytes.count, at + 1 + random.below(8)))
        case 2: bytes.insert(contentsOf: random.pick([Array("null".utf8), Array(",".utf8), Array("\"x\":1,".utf8), [0xC3], [0xFF]]), at: at)
        case 3:
            // A key the object may already have, written first (JSONDecoder keeps the first value), after an opening brace.
            guard let open = bytes[at...].firstIndex(of: UInt8(ascii: "{")) else { return }
            let member = Array(random.pick([#""name":"twice","#, #""version":7,"#, #""kind":"poi.deleted","#, #""category":null,"#,
                                            #""id":"00000000-0000-0000-0000-000000000001","#, #""latitude":1.5,"#, #""status":"draft","#,
                                            #""title":"twice","#, #""allDay":true,"#, #""entry":null,"#, #""order":2,"#, #""format":"png","#,
                                            #""entityId":"00000000-0000-0000-0000-000000000002","#]).utf8)
            bytes.insert(contentsOf: member, at: open + 1)
        default: bytes.removeSubrange(at...)
        }
    }
}

extension SplitMix64 {
    fileprivate mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
    fileprivate mutating func chance(_ oneIn: Int) -> Bool { below(oneIn) == 0 }
    fileprivate mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }
}
