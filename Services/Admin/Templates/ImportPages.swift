import Foundation
import Shared

/// The bulk import form, its progress and its per-row report.
enum ImportPages {
    /// The sample CSV (/import/sample.csv): two POIs and a draft tour of them, by legacyId, so importing it twice changes nothing.
    static let sampleCSV = """
        kind,legacyId,name,summary,description,purpose,latitude,longitude,category,stops,status
        poi,90001,Sample Library,Books and study rooms.,Open to visitors on weekdays.,,34.2275,-77.8740,Sample/Buildings,,
        poi,90002,Sample Hall,Lectures and labs.,"The oldest hall on campus, built in 1961.",,34.2262,-77.8768,Sample/Buildings,,
        tour,90010,Sample Tour,Two stops to start from.,,Shows how a tour and its stops are imported.,,,,90001;90002,draft

        """
    static func form(recent: [ImportJob], error: String?, csrf: String, clock: SiteClock) -> HTML {
        let rows: [HTML] = recent.map { job in
            "<tr><td><a href=\"/import/\(job.id.uuidString.lowercased())\">\(job.fileName)</a></td><td>\(clock.text(job.createdAt))</td><td>\(phaseLabel(job.phase))</td><td>\(job.message ?? "")</td></tr>"
        }
        let formats = ContentImportFile.Format.allCases.map { ($0.rawValue, $0.rawValue.uppercased()) }
        return """
            <h1>Import Tours and POIs</h1>
            <p>Upload a JSON file in the demo file's format (<code>{"tours": [...], "pois": [...]}</code>) or a CSV file.
            Every row goes through the same checks as the forms. If any row fails, nothing is imported, unless you choose to skip bad rows.
            Importing the same file again changes nothing.</p>
            \(error.map { "<div class=\"notice error\" role=\"alert\"><p>\($0)</p></div>" as HTML })
            \(Forms.post("/import", csrf: csrf, multipart: true, """
                <div class="field"><label for="field-file">File (.json or .csv)</label><input type="file" id="field-file" name="file" accept=".json,.csv"></div>
                \(Forms.textarea("Or paste the file's content", name: "content", value: "", rows: 6))
                \(Forms.select("Format of pasted content", name: "format", options: formats, selected: "csv"))
                \(Forms.checkbox("Skip bad rows (import the good rows and report the bad ones)", name: "skipBadRows", checked: false))
                <div class="actions">\(Forms.submit("Import"))</div>
                """))
            <h2>CSV columns</h2>
            <p><a href="/import/sample.csv" download>Download a sample CSV</a> (two stops and a draft tour of them) to start from.</p>
            <p>A header row names the columns, in any order: \(ContentImportFile.csvColumns.joined(separator: ", ")).
            <code>kind</code> is poi (the default), tour, category, event, person, page or featured. POIs need name, latitude and longitude;
            lists in a cell are separated by ";"; a link is <code>name|type|url</code>; a tour's <code>stops</code> are POI legacyIds or ids;
            an event's <code>recurrence</code> is an RRULE such as <code>FREQ=WEEKLY;BYDAY=TU;UNTIL=20270630</code> and its <code>place</code> a
            POI's legacyId or text; a featured item's <code>target</code> is <code>tour:LEGACYID</code>, <code>poi:LEGACYID</code>,
            <code>event:TITLE</code> or <code>page:SLUG</code> of a row in the file.</p>
            \(rows.isEmpty ? .empty : """
                <h2>Recent imports</h2>
                <table><thead><tr><th scope="col">File</th><th scope="col">Started</th><th scope="col">State</th><th scope="col">Result</th></tr></thead>
                <tbody>\(rows)</tbody></table>
                """ as HTML)
            """
    }

    static func phaseLabel(_ phase: ImportJob.Phase) -> String {
        switch phase {
        case .reading: "Reading the file"
        case .sending: "Sending to catalog"
        case .applying: "Catalog is applying the rows"
        case .done: "Done"
        case .failed: "Not imported"
        }
    }

    /// `names`: what each row made or found is called now (a row is otherwise only its line in the file).
    static func job(_ job: ImportJob, names: (UUID) -> String?) -> HTML {
        let steps: [ImportJob.Phase] = [.reading, .sending, .applying, .done]
        let current = steps.firstIndex(of: job.phase) ?? steps.count
        let progress: [HTML] = steps.enumerated().map { index, phase in
            // Done is a state, not a step in progress: once there, every step is ticked.
            let mark = job.phase == .failed ? "" : index < current || job.phase == .done ? "✓ " : index == current ? "→ " : ""
            return "<li>\(mark)\(phaseLabel(phase))</li>"
        }
        // The file's rows, as the line above counts them; the category rows made for the paths they use apart.
        let fileRows = job.report.filter { !$0.label.hasPrefix(ContentImportFile.categoryLabelPrefix) }
        let applied = fileRows.filter { $0.outcome == .applied }.count
        let failed = fileRows.filter { $0.outcome == .failed }.count
        let categories = job.report.count - fileRows.count
        let categoryNote = categories == 0 ? "" : " (and \(counted(categories, "category", plural: "categories")) they use)"
        func rows(_ results: [CatalogBatchRowResult]) -> [HTML] {
            results.map { row in
                let problem = row.message ?? row.errors.map(\.message).joined(separator: "; ")
                let outcome: String = switch row.outcome {
                case .applied: "Imported"
                case .failed: "Failed"
                case .notApplied: "Not imported (another row failed)"
                }
                let name = row.entityIds.lazy.compactMap(names).first ?? ""
                return "<tr class=\"\(row.outcome.rawValue)\"><td>\(row.label)</td><td>\(name)</td><td>\(outcome)</td><td>\(problem)</td></tr>"
            }
        }
        // The categories the rows use are made first, apart from the file's rows: listed after them, on their own.
        let categoryRows = job.report.filter { $0.label.hasPrefix(ContentImportFile.categoryLabelPrefix) }
        let header: HTML = "<thead><tr><th scope=\"col\">Row</th><th scope=\"col\">Name</th><th scope=\"col\">Outcome</th><th scope=\"col\">Problem</th></tr></thead>"
        return """
            <h1>Import of \(job.fileName)</h1>
            <p>\(counted(job.totalRows, "row")) in the file, \(job.skipBadRows ? "skipping bad rows" : "all or nothing").</p>
            <ol class="progress">\(progress)</ol>
            \(job.message.map { "<p class=\"notice \(job.phase == .done && failed == 0 ? "success" : "warning")\" role=\"status\">\($0)</p>" as HTML })
            \(job.report.isEmpty ? .empty : """
                <h2>Report</h2>
                <p>\(applied) imported, \(failed) failed\(categoryNote).</p>
                <table id="import-rows">\(header)<tbody>\(rows(fileRows))</tbody></table>
                """ as HTML)
            \(categoryRows.isEmpty ? .empty : """
                <h3>Categories the rows use</h3>
                <table id="import-categories">\(header)<tbody>\(rows(categoryRows))</tbody></table>
                """ as HTML)
            <p><a href="/import">Import another file</a></p>
            """
    }
}
