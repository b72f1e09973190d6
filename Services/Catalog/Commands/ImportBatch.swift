import Foundation
import Shared

/// `catalog.import`: the rows of a bulk import, each one or more ordinary commands, applied in this one
/// transaction by the same code as any other command. A row stands or falls whole. Without
/// `skipInvalidRows`, one failed row undoes every row (a savepoint around all of them), and the report
/// still says what was wrong with each; with it, failed rows are skipped and the rest kept.
///
/// Runs of POI and tour rows (the bulk of any import) run on a `StagedCatalogTransaction`: their reads
/// are loaded with one query per kind, their writes made with one statement per table, and a failed row
/// is undone in memory. Other rows (categories, deletes) take a savepoint each on the real transaction.
///
/// A tour row whose stops include a POI that is not there (its row failed, or no such POI) names it as the
/// file does ("“Brooks Field” on line 4"); with `skipInvalidRows` the tour is made with its other stops.
extension Work {
    static let batchActions: Set<CatalogAction> = [
        .createTour, .updateTour, .deleteTour, .setTourStatus, .setTourStops, .createPoi, .updatePoi, .deletePoi,
        .createCategory, .renameCategory, .deleteCategory,
        .createCalendarEntry, .updateCalendarEntry, .setCalendarEntryStatus, .deleteCalendarEntry,
        .createPerson, .updatePerson, .setPersonStatus, .deletePerson,
        .createPage, .updatePage, .setPageStatus, .deletePage,
        .createFeatured, .updateFeatured, .setFeaturedStatus, .deleteFeatured,
        .createMedia, .updateMedia, .setMediaStatus, .deleteMedia,
    ]

    mutating func importBatch() async throws -> CatalogCommandResult {
        guard let rows = command.rows, !rows.isEmpty else { return missing("rows", "an import needs at least one row") }
        if rows.count > ContentImportFile.maximumRows {
            return missing("rows", "an import takes at most \(ContentImportFile.maximumRows) rows; this one has \(rows.count)")
        }
        let skipInvalidRows = command.skipInvalidRows ?? false
        var poiRows: [UUID: String] = [:]
        for row in rows {
            for step in row.commands where step.action == .createPoi {
                if let id = step.entityId, let name = step.poi?.name { poiRows[id] = "“\(name)” on \(row.label)" }
            }
        }
        try await transaction.savepoint("import_all")
        var results: [CatalogBatchRowResult] = []
        var start = rows.startIndex
        while start < rows.endIndex {
            let staged = Self.isStaged(rows[start])
            let end = rows[start...].firstIndex { Self.isStaged($0) != staged } ?? rows.endIndex
            if staged {
                let stagedTransaction = try await StagedCatalogTransaction.load(for: rows[start..<end].flatMap(\.commands), on: transaction)
                do {
                    results += try await apply(rows[start..<end], on: stagedTransaction, poiRows: poiRows, writingBehind: stagedTransaction)
                    try await stagedTransaction.flush(outbox: Self.latestStates(outbox))
                    outbox.removeAll()
                } catch {
                    // A refused write (class 22/23) must surface as itself, so the command is refused, not retried.
                    throw await stagedTransaction.settle() ?? error
                }
            } else {
                results += try await apply(rows[start..<end], on: transaction, poiRows: poiRows)
            }
            start = end
        }
        let failed = results.filter { $0.outcome == .failed }.count
        let tally = Tally(rows: rows, results: results)
        if failed > 0 && !skipInvalidRows {
            try await transaction.rollback(toSavepoint: "import_all")
            outbox.removeAll()
            results = results.map { result in
                var result = result
                if result.outcome == .applied { result.outcome = .notApplied }
                return result
            }
            return CatalogCommandResult(commandId: command.commandId, action: command.action, outcome: .rejected,
                                        message: "\(tally.failedParts) failed, so nothing was imported", rows: results)
        }
        try await transaction.release(savepoint: "import_all")
        return CatalogCommandResult(commandId: command.commandId, action: command.action, outcome: .applied,
                                    message: "imported \(tally.importedParts)\(tally.skipped)", rows: results)
    }

    /// An import's rows counted as people count them: the category rows a reader adds for the paths a file uses
    /// are categories, not rows ("imported 4 of 5 rows and 2 categories; 1 row failed and was skipped").
    struct Tally {
        var rows = 0, failedRows = 0, categories = 0, failedCategories = 0

