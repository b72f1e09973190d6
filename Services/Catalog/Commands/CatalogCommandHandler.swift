import Foundation
import Logging
import Shared

/// Applies one command inside one transaction: at most once (by commandId), validated, with optimistic
/// concurrency, writing the entity, its `catalog.events` event, the command's result and an audit record.
struct CatalogCommandHandler: Sendable {
    let repository: any CatalogRepository
    let topics: KafkaConfiguration
    /// Partition count of `catalog.events`, for the snapshot's per-partition markers.
    let eventPartitions: @Sendable () async throws -> Int
    /// Sends a snapshot's chunks straight to `catalog.events` (see `Work.snapshot`).
    let producer: KafkaProducer
    let logger: Logger
    let snapshotCache = SnapshotCache()

    /// Most entities in one snapshot chunk, and the most bytes its message may have (a chunk over it is halved;
    /// brokers refuse messages over 1 MB by default).
    static let snapshotChunkEntities = 256
    static let snapshotChunkBytes = 512 * 1024

    /// Handles a command; returns its result (the stored one when the command was seen before).
    @discardableResult
    func handle(_ command: CatalogCommand, requestId: String? = nil, now: Date = Date()) async throws -> CatalogCommandResult {
        try await snapshotCache.handlingCommand { try await handleNow(command, requestId: requestId, now: now) }
    }

    private func handleNow(_ command: CatalogCommand, requestId: String?, now: Date) async throws -> CatalogCommandResult {
        // Whole milliseconds: what JSON and Postgres both keep exactly, so a stored result equals the returned one.
        let now = Date(timeIntervalSince1970: (now.timeIntervalSince1970 * 1_000).rounded() / 1_000)
        if command.action == .history || command.action == .recentlyDeleted { return try await history(command, requestId: requestId, now: now) }
        let partitions = command.action == .snapshot ? try await eventPartitions() : 0
        let result = try await repository.withTransaction { transaction in
            try await transaction.lock(CommandLock.locks(for: command))
            if var previous = try await transaction.processedResult(of: command.commandId) {
                // Applied before: change nothing, but answer again, since the sender may be waiting for it, saying
                // it is a repeat (the admin shows "already saved").
                previous.repeated = true
                try await transaction.appendOutbox([try resultEntry(previous, requestId: requestId)])
                return previous
            }
            let directSends = DirectSends(producer: producer)
            var work = Work(command: command, transaction: transaction, topics: topics, requestId: requestId, now: now, directSends: directSends)
            work.snapshotCache = snapshotCache
            // Round-tripped through JSON, so the first answer is byte for byte the one a redelivery gets. Not an import's:
            // its rows hold only text, ids and outcomes, which read back as written (CatalogEventCodecTests), and decoding
            // a thousand rows' result again was a large part of an import's work (docs/BENCHMARKS.md, "Catalog's import").
            let applied = try await work.apply(eventPartitions: partitions)
            let result = command.action == .importBatch
                ? applied : try JSONCoding.decoder.decode(CatalogCommandResult.self, from: Data(CatalogEventCodec.text(applied).utf8))
            // Before the commit, so a failure leaves the command to be redelivered and applied again.
            try await directSends.delivered()
            try await transaction.recordProcessed(result)
            work.outbox.append(try resultEntry(result, requestId: requestId))
            try await transaction.appendOutbox(work.outbox)
            return result
        }
        if result.outcome == .applied && command.action != .snapshot { snapshotCache.noteChange() }
        return result
    }

    /// Answers several `catalog.snapshot` requests with one snapshot (DESIGN.md "One snapshot for many readers"): its
    /// `snapshotId` is the first new request's id and its markers name every new request in `answers`. Each request is
    /// recorded and answered on its own; one seen before is answered again as a repeat and left out. Returns the
    /// results, the repeats' first (a request given twice is answered once).
    @discardableResult
    func handleSnapshot(answering requests: [(command: CatalogCommand, requestId: String?)], now: Date = Date()) async throws -> [CatalogCommandResult] {
        var seen = Set<UUID>()
        let requests = requests.filter { $0.command.action == .snapshot && seen.insert($0.command.commandId).inserted }
        if requests.count <= 1, let only = requests.first { return [try await handle(only.command, requestId: only.requestId, now: now)] }
        guard !requests.isEmpty else { return [] }
        return try await snapshotCache.handlingCommand { try await snapshotNow(answering: requests, now: now) }
    }

    private func snapshotNow(answering requests: [(command: CatalogCommand, requestId: String?)], now: Date) async throws -> [CatalogCommandResult] {
        let now = Date(timeIntervalSince1970: (now.timeIntervalSince1970 * 1_000).rounded() / 1_000)
        let partitions = try await eventPartitions()
        return try await repository.withTransaction { transaction in
            // Each request's id, as `handleNow` takes it (a request handled by two catalogs at a hand-over), in one order
            // for every group, so two groups sharing requests never wait for each other in a circle.
            try await transaction.lock(requests.flatMap { CommandLock.locks(for: $0.command) }.sorted { $0.key < $1.key })
            var results: [CatalogCommandResult] = [], repeats: [OutboxEntry] = []
            var fresh: [(command: CatalogCommand, requestId: String?)] = []
            for request in requests {
                if var previous = try await transaction.processedResult(of: request.command.commandId) {
                    previous.repeated = true
                    repeats.append(try resultEntry(previous, requestId: request.requestId))
                    results.append(previous)
                } else {
                    fresh.append(request)
                }
            }
            guard let first = fresh.first else {
                try await transaction.appendOutbox(repeats)
                return results
            }
            let directSends = DirectSends(producer: producer)
            var work = Work(command: first.command, transaction: transaction, topics: topics, requestId: first.requestId, now: now,
                            directSends: directSends)
            work.snapshotCache = snapshotCache
            work.answers = fresh.count > 1 ? fresh.map(\.command.commandId) : nil
            let applied = try await work.apply(eventPartitions: partitions)
            try await directSends.delivered()
            for request in fresh {
                var answer = applied
                answer.commandId = request.command.commandId
                let result = try JSONCoding.decoder.decode(CatalogCommandResult.self, from: Data(CatalogEventCodec.text(answer).utf8))
                try await transaction.recordProcessed(result)
                work.outbox.append(try resultEntry(result, requestId: request.requestId))
                results.append(result)
            }
            try await transaction.appendOutbox(repeats + work.outbox)
            return results
        }
    }

