import Foundation
import Logging
import Shared

/// `catalog import` / `catalog load-demo`: a JSON (the demo file's format) or CSV file sent as one
/// `catalog.import` command, the same path as the admin's import page (the file is read by Shared's
/// `ContentImportFile`). Ids and command ids derive from the file's `legacyId`s, so loading the same file
/// again applies nothing twice. `commands(forJSON:)` gives a file as separate commands, for tests that
/// drive the command path one command at a time.
enum ContentImport {
    /// The stable id of the `kind` for a legacy number (ContentImportFile's ids).
    static func stableId(_ kind: ContentImportFile.Kind, _ legacyId: Int) -> UUID { ContentImportFile.stableId(kind.rawValue, legacyId) }

    /// A JSON file's rows as separate commands, in the order `catalog import` applies them (categories, POIs, tours,
    /// calendar events): the same commands, from the same plan.
    static func commands(forJSON data: Data) throws -> [CatalogCommand] {
        let plan: ContentImportFile.Plan
        do { plan = try ContentImportFile.plan(data, format: .json, actor: "import") } catch { throw ImportError(message: error.message) }
        if let bad = plan.unreadable.first { throw ImportError(message: "\(bad.label): \(bad.message ?? "unreadable")") }
        return plan.rows.flatMap(\.commands)
    }

    /// `catalog import FILE [--skip-bad-rows]`: reads the file (JSON or CSV, by extension), sends its rows as
    /// `catalog.import` commands and prints the per-row report. Throws when a row failed.
    ///
    /// A file that fits one command (`ContentImportFile.maximumRows`, `maximumCommandBytes`) is one command,
    /// all or nothing. A bigger one goes as several, each all or nothing: one rejected command stops the
    /// import (commands already sent stay applied); importing the corrected file again completes it, since
    /// rows imported before are recognised by their command ids and left unchanged.
    static func run(file path: String, skipBadRows: Bool, settings: ServiceSettings, window: Int = 4) async throws {
        guard let format = ContentImportFile.Format(fileName: path) else {
            throw ImportError(message: "\(path): the file name must end in .json or .csv")
        }
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch { throw ImportError(message: "\(path): cannot read: \(error.localizedDescription)") }
        let plan: ContentImportFile.Plan
        do {
            plan = try ContentImportFile.plan(data, format: format, actor: "import", maximumRows: ContentImportFile.maximumFileRows)
        } catch {
            throw ImportError(message: "\(path): \(error.message)")
        }
        let progress = { (line: String) in FileHandle.standardError.write(Data("\(line)\n".utf8)) }
        progress("read \(path): \(counted(plan.fileRows, "row")) (\(counted(plan.tours, "tour")), \(counted(plan.pois, "POI")), "
                 + "\(counted(plan.categories, "category", plural: "categories"))\(plan.calendar > 0 ? ", " + counted(plan.calendar, "calendar event") : "")\(plan.people > 0 ? ", " + counted(plan.people, "person", plural: "people") : "")\(plan.pages > 0 ? ", " + counted(plan.pages, "page") : "")\(plan.featured > 0 ? ", " + counted(plan.featured, "featured item") : "")), "
                 + "\(plan.unreadable.count) unreadable")
        for row in plan.unreadable { progress("  \(row.label): \(row.message ?? "unreadable")") }
        if !plan.unreadable.isEmpty && !skipBadRows {
            throw ImportError(message: "nothing imported: \(counted(plan.unreadable.count, "row")) cannot be read (fix them, or pass --skip-bad-rows)")
        }
        guard !plan.rows.isEmpty else { throw ImportError(message: "nothing to import") }

        LoggingSetup.bootstrap(format: .text, level: .warning)
        let logger = Logger(label: "catalog-import")
        var kafka = settings.kafka
        // Big imports queue behind each other at catalog: a command may wait for the ones before it.
        kafka.deliveryTimeoutMilliseconds = max(kafka.deliveryTimeoutMilliseconds, 60_000)
        let producer = try KafkaProducer(configuration: kafka, logger: logger)
        let startup = StartupBarrier()
        let client = CatalogCommandClient(producer: producer, configuration: kafka, startup: startup, source: "catalog-import", logger: logger)
        try await producer.createTopics(Topic.all)
        startup.open()
        let listener = Task { try await client.run() }
        defer { listener.cancel() }

        let phases = plan.commands(actor: "import", skipInvalidRows: skipBadRows)
        let commandCount = phases.map(\.count).reduce(0, +)
        progress("sending \(plan.rows.count) rows to catalog as \(commandCount == 1 ? "one import" : "\(commandCount) import commands") (\(skipBadRows ? "skipping bad rows" : "all or nothing"))")
        let started = ContinuousClock.now
        // One command answers within a minute, as it always did; several queue behind each other at catalog.
        let results = try await ContentImportFile.send(phases, client: client, window: window, timeout: .seconds(commandCount == 1 ? 60 : 300))
        let duration = ContinuousClock.now - started
        await producer.shutdown()
        let rows = plan.namingStops(in: results.flatMap { $0.rows ?? [] })
        for row in rows where row.outcome == .failed || row.message?.contains("made without") == true {
            progress("  \(row.label): \(row.outcome == .failed ? "failed" : "imported"): \(row.message ?? row.errors.map(\.message).joined(separator: "; "))")
        }
        let applied = rows.filter { $0.outcome == .applied }.count
        let notSent = plan.rows.count - rows.count
        if commandCount == 1, let result = results.first {
            print("\(path): \(result.message ?? result.outcome.rawValue)")
        } else {
            let stopped = notSent > 0 ? "; a command was rejected, so the last \(notSent) rows were not sent" : ""
            print("\(path): imported \(applied) of \(plan.rows.count) rows through \(results.count) of \(commandCount) import commands\(stopped)")
        }
        // The answers' rows are the plan's rows, in order.
        let pois = zip(plan.rows, rows).filter { $0.0.commands.first?.action == .createPoi && $0.1.outcome == .applied }.count
        let seconds = duration.seconds
        print(String(format: "imported %d POIs in %.1f s (%.0f POIs/s)", pois, seconds, Double(pois) / max(seconds, 0.001)))
        if results.contains(where: { $0.outcome != .applied }) || rows.contains(where: { $0.outcome != .applied }) || notSent > 0 || !plan.unreadable.isEmpty {
            throw ImportError(message: "import incomplete: see the rows above")
        }
    }
}

struct ImportError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