        init(rows: [CatalogBatchRow], results: [CatalogBatchRowResult]) {
            for (row, result) in zip(rows, results) {
                let failed = result.outcome == .failed ? 1 : 0
                if row.commands.allSatisfy({ $0.action == .createCategory }) {
                    categories += 1
                    failedCategories += failed
                } else {
                    self.rows += 1
                    failedRows += failed
                }
            }
        }

        private static func parts(_ items: [String]) -> String { items.joined(separator: " and ") }

        var failedParts: String {
            Self.parts([failedRows > 0 || failedCategories == 0 ? "\(failedRows) of \(counted(rows, "row"))" : nil,
                        failedCategories > 0 ? "\(failedCategories) of \(counted(categories, "category", plural: "categories"))" : nil].compactMap { $0 })
        }

        var importedParts: String {
            let categoryCount = counted(categories, "category", plural: "categories")
            return Self.parts(["\(rows - failedRows) of \(counted(rows, "row"))",
                               categories == 0 ? nil : failedCategories == 0 ? categoryCount : "\(categories - failedCategories) of \(categoryCount)"]
                .compactMap { $0 })
        }

        var skipped: String {
            let failed = [failedRows > 0 ? counted(failedRows, "row") : nil,
                          failedCategories > 0 ? counted(failedCategories, "category", plural: "categories") : nil].compactMap { $0 }
            guard !failed.isEmpty else { return "" }
            return "; \(Self.parts(failed)) failed and \(failedRows + failedCategories == 1 ? "was" : "were") skipped"
        }
    }

    /// A row of POI and tour commands only: its reads and writes can be staged.
    /// A draft of a POI or tour asks whether it is on the feed (the tours stopping there), which only the real transaction
    /// reads: such rows (a translations file's) take a savepoint each.
    static func isStaged(_ row: CatalogBatchRow) -> Bool {
        row.commands.allSatisfy { StagedCatalogTransaction.stagedActions.contains($0.action) && $0.asDraft != true }
    }

    /// Rows of a staged run between writes started behind them.
    static let rowsPerWrite = 250

    /// The events of rows applied together, each entity's kept only at its last. `catalog.events` is compacted by entity
    /// key, so a keyed event is always the entity's whole state and replaces the ones before it; those were states never
    /// committed apart, which no reader could have seen (a tour row's create, stops and publish go out once, at version 3).
    static func latestStates(_ entries: [OutboxEntry]) -> [OutboxEntry] {
        var later: Set<OutboxEntry.EntityKey> = []
        var kept: [OutboxEntry] = []
        kept.reserveCapacity(entries.count)
        for entry in entries.reversed() {
            if let key = entry.entityKey, !later.insert(key).inserted { continue }
            kept.append(entry)
        }
        return kept.reversed()
    }

    /// Applies the rows in order on `rowTransaction`, each inside a savepoint that a failed row rolls back;
    /// with `staged`, starts writing every `rowsPerWrite` rows, their events with them, while the next are applied
    /// (so Postgres stores them while catalog works out the next rows, not all of them at the end).
    private mutating func apply(_ rows: ArraySlice<CatalogBatchRow>, on rowTransaction: any CatalogTransaction, poiRows: [UUID: String],
                                writingBehind staged: StagedCatalogTransaction? = nil) async throws -> [CatalogBatchRowResult] {
        var results: [CatalogBatchRowResult] = []
        results.reserveCapacity(rows.count)
        for row in rows {
            if let staged, !results.isEmpty, results.count % Self.rowsPerWrite == 0 {
                staged.writeBehind(outbox: Self.latestStates(outbox))
                outbox.removeAll()
            }
            try await rowTransaction.savepoint("import_row")
            let outboxMark = outbox.count
            let result = try await apply(row, on: rowTransaction, poiRows: poiRows)
            if result.outcome == .applied {
                try await rowTransaction.release(savepoint: "import_row")
            } else {
                try await rowTransaction.rollback(toSavepoint: "import_row")
                try await rowTransaction.release(savepoint: "import_row")
                outbox.removeSubrange(outboxMark...)
            }
            results.append(result)
        }
        return results
    }