    /// Brings the snapshot cache up to date (`SnapshotCacheWarmer`); returns how many buckets it encoded.
    @discardableResult
    func warmSnapshotCache() async throws -> Int {
        try await repository.withTransaction { transaction in
            try await snapshotCache.poiPayloads(in: transaction) { Work.chunkPayloads(pois: $0, snapshotId: nil) }.encodedBuckets
        }
    }
}

extension CatalogCommandHandler {
    /// Most audit rows one history answer carries, and about the most bytes of states (a result is one message).
    static let historyEntries = 100
    static let historyBytes = 400 * 1024

    /// Answers `catalog.history` (the entity's audit rows, newest first, as states) and `catalog.recently-deleted`
    /// (the deletes of the last `CatalogRetention.restorableDays` days not undone, each with the state it deleted). Reads: nothing is
    /// recorded, so asking again reads again.
    func history(_ command: CatalogCommand, requestId: String?, now: Date) async throws -> CatalogCommandResult {
        try await repository.withTransaction { transaction in
            var result = CatalogCommandResult(commandId: command.commandId, action: command.action, outcome: .applied, entityId: command.entityId)
            let rows: [AuditRow]? = if command.action == .recentlyDeleted {
                try await transaction.recentDeletes(since: now.addingTimeInterval(-Double(CatalogRetention.restorableDays) * 86_400),
                                                    limit: Self.historyEntries)
            } else if let id = command.entityId {
                try await transaction.auditTrail(of: id, limit: Self.historyEntries)
            } else {
                nil
            }
            if let rows {
                var entries: [CatalogHistoryEntry] = []
                var bytes = 0
                for row in rows {
                    bytes += row.after?.utf8.count ?? 0
                    if bytes > Self.historyBytes, !entries.isEmpty { break }
                    var entry = CatalogHistoryEntry(at: row.at, actor: row.actor, action: CatalogAction(rawValue: row.action) ?? .importBatch)
                    if let after = row.after.map({ Data($0.utf8) }) {
                        // A tour's state has stops and a status; a POI's has neither.
                        entry.tour = try? JSONCoding.decoder.decode(TourState.self, from: after)
                        if entry.tour == nil { entry.poi = try? JSONCoding.decoder.decode(PoiState.self, from: after) }
                    }
                    entries.append(entry)
                }
                result.history = entries
            } else {
                result.outcome = .rejected
                result.errors = [FieldError(field: "entityId", message: "entityId is required")]
            }
            try await transaction.appendOutbox([try resultEntry(result, requestId: requestId)])
            return result
        }
    }

    /// Answers a command the database cannot store as rejected, recording it so a redelivery gets the same answer.
    func refuse(_ command: CatalogCommand, reason: String, requestId: String?) async throws {
        let result = CatalogCommandResult(commandId: command.commandId, action: command.action, outcome: .rejected, entityId: command.entityId,
                                          message: reason)
        try await repository.withTransaction { transaction in
            try await transaction.lock(CommandLock.locks(for: command))
            guard try await transaction.processedResult(of: command.commandId) == nil else { return }
            try await transaction.recordProcessed(result)
            try await transaction.appendOutbox([try resultEntry(result, requestId: requestId)])
        }
    }

    /// The outbox row that answers a command on `catalog.command-results`.
    func resultEntry(_ result: CatalogCommandResult, requestId: String?) throws -> OutboxEntry {
        let envelope = Envelope(type: "command.\(result.outcome.rawValue)", source: "catalog", data: result)
        return OutboxEntry(topic: topics.topic(Topic.catalogCommandResults), key: result.commandId.uuidString.lowercased(),
                           partition: nil, payload: String(decoding: CatalogEventCodec.write(envelope), as: UTF8.self), requestId: requestId)
    }
}

/// The state of one command's application: what it writes to the outbox as it goes.
struct Work {
    let command: CatalogCommand
    let transaction: any CatalogTransaction
    let topics: KafkaConfiguration
    let requestId: String?
    let now: Date
    var outbox: [OutboxEntry] = []
    /// Sends messages before the transaction commits, not through the outbox: a snapshot's chunks and records.
    let directSends: DirectSends
    /// Catalog's snapshot chunks, reused by the next snapshot; nil: encode every chunk afresh.
    var snapshotCache: SnapshotCache?
    /// A snapshot answering several requests: their ids, for its markers (`CatalogCommandHandler.handleSnapshot`).
    var answers: [UUID]?
    /// Stops whose drafts a tour's publish published, for the result (so the admin shows them at once).
    var publishedStops: [PoiState] = []
    /// A row of an import: publishing skips the accessibility check, whose fields the import formats do not carry
    /// (DESIGN.md, "Accessibility and stops").
    var isImportRow = false

    init(command: CatalogCommand, transaction: any CatalogTransaction, topics: KafkaConfiguration, requestId: String?, now: Date,
         directSends: DirectSends) {
        self.command = command
        self.directSends = directSends
        self.transaction = transaction
        self.topics = topics
        self.requestId = requestId
        self.now = now
    }

    func envelope<T: Codable & Sendable>(type: String, _ data: T) throws -> String {
        String(decoding: try Envelope(type: type, source: "catalog", data: data).encoded(), as: UTF8.self)
    }

    mutating func publish(_ event: CatalogEvent, partition: Int32? = nil) {
        outbox.append(OutboxEntry(topic: topics.topic(Topic.catalogEvents), key: event.entityId?.uuidString.lowercased(),
                                  partition: partition, payload: Self.payload(event), requestId: requestId))
    }

