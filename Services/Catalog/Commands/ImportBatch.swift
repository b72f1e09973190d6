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
extension Work {
    static let batchActions: Set<CatalogAction> = [
        .createTour, .updateTour, .deleteTour, .setTourStatus, .setTourStops, .createPoi, .updatePoi, .deletePoi,
        .createCategory, .renameCategory, .deleteCategory,
    ]

    mutating func importBatch() async throws -> CatalogCommandResult {
        guard let rows = command.rows, !rows.isEmpty else { return missing("rows", "an import needs at least one row") }
        if rows.count > ContentImportFile.maximumRows {
            return missing("rows", "an import takes at most \(ContentImportFile.maximumRows) rows; this one has \(rows.count)")
        }
        let skipInvalidRows = command.skipInvalidRows ?? false
        try await transaction.savepoint("import_all")
        var results: [CatalogBatchRowResult] = []
        var start = rows.startIndex
        while start < rows.endIndex {
            let staged = Self.isStaged(rows[start])
            let end = rows[start...].firstIndex { Self.isStaged($0) != staged } ?? rows.endIndex
            if staged {
                let stagedTransaction = try await StagedCatalogTransaction.load(for: rows[start..<end].flatMap(\.commands), on: transaction)
                do {
                    results += try await apply(rows[start..<end], on: stagedTransaction, writingBehind: stagedTransaction)
                    try await stagedTransaction.flush()
                } catch {
                    // A refused write (class 22/23) must surface as itself, so the command is refused, not retried.
                    throw await stagedTransaction.settle() ?? error
                }
            } else {
                results += try await apply(rows[start..<end], on: transaction)
            }
            start = end
        }
        let failed = results.filter { $0.outcome == .failed }.count
        if failed > 0 && !skipInvalidRows {
            try await transaction.rollback(toSavepoint: "import_all")
            outbox.removeAll()
            results = results.map { result in
                var result = result
                if result.outcome == .applied { result.outcome = .notApplied }
                return result
            }
            return CatalogCommandResult(commandId: command.commandId, action: command.action, outcome: .rejected,
                                        message: "\(failed) of \(rows.count) rows failed, so nothing was imported", rows: results)
        }
        try await transaction.release(savepoint: "import_all")
        let skipped = failed > 0 ? "; \(failed) rows failed and were skipped" : ""
        return CatalogCommandResult(commandId: command.commandId, action: command.action, outcome: .applied,
                                    message: "imported \(rows.count - failed) of \(rows.count) rows\(skipped)", rows: results)
    }

    /// A row of POI and tour commands only: its reads and writes can be staged.
    static func isStaged(_ row: CatalogBatchRow) -> Bool {
        row.commands.allSatisfy { StagedCatalogTransaction.stagedActions.contains($0.action) }
    }

    /// Rows of a staged run between writes started behind them.
    static let rowsPerWrite = 250

    /// Applies the rows in order on `rowTransaction`, each inside a savepoint that a failed row rolls back;
    /// with `staged`, starts writing every `rowsPerWrite` rows while the next are applied.
    private mutating func apply(_ rows: ArraySlice<CatalogBatchRow>, on rowTransaction: any CatalogTransaction,
                                writingBehind staged: StagedCatalogTransaction? = nil) async throws -> [CatalogBatchRowResult] {
        var results: [CatalogBatchRowResult] = []
        results.reserveCapacity(rows.count)
        for row in rows {
            if let staged, !results.isEmpty, results.count % Self.rowsPerWrite == 0 { staged.writeBehind() }
            try await rowTransaction.savepoint("import_row")
            let outboxMark = outbox.count
            let result = try await apply(row, on: rowTransaction)
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
    private mutating func apply(_ row: CatalogBatchRow, on rowTransaction: any CatalogTransaction) async throws -> CatalogBatchRowResult {
        var entityIds: [UUID] = []
        var notes: [String] = []
        for var step in row.commands {
            guard Self.batchActions.contains(step.action) else {
                return CatalogBatchRowResult(label: row.label, outcome: .failed, message: "\(step.action.rawValue) cannot be part of an import")
            }
            // The importer is the actor of everything it imports.
            step.actor = command.actor
            let result: CatalogCommandResult
            if let previous = try await rowTransaction.processedResult(of: step.commandId) {
                // Imported before (same command id): at most once, so not again.
                result = previous
                if previous.outcome == .applied { notes.append("already imported, unchanged") }
            } else {
                var work = Work(command: step, transaction: rowTransaction, topics: topics, requestId: requestId, now: now)
                result = try await work.apply(eventPartitions: 0)
                if result.outcome == .applied {
                    try await rowTransaction.recordProcessed(result)
                    outbox += work.outbox
                }
            }
            guard result.outcome == .applied else {
                let message = result.outcome == .conflict ? (result.message ?? "conflict") : result.errors.map(\.message).joined(separator: "; ")
                return CatalogBatchRowResult(label: row.label, outcome: .failed, errors: result.errors,
                                             message: message.isEmpty ? result.message : message, entityIds: entityIds)
            }
            if let id = result.entityId, !entityIds.contains(id) { entityIds.append(id) }
        }
        return CatalogBatchRowResult(label: row.label, outcome: .applied, message: notes.isEmpty ? nil : Array(Set(notes)).joined(separator: "; "),
                                     entityIds: entityIds)
    }
}