    /// Applies one row's commands in order; the first that is not applied fails the row.
    private mutating func apply(_ row: CatalogBatchRow, on rowTransaction: any CatalogTransaction,
                                poiRows: [UUID: String]) async throws -> CatalogBatchRowResult {
        var entityIds: [UUID] = []
        var notes: [String] = []
        var stepsDoneBefore = 0
        var stepsAppliedNow: [CatalogAction] = []
        // A file never overwrites what staff changed since it was imported: a row imported before stays as it is, and
        // says so when the file's stop list is not the tour's any more (issue 48: it said "unchanged" and left a stop out).
        var differs: [String] = []
        for var step in row.commands {
            guard Self.batchActions.contains(step.action) else {
                return CatalogBatchRowResult(label: row.label, outcome: .failed, message: "\(step.action.rawValue) cannot be part of an import")
            }
            // The importer is the actor of everything it imports.
            step.actor = command.actor
            var previous = try await rowTransaction.processedResult(of: step.commandId)
            if previous == nil, let stops = step.stops, !stops.isEmpty {
                let live = try await rowTransaction.livePoiIds(stops)
                let absent = stops.filter { !live.contains($0) }
                if !absent.isEmpty {
                    let named = absent.map { poiRows[$0].map { "\($0) (its row was not imported)" } ?? "POI \($0.lowercased) (no such POI)" }
                    // Skipping bad rows, a tour is made with the stops that are there, if any are.
                    guard command.skipInvalidRows == true, absent.count < stops.count else {
                        let message = "\(absent.count == 1 ? "a stop is" : "stops are") not there: \(named.joined(separator: ", "))"
                        return CatalogBatchRowResult(label: row.label, outcome: .failed, errors: [FieldError(field: "stops", message: message)],
                                                     message: message, entityIds: entityIds)
                    }
                    step.stops = stops.filter { live.contains($0) }
                    // Another command than the whole row's: importing the file again once the stops are there applies it whole,
                    // and importing it again as it is finds this one done.
                    step.commandId = ContentImportFile.stableId(0x24, content: "\(step.commandId) without \(absent.map(\.uuidString).joined())")
                    notes.append("made without \(absent.count == 1 ? "the stop" : "the stops") \(named.joined(separator: ", "))")
                    previous = try await rowTransaction.processedResult(of: step.commandId)
                }
            }
            let result: CatalogCommandResult
            if let previous {
                // Imported before (same command id): at most once, so not again.
                result = previous
                if previous.outcome == .applied { stepsDoneBefore += 1 }
                if previous.outcome == .applied, step.action == .setTourStops, let id = step.entityId, let stops = step.stops,
                   let tour = try await rowTransaction.tour(id), !tour.isDeleted, tour.state.working.stops != stops {
                    differs.append("its stops in the file (\(stops.count)) are not the tour's now (\(tour.state.working.stops.count)): "
                                   + "the tour was left as it is; change its stops on its page")
                }
            } else {
                var work = Work(command: step, transaction: rowTransaction, topics: topics, requestId: requestId, now: now,
                                directSends: directSends)
                work.isImportRow = true
                result = try await work.apply(eventPartitions: 0)
                if result.outcome == .applied {
                    // A row's step is looked up again only for its outcome and entity (the same row imported again), so
                    // its stored result leaves out the entity's state: the row's audit record and event carry that.
                    try await rowTransaction.recordProcessed(result.withoutStates)
                    outbox += work.outbox
                    stepsAppliedNow.append(step.action)
                }
            }
            guard result.outcome == .applied else {
                let message = result.outcome == .conflict ? (result.message ?? "conflict") : result.errors.map(\.message).joined(separator: "; ")
                return CatalogBatchRowResult(label: row.label, outcome: .failed, errors: result.errors,
                                             message: message.isEmpty ? result.message : message, entityIds: entityIds)
            }
            if let id = result.entityId, !entityIds.contains(id) { entityIds.append(id) }
        }
        // Unchanged only when every step was done before and the file still says what the tour has.
        if stepsDoneBefore == row.commands.count {
            notes.insert(differs.isEmpty ? "already imported, unchanged" : "already imported, not changed: " + differs.joined(separator: "; "), at: 0)
        } else if stepsDoneBefore > 0 {
            let changed = Set(stepsAppliedNow.map { $0 == .setTourStops ? "its stops" : $0 == .setTourStatus ? "its status" : "its content" })
            notes.insert("already imported; \(changed.sorted().joined(separator: " and ")) set now", at: 0)
        }
        let distinctNotes = notes.reduce(into: [String]()) { kept, note in if !kept.contains(note) { kept.append(note) } }
        return CatalogBatchRowResult(label: row.label, outcome: .applied, message: distinctNotes.isEmpty ? nil : distinctNotes.joined(separator: "; "),
                                     entityIds: entityIds)
    }
}

extension CatalogCommandResult {
    /// The result without the entities' states: outcome, ids, version, errors and message. Built from what it keeps,
    /// so a state field added to results later is left out too.
    var withoutStates: CatalogCommandResult {
        CatalogCommandResult(commandId: commandId, action: action, outcome: outcome, entityId: entityId, version: version, errors: errors,
                             message: message)
    }
}