    /// A `catalog.events` message, written by its codec.
    static func payload(_ event: CatalogEvent) -> String {
        String(decoding: CatalogEventCodec.write(Envelope(type: event.kind.rawValue, source: "catalog", data: event)), as: UTF8.self)
    }

    /// The messages of snapshot chunks holding these entities: as few chunks of at most
    /// `snapshotChunkEntities` as will do, of even size.
    static func chunkPayloads(pois: [PoiState] = [], tours: [TourState] = [], snapshotId: UUID?) -> [[UInt8]] {
        func groups<T>(_ entities: [T]) -> [ArraySlice<T>] {
            guard !entities.isEmpty else { return [] }
            let count = (entities.count + CatalogCommandHandler.snapshotChunkEntities - 1) / CatalogCommandHandler.snapshotChunkEntities
            return (0..<count).map { entities[entities.count * $0 / count..<entities.count * ($0 + 1) / count] }
        }
        return groups(pois).flatMap { chunkPayloads(.snapshotChunk(pois: Array($0), snapshotId: snapshotId)) }
            + groups(tours).flatMap { chunkPayloads(.snapshotChunk(tours: Array($0), snapshotId: snapshotId)) }
    }

    /// A snapshot chunk's message, or two or more when it is too large: halved until each fits.
    static func chunkPayloads(_ chunk: CatalogEvent) -> [[UInt8]] {
        let payload = CatalogEventCodec.write(Envelope(type: chunk.kind.rawValue, source: "catalog", data: chunk))
        let pois = chunk.pois ?? [], tours = chunk.tours ?? []
        guard payload.count > CatalogCommandHandler.snapshotChunkBytes, pois.count + tours.count > 1 else { return [payload] }
        let half = (pois.count + tours.count) / 2, toursInFirst = max(0, half - pois.count)
        let halves = [
            CatalogEvent.snapshotChunk(pois: Array(pois.prefix(half)), tours: Array(tours.prefix(toursInFirst)), snapshotId: chunk.snapshotId),
            CatalogEvent.snapshotChunk(pois: Array(pois.dropFirst(half)), tours: Array(tours.dropFirst(toursInFirst)), snapshotId: chunk.snapshotId),
        ]
        return halves.flatMap(chunkPayloads)
    }

    mutating func publish(_ event: CategoryEvent) throws {
        outbox.append(OutboxEntry(topic: topics.topic(Topic.catalogEvents), key: event.entityId.uuidString.lowercased(),
                                  partition: nil, payload: try envelope(type: event.kind.rawValue, event), requestId: requestId))
    }

    func rejected(_ errors: [FieldError], message: String? = nil) -> CatalogCommandResult {
        CatalogCommandResult(commandId: command.commandId, action: command.action, outcome: .rejected,
                             entityId: command.entityId, errors: errors, message: message ?? errors.first?.message)
    }

    func missing(_ field: String, _ message: String) -> CatalogCommandResult { rejected([FieldError(field: field, message: message)]) }

    mutating func apply(eventPartitions: Int) async throws -> CatalogCommandResult {
        switch command.action {
        case .createTour: return try await createTour()
        case .updateTour, .setTourStatus, .setTourStops: return try await changeTour()
        case .deleteTour: return try await deleteTour()
        case .createPoi: return try await createPoi()
        case .updatePoi: return try await updatePoi()
        case .deletePoi: return try await deletePoi()
        case .snapshot: return try await snapshot(partitions: eventPartitions)
        case .createCategory: return try await createCategory()
        case .renameCategory: return try await renameCategory()
        case .deleteCategory: return try await deleteCategory()
        case .importBatch: return try await importBatch()
        case .revertTour: return try await revertTour()
        case .revertPoi: return try await revertPoi()
        case .discardTourDraft: return try await discardTourDraft()
        case .publishPoi, .discardPoiDraft: return try await changePoiDraft()
        case .setPoiStatus: return try await setPoiStatus()
        case .createCalendarEntry: return try await createRecord(CalendarEntryContent.self)
        case .updateCalendarEntry, .setCalendarEntryStatus: return try await changeRecord(CalendarEntryContent.self)
        case .deleteCalendarEntry: return try await deleteRecord(CalendarEntryContent.self)
        case .createPerson: return try await createRecord(PersonContent.self)
        case .updatePerson, .setPersonStatus: return try await changeRecord(PersonContent.self)
        case .deletePerson: return try await deleteRecord(PersonContent.self)
        case .createPage: return try await createRecord(PageContent.self)
        case .updatePage, .setPageStatus: return try await changeRecord(PageContent.self)
        case .deletePage: return try await deleteRecord(PageContent.self)
        case .createFeatured: return try await createRecord(FeaturedContent.self)
        case .updateFeatured, .setFeaturedStatus: return try await changeRecord(FeaturedContent.self)
        case .deleteFeatured: return try await deleteRecord(FeaturedContent.self)
        case .createMedia: return try await createRecord(MediaContent.self)
        case .updateMedia, .setMediaStatus: return try await changeRecord(MediaContent.self)
        case .deleteMedia: return try await deleteRecord(MediaContent.self)
        case .scheduleTour: return try await scheduleTour()
        case .applyTourSchedule: return try await applyTourSchedule()
        case .history, .recentlyDeleted: return missing("action", "\(command.action.rawValue) is answered apart")
        }
    }

    // MARK: revert

    enum Reverted<State> {
        case state(State)
        case refused(CatalogCommandResult)
    }

    /// The state `revertToVersion` had, from the audit log, or the answer saying why there is none.
    func revertedState<State: Decodable>(_ type: State.Type, id: UUID) async throws -> Reverted<State> {
        guard let version = command.revertToVersion else { return .refused(missing("revertToVersion", "the version to go back to is required")) }
        guard let text = try await transaction.auditedState(of: id, version: version),
              let state = try? JSONCoding.decoder.decode(State.self, from: Data(text.utf8)) else {
            return .refused(missing("revertToVersion", "version \(version) is not in this entity's history"))
        }
        return .state(state)
    }

    /// A tour's content and stops as they were (stops deleted since are left out); its status stays.
    mutating func revertTour() async throws -> CatalogCommandResult {
        guard let id = command.entityId else { return missing("entityId", "entityId is required") }
        guard let stored = try await transaction.tour(id) else { return missing("entityId", "tour \(id) does not exist") }
        if let conflict = conflict(current: stored.state.version, tour: stored.state) { return conflict }
        let old: TourState
        switch try await revertedState(TourState.self, id: id) {
        case .state(let state): old = state
        case .refused(let result): return result
        }
        let errors = CommandValidation.validate(old.content)
        guard errors.isEmpty else { return rejected(errors) }
        let live = try await transaction.livePoiIds(old.stops + (old.draft?.stops ?? []))
        if stored.isDeleted {
            // Undo of a delete: the version back, unpublished (it left the phones when deleted), no schedule.
            // Its draft's content where it had one: the name staff last saw and chose to restore.
            let tour = TourState(id: id, version: stored.state.version + 1, status: .draft, content: old.working.content,
                                 stops: old.working.stops.filter(live.contains), updatedAt: now)
            return try await commit(tour, before: nil)
        }
        var tour = stored.state
        apply(TourDraft(content: old.content, stops: old.stops.filter(live.contains)), to: &tour)
        tour.version += 1
        tour.updatedAt = now
        return try await commit(tour, before: stored.state)
    }

    /// A POI's content as it was, checked by today's rules (its category may have gone since).
    mutating func revertPoi() async throws -> CatalogCommandResult {
        guard let id = command.entityId else { return missing("entityId", "entityId is required") }
        guard let stored = try await transaction.poi(id) else { return missing("entityId", "POI \(id) does not exist") }
        if let conflict = conflict(current: stored.state.version, poi: stored.state) { return conflict }
        var content: PoiContent
        switch try await revertedState(PoiState.self, id: id) {
        // Undo of a delete brings back what staff last saw (its draft, if it had one); a revert, the version's content.
        case .state(let state): content = stored.isDeleted ? state.working : state.content
        case .refused(let result): return result
        }
        let errors = try await validate(&content)
        guard errors.isEmpty else { return rejected(errors) }
        if stored.isDeleted {
            // Undo of a delete: not a place on its own, and a stop of no tour (its tours let it go when it was deleted).
            var poi = stored.state
            poi.content = content
            poi.draft = nil
            poi.status = .draft
            poi.version += 1
            poi.updatedAt = now
            return try await commit(poi, before: nil)
        }
        var poi = stored.state
        try await apply(content, to: &poi)
        return try await commit(poi, before: stored.state)
    }

    // MARK: tours

    mutating func createTour() async throws -> CatalogCommandResult {
        guard let content = command.tour else { return missing("tour", "tour content is required") }
        let errors = CommandValidation.validate(content)
        guard errors.isEmpty else { return rejected(errors) }
        let id = command.entityId ?? UUID.random()
        if try await transaction.tour(id) != nil { return missing("entityId", "a tour with id \(id) already exists") }
        let tour = TourState(id: id, version: 1, status: command.status ?? .draft, content: content, stops: [], updatedAt: now)
        return try await commit(tour, before: nil)
    }

    mutating func changeTour() async throws -> CatalogCommandResult {
        guard let id = command.entityId else { return missing("entityId", "entityId is required") }
        guard let stored = try await transaction.tour(id), !stored.isDeleted else {
            return missing("entityId", "tour \(id) does not exist")
        }
        if let conflict = conflict(current: stored.state.version, tour: stored.state) { return conflict }
        var tour = stored.state
        var working = tour.working
        switch command.action {
        case .updateTour:
            guard let content = command.tour else { return missing("tour", "tour content is required") }
            let errors = CommandValidation.validate(content)
            guard errors.isEmpty else { return rejected(errors) }
            working.content = content
        case .setTourStatus:
            guard let status = command.status else { return missing("status", "status is required (draft, published or archived)") }
            if let refusal = try await setStatus(of: &tour, to: status, confirming: command.confirmFarStops == true ? .all : .none) { return refusal }
            // Done by hand, or archived: the schedule has nothing left to do.
            if tour.schedule?.status == status || status == .archived { tour.schedule = nil }
            tour.version += 1
            tour.updatedAt = now
            return try await commit(tour, before: stored.state)
        default:
            guard let stops = command.stops else { return missing("stops", "stops are required") }
            if stops.count > 500 { return missing("stops", "a tour can have at most 500 stops") }
            if Set(stops).count != stops.count { return missing("stops", "a POI can be a stop of a tour only once") }
            let live = try await transaction.livePoiIds(stops)
            if let unknown = stops.first(where: { !live.contains($0) }) {
                return missing("stops", "POI \(unknown) does not exist")
            }
            working.stops = stops
        }
        apply(working, to: &tour)
        tour.version += 1
        tour.updatedAt = now
        return try await commit(tour, before: stored.state)
    }

    /// An edit: into the draft when the command asks for one and the tour is published, else into the content.
    /// A draft equal to what is published is none.
    func apply(_ working: TourDraft, to tour: inout TourState) {
        if command.asDraft == true && tour.status == .published {
            tour.draft = working == TourDraft(content: tour.content, stops: tour.stops) ? nil : working
        } else {
            tour.content = working.content
            tour.stops = working.stops
            tour.draft = nil
        }
    }

    /// A status change (by hand or by schedule): publishing checks the tour and publishes its drafts and its stops'
    /// drafts; unpublishing or archiving folds its draft in (nothing of it is live). Returns the refusal, if any.
    mutating func setStatus(of tour: inout TourState, to status: ContentStatus, confirming: FarStopConfirmation) async throws -> CatalogCommandResult? {
        let working = tour.working
        if status == .published {
            if let refusal = try await publishRefusal(working.stops, confirming: confirming) { return refusal }
            try await publishDrafts(ofStops: working.stops)
        }
        tour.status = status
        tour.content = working.content
        tour.stops = working.stops
        tour.draft = nil
        return nil
    }

    /// Which far stops an editor confirmed: every one (Publish anyway), none, or those far when a schedule was set.
    enum FarStopConfirmation {
        case none, all
        case only(Set<UUID>)
    }

    /// Why `stops` cannot be published (DESIGN.md, "Drafts and publishing"): none at all, or one far from the
    /// others without the editor's confirmation. Each stop is checked where it will be: its draft's position.
    func publishRefusal(_ stops: [UUID], confirming: FarStopConfirmation) async throws -> CatalogCommandResult? {
        guard !stops.isEmpty else {
            return missing("stops", "A tour needs at least one stop before it is published")
        }
        if !isImportRow {
            let stored = try await transaction.pois(stops)
            let accessibility = try await accessibilityErrors(stops.compactMap { id in stored[id].flatMap { $0.isDeleted ? nil : $0.state.working } })
            guard accessibility.isEmpty else { return rejected(accessibility) }
        }
        if case .all = confirming { return nil }
        var strays = try await farStops(stops)
        if case .only(let confirmed) = confirming { strays.removeAll { confirmed.contains($0.id) } }
        guard !strays.isEmpty else { return nil }
        let named = strays.map { "\($0.name) is \(String(format: "%.1f", $0.meters / 1_000)) km from the middle of the tour's stops" }
        return missing("stops", named.joined(separator: "; ") + ": check the coordinates, or confirm to publish anyway")
    }

    /// The stops far from the tour's median position, where they will be (their drafts' positions).
    func farStops(_ stops: [UUID]) async throws -> [(id: UUID, name: String, meters: Double)] {
        // One read for all the stops: a city's tours have a hundred each.
        let places = try await transaction.stopPlaces(stops)
        let live = stops.compactMap { id in places[id].flatMap { $0.isDeleted ? nil : (id: id, place: $0) } }
        return Geo.strays(live.map { Coordinate(latitude: $0.place.latitude, longitude: $0.place.longitude) }).map {
            (live[$0.index].id, live[$0.index].place.name, $0.meters)
        }
    }

    /// Publishing a tour publishes its stops' drafts too, each as a new version.
    mutating func publishDrafts(ofStops stops: [UUID]) async throws {
        // Most stops have no draft: only those with one are read whole (and locked).
        let places = try await transaction.stopPlaces(stops)
        let drafted = stops.filter { places[$0].map { $0.hasDraft && !$0.isDeleted } == true }
        let storedStops = try await transaction.pois(drafted)
        for id in drafted {
            guard let stored = storedStops[id], !stored.isDeleted, let draft = stored.state.draft else { continue }
            var poi = stored.state
            poi.content = draft
            poi.draft = nil
            poi.version += 1
            poi.updatedAt = now
            try await transaction.savePoi(poi, deleted: false)
            publish(.changed(poi))
            try await transaction.audit(commandId: command.commandId, actor: command.actor, action: command.action, entityId: id,
                                        before: stored.state.auditText(), after: poi.auditText())
            publishedStops.append(poi)
        }
    }

    mutating func discardTourDraft() async throws -> CatalogCommandResult {
        guard let id = command.entityId else { return missing("entityId", "entityId is required") }
        guard let stored = try await transaction.tour(id), !stored.isDeleted else { return missing("entityId", "tour \(id) does not exist") }
        if let conflict = conflict(current: stored.state.version, tour: stored.state) { return conflict }
        guard stored.state.draft != nil else { return missing("draft", "the tour has no unpublished changes") }
        var tour = stored.state
        tour.draft = nil
        tour.version += 1
        tour.updatedAt = now
        return try await commit(tour, before: stored.state)
    }

    // MARK: schedules

    /// `tour.schedule`: set (checked as a publish would be now) or, without `scheduleAt`, cancel.
    mutating func scheduleTour() async throws -> CatalogCommandResult {
        guard let id = command.entityId else { return missing("entityId", "entityId is required") }
        guard let stored = try await transaction.tour(id), !stored.isDeleted else { return missing("entityId", "tour \(id) does not exist") }
        if let conflict = conflict(current: stored.state.version, tour: stored.state) { return conflict }
        var tour = stored.state
        if let at = command.scheduleAt {
            guard let status = command.status, status == .published || status == .draft else {
                return missing("status", "Choose what happens at that time: published or draft")
            }
            guard at > now else { return missing("scheduleAt", "Choose a time in the future") }
            guard at < now.addingTimeInterval(2 * 365 * 86_400) else { return missing("scheduleAt", "Choose a time within two years") }
            var confirmed: [UUID]?
            if status == .published {
                let confirming = command.confirmFarStops == true
                if let refusal = try await publishRefusal(tour.working.stops, confirming: confirming ? .all : .none) { return refusal }
                // What is confirmed is these stops being far, not any stop that is far when it is due.
                if confirming { confirmed = try await farStops(tour.working.stops).map(\.id) }
            }
            tour.schedule = TourSchedule(status: status, at: at, by: command.actor, confirmedFarStops: confirmed)
        } else {
            guard tour.schedule != nil else { return missing("scheduleAt", "the tour has no schedule to cancel") }
            tour.schedule = nil
        }
        tour.version += 1
        tour.updatedAt = now
        return try await commit(tour, before: stored.state)
    }

    /// `tour.apply-schedule`, sent by catalog's scheduler: the due status change, or, when the checks refuse it now,
    /// the reason kept on the schedule (which is then no longer due).
    mutating func applyTourSchedule() async throws -> CatalogCommandResult {
        guard let id = command.entityId else { return missing("entityId", "entityId is required") }
        guard let stored = try await transaction.tour(id), !stored.isDeleted else { return missing("entityId", "tour \(id) does not exist") }
        if let conflict = conflict(current: stored.state.version, tour: stored.state) { return conflict }
        guard let schedule = stored.state.schedule, schedule.isPending, schedule.at <= now else {
            return missing("scheduleAt", "nothing is due for this tour")
        }
        var tour = stored.state
        if let refusal = try await setStatus(of: &tour, to: schedule.status, confirming: .only(Set(schedule.confirmedFarStops ?? []))) {
            tour = stored.state
            tour.schedule?.failure = refusal.message ?? "refused"
        } else {
            tour.schedule = nil
        }
        tour.version += 1
        tour.updatedAt = now
        return try await commit(tour, before: stored.state)
    }

    /// `poi.publish` (the draft becomes the content, checked by today's rules) and `poi.discard-draft`.
    mutating func changePoiDraft() async throws -> CatalogCommandResult {
        guard let id = command.entityId else { return missing("entityId", "entityId is required") }
        guard let stored = try await transaction.poi(id), !stored.isDeleted else { return missing("entityId", "POI \(id) does not exist") }
        if let conflict = conflict(current: stored.state.version, poi: stored.state) { return conflict }
        guard var draft = stored.state.draft else { return missing("draft", "the point of interest has no unpublished changes") }
        var poi = stored.state
        if command.action == .publishPoi {
            var errors = try await validate(&draft)
            if errors.isEmpty { errors = try await accessibilityErrors([draft]) }
            guard errors.isEmpty else { return rejected(errors) }
            poi.content = draft
        }
        poi.draft = nil
        poi.version += 1
        poi.updatedAt = now
        return try await commit(poi, before: stored.state)
    }

    /// `poi.set-status` (DESIGN.md, "Places on their own"): publishing makes the draft the content; unpublishing
    /// folds the draft into the content unless a published tour still shows the POI.
    mutating func setPoiStatus() async throws -> CatalogCommandResult {
        guard let id = command.entityId else { return missing("entityId", "entityId is required") }
        guard let status = command.status, status != .archived else { return missing("status", "status must be published or draft") }
        guard let stored = try await transaction.poi(id), !stored.isDeleted else { return missing("entityId", "POI \(id) does not exist") }
        if let conflict = conflict(current: stored.state.version, poi: stored.state) { return conflict }
        guard stored.state.status != status else {
            return missing("status", status == .published ? "the point of interest is already published" : "the point of interest is not published")
        }
        var poi = stored.state
        poi.status = status
        if status == .published {
            if var draft = poi.draft {
                let errors = try await validate(&draft)
                guard errors.isEmpty else { return rejected(errors) }
                poi.content = draft
                poi.draft = nil
            }
            if !isImportRow {
                let accessibility = try await accessibilityErrors([poi.content])
                guard accessibility.isEmpty else { return rejected(accessibility) }
            }
        } else if let draft = poi.draft, try await !isStopOfPublishedTour(id) {
            poi.content = draft
            poi.draft = nil
        }
        poi.version += 1
        poi.updatedAt = now
        return try await commit(poi, before: stored.state)
    }

    /// Whether a POI is on the feed: published itself, or a stop of a published tour.
    func isOnFeed(_ poi: PoiState) async throws -> Bool {
        if poi.status == .published { return true }
        return try await isStopOfPublishedTour(poi.id)
    }

    func isStopOfPublishedTour(_ id: UUID) async throws -> Bool {
        for tourId in try await transaction.toursWithStop(id) {
            if let tour = try await transaction.tour(tourId), tour.state.status == .published, tour.state.stops.contains(id) { return true }
        }
        return false
    }

    mutating func deleteTour() async throws -> CatalogCommandResult {
        guard let id = command.entityId else { return missing("entityId", "entityId is required") }
        guard let stored = try await transaction.tour(id), !stored.isDeleted else {
            return missing("entityId", "tour \(id) does not exist")
        }
        if let conflict = conflict(current: stored.state.version, tour: stored.state) { return conflict }
        var tour = stored.state
        tour.version += 1
        tour.updatedAt = now
        try await transaction.saveTour(tour, deleted: true)
        publish(CatalogEvent(kind: .tourDeleted, entityId: id, version: tour.version))
        return try await applied(id, version: tour.version, before: stored.state, after: nil as TourState?)
    }

    mutating func commit(_ tour: TourState, before: TourState?) async throws -> CatalogCommandResult {
        try await transaction.saveTour(tour, deleted: false)
        publish(.changed(tour))
        var result = try await applied(tour.id, version: tour.version, before: before, after: tour)
        result.tour = tour
        if !publishedStops.isEmpty { result.pois = publishedStops }
        return result
    }

    /// Writes the change's audit row (the states as JSON, nil for none) and answers the command applied.
    func applied<State: AuditedState>(_ id: UUID, version: Int, before: State?, after: State?) async throws -> CatalogCommandResult {
        try await transaction.audit(commandId: command.commandId, actor: command.actor, action: command.action, entityId: id,
                                    before: try before?.auditText(), after: try after?.auditText())
        return CatalogCommandResult(commandId: command.commandId, action: command.action, outcome: .applied, entityId: id, version: version)
    }

    func conflict(current: Int, tour: TourState? = nil, poi: PoiState? = nil, category: CategoryState? = nil) -> CatalogCommandResult? {
        guard let expected = command.expectedVersion, expected != current else { return nil }
        return CatalogCommandResult(commandId: command.commandId, action: command.action, outcome: .conflict, entityId: command.entityId,
                                    version: current, message: "changed by someone else: you edited version \(expected), the current version is \(current)",
                                    tour: tour, poi: poi, category: category)
    }

    // MARK: POIs

    mutating func createPoi() async throws -> CatalogCommandResult {
        guard var content = command.poi else { return missing("poi", "poi content is required") }
        let errors = try await validate(&content)
        guard errors.isEmpty else { return rejected(errors) }
        if command.status == .archived { return missing("status", "status must be published or draft") }
        let id = command.entityId ?? UUID.random()
        if try await transaction.poi(id) != nil { return missing("entityId", "a POI with id \(id) already exists") }
        return try await commit(PoiState(id: id, version: 1, status: command.status ?? .draft, content: content, updatedAt: now), before: nil)
    }

    mutating func updatePoi() async throws -> CatalogCommandResult {
        guard let id = command.entityId else { return missing("entityId", "entityId is required") }
        guard var content = command.poi else { return missing("poi", "poi content is required") }
        guard let stored = try await transaction.poi(id), !stored.isDeleted else { return missing("entityId", "POI \(id) does not exist") }
        if let conflict = conflict(current: stored.state.version, poi: stored.state) { return conflict }
        let errors = try await validate(&content)
        guard errors.isEmpty else { return rejected(errors) }
        var poi = stored.state
        try await apply(content, to: &poi)
        return try await commit(poi, before: stored.state)
    }

    /// An edit of a POI: into its draft when the command asks for one and the POI is on the feed, else into the
    /// content (dropping a draft). A new version either way.
    func apply(_ content: PoiContent, to poi: inout PoiState) async throws {
        if command.asDraft == true, try await isOnFeed(poi) {
            poi.draft = content == poi.content ? nil : content
        } else {
            poi.content = content
            poi.draft = nil
        }
        poi.version += 1
        poi.updatedAt = now
    }

    /// The content rules, plus: each category must be a path of the category tree. An empty category is none,
    /// a path that differs only in case takes the tree's spelling, and a category listed twice counts once.
    func validate(_ content: inout PoiContent) async throws -> [FieldError] {
        content.categories.removeAll { CommandValidation.isBlank($0, newlinesAreBlank: false) }
        CommandValidation.encodeURLs(&content)
        var errors = CommandValidation.validate(content)
        if !errors.contains(where: { $0.field == "category" || $0.field == "categories" }) {
            var known: [String] = []
            for (index, category) in content.categories.enumerated() {
                if let path = try await transaction.category(path: category)?.path {
                    if !known.contains(path) { known.append(path) }
                } else {
                    errors.append(FieldError(field: index == 0 ? "category" : "categories",
                                             message: "Category must be one of the category tree's paths, e.g. Shop/Fashion; \"\(category)\" is not one"))
                }
            }
            content.categories = known
        }
        if let narration = content.narration, MediaHash.isValid(narration) {
            let item = try await transaction.liveMedia(sha256s: [narration])[narration]
            if item?.content.format.kind != .audio || item?.status != .published {
                errors.append(FieldError(field: "narration", message: item == nil
                    ? "Narration must be a file of the media library; \(narration.prefix(12))… is not (deleted?)"
                    : item?.content.format.kind != .audio ? "Narration must be audio; \(item?.content.title ?? "") is \(item?.content.format.label ?? "")"
                    : "Narration must be a published file of the media library; \(item?.content.title ?? "") is not published"))
            }
        }
        return errors
    }

    /// What publishing these POIs would leave a visitor who cannot see or hear without (DESIGN.md, "Accessibility and
    /// stops"): a picture with no alt text, library audio with neither captions nor a transcript, library video
    /// without captions. Media hot-linked from elsewhere cannot be checked and passes.
    func accessibilityErrors(_ pois: [PoiContent]) async throws -> [FieldError] {
        let library = try await transaction.liveMedia(sha256s: Array(Set(pois.flatMap(MediaHash.named(in:)))))
        var errors: [FieldError] = []
        for poi in pois {
            for (index, picture) in poi.pictures.enumerated() {
                let hash = MediaHash.named(inURL: picture)
                if let hash, library[hash]?.status != .published {
                    errors.append(FieldError(field: "pictures", message: "Picture \(index + 1) of \(poi.name) names a library file that is not published (or was deleted): publish it, or choose another"))
                    continue
                }
                let libraryAlt = hash.flatMap { library[$0]?.content.altText }
                if poi.ownAlt(ofPicture: index) == nil, (libraryAlt ?? "").isEmpty {
                    errors.append(FieldError(field: "pictures", message: "Picture \(index + 1) of \(poi.name) has no alt text: say what it shows, after its address or in the media library"))
                }
            }
            for link in poi.links {
                guard let hash = MediaHash.named(inURL: link.url) else { continue }
                guard let item = library[hash], item.status == .published else {
                    errors.append(FieldError(field: "links", message: "The link \u{201C}\(link.name)\u{201D} of \(poi.name) names a library file that is not published (or was deleted)"))
                    continue
                }
                if let gap = item.content.accessibilityGap {
                    errors.append(FieldError(field: "links", message: "\(item.content.format.label) \u{201C}\(item.content.title)\u{201D} linked from \(poi.name) \(gap): add them in the media library"))
                }
            }
            if let item = poi.narration.flatMap({ library[$0] }), let gap = item.content.accessibilityGap {
                errors.append(FieldError(field: "narration", message: "The narration of \(poi.name), \u{201C}\(item.content.title)\u{201D}, \(gap): add them in the media library"))
            }
        }
        return errors
    }

    /// Deleting a POI also removes it from the tours that stop there (each such tour gets a new version).
    mutating func deletePoi() async throws -> CatalogCommandResult {
        guard let id = command.entityId else { return missing("entityId", "entityId is required") }
        guard let stored = try await transaction.poi(id), !stored.isDeleted else { return missing("entityId", "POI \(id) does not exist") }
        if let conflict = conflict(current: stored.state.version, poi: stored.state) { return conflict }
        for tourId in try await transaction.toursWithStop(id) {
            guard let tour = try await transaction.tour(tourId) else { continue }
            var changed = tour.state
            changed.stops.removeAll { $0 == id }
            changed.draft?.stops.removeAll { $0 == id }
            changed.version += 1
            changed.updatedAt = now
            try await transaction.saveTour(changed, deleted: false)
            publish(.changed(changed))
            try await transaction.audit(commandId: command.commandId, actor: command.actor, action: command.action, entityId: tourId,
                                        before: tour.state.auditText(), after: changed.auditText())
        }
        var poi = stored.state
        poi.version += 1
        poi.updatedAt = now
        try await transaction.savePoi(poi, deleted: true)
        publish(CatalogEvent(kind: .poiDeleted, entityId: id, version: poi.version))
        return try await applied(id, version: poi.version, before: stored.state, after: nil as PoiState?)
    }

    mutating func commit(_ poi: PoiState, before: PoiState?) async throws -> CatalogCommandResult {
        try await transaction.savePoi(poi, deleted: false)
        publish(.changed(poi))
        var result = try await applied(poi.id, version: poi.version, before: before, after: poi)
        result.poi = poi
        return result
    }

    // MARK: snapshot

    /// Republishes every live entity, in chunks spread over the partitions when the asker reads them (media items,
    /// tours, POIs, then categories and the other records), else one event per entity (categories, records, POIs,
    /// tours, as before chunks); then a marker on each partition: a reader that saw every marker has read every entity
    /// before it.
    mutating func snapshot(partitions: Int) async throws -> CatalogCommandResult {
        let snapshotId = command.commandId
        let topic = topics.topic(Topic.catalogEvents), requestId = requestId
        let headers = requestId.map { [(MessageHeader.requestId, Array($0.utf8))] } ?? []
        let chunked = command.chunkedSnapshot == true
        // Media items first: a POI shows the library files it names, so a reader that has them renders each POI once.
        let media = try await transaction.liveRecords(MediaContent.self)
        for item in media { publish(MediaEvent.changed(item, snapshotId: snapshotId)) }
        let tours = try await transaction.liveTours()
        var poiCount = 0
        if chunked {
            // Straight to the topic: a city's chunks are tens of megabytes, which the outbox would write to Postgres
            // and read back only to send them. Nothing is lost: they are delivered before the command's transaction
            // commits (a failure redelivers the command), and the markers, in the outbox, go after them. Sent before
            // the categories and other records are read, so a reader starts on the POIs, most of its work, meanwhile.
            // Tours first: a reader can then show each POI as it arrives (a POI is visible through its tours).
            let pois = try await (snapshotCache ?? SnapshotCache()).poiPayloads(in: transaction) { pois in
                Work.chunkPayloads(pois: pois, snapshotId: snapshotId)
            }
            poiCount = pois.count
            sendOutboxDirectly(headers: headers)
            directSends.send((Work.chunkPayloads(tours: tours, snapshotId: snapshotId) + pois.payloads).enumerated().map { number, payload in
                KafkaOutgoingMessage(topic: topic, key: "\(CatalogEvent.Kind.snapshotChunk.rawValue)/\(number)", value: payload,
                                     partition: Int32(number % max(partitions, 1)), headers: headers)
            })
        }
        let categories = try await transaction.liveCategories()
        for category in categories { try publish(.changed(category, snapshotId: snapshotId)) }
        let calendar = try await transaction.liveRecords(CalendarEntryContent.self)
        for entry in calendar { publish(CalendarEntryEvent.changed(entry, snapshotId: snapshotId)) }
        let people = try await transaction.liveRecords(PersonContent.self)
        for person in people { publish(PersonEvent.changed(person, snapshotId: snapshotId)) }
        let pages = try await transaction.liveRecords(PageContent.self)
        for page in pages { publish(PageEvent.changed(page, snapshotId: snapshotId)) }
        let featured = try await transaction.liveRecords(FeaturedContent.self)
        for item in featured { publish(FeaturedEvent.changed(item, snapshotId: snapshotId)) }
        if chunked {
            sendOutboxDirectly(headers: headers)
        } else {
            let pois = try await transaction.livePois()
            poiCount = pois.count
            let events = pois.map { CatalogEvent.changed($0, snapshotId: snapshotId) } + tours.map { CatalogEvent.changed($0, snapshotId: snapshotId) }
            outbox += await events.concurrentMapOffThePool { event in
                OutboxEntry(topic: topic, key: event.entityId?.uuidString.lowercased(), partition: nil, payload: Work.payload(event), requestId: requestId)
            }
        }
        for partition in 0..<Int32(partitions) {
            publish(CatalogEvent(kind: .snapshotMarker, snapshotId: snapshotId, partition: partition, partitionCount: partitions, answers: answers),
                        partition: partition)
        }
        return CatalogCommandResult(commandId: command.commandId, action: command.action, outcome: .applied,
                                    message: "republished \(tours.count) tours, \(poiCount) POIs, \(categories.count) categories, \(calendar.count) calendar entries, \(people.count) people, \(pages.count) pages, \(featured.count) featured items and \(media.count) media items")
    }

    /// A chunked snapshot's categories and records go straight to the topic too (a city's ten thousand events and
    /// people), each keyed by its id as its later changes will be, with the chunks' guarantee: delivered before the commit.
    private mutating func sendOutboxDirectly(headers: [(String, [UInt8])]) {
        directSends.send(outbox.map { entry in
            KafkaOutgoingMessage(topic: entry.topic, key: entry.key, value: Array(entry.payload.utf8), partition: entry.partition, headers: headers)
        })
        outbox.removeAll()
    }
}

/// A state an audit row keeps, as JSON text: tours, POIs and records through their codec (an import audits
/// thousands), categories through `JSONCoding`.
protocol AuditedState {
    func auditText() throws -> String
}

extension PoiState: AuditedState {
    func auditText() -> String { CatalogEventCodec.text(self) }
}

extension TourState: AuditedState {
    func auditText() -> String { CatalogEventCodec.text(self) }
}

extension CategoryState: AuditedState {
    func auditText() throws -> String { try jsonText(self) }
}
