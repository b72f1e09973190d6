import Foundation
import Shared

/// A report as a CSV table (RFC 4180, header row first), the same rows as its JSON.
struct CSVTable: Sendable, Equatable {
    enum Cell: Sendable, Equatable {
        case text(String?)
        case integer(Int)
        case number(Double)
        /// A share (0…1), to 0.1 % (three decimals): figures for people; the JSON keeps them exact.
        case rate(Double)
        /// A mean of seconds, to the whole second.
        case seconds(Double)

        var rendered: String {
            switch self {
            case .integer(let value): String(value)
            case .number(let value): String(value)
            case .rate(let value): String(format: "%.3f", value)
            case .seconds(let value): String(Int(value.rounded()))
            case .text(nil): ""
            case .text(let value?): CSVTable.escape(value)
            }
        }
    }

    var header: [String]
    var rows: [[Cell]]

    var text: String {
        var lines = [header.joined(separator: ",")]
        for row in rows { lines.append(row.map(\.rendered).joined(separator: ",")) }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// Quotes every text field (RFC 4180), so no separator a spreadsheet may guess (`,`, `;`, tab) splits one
    /// into a cell of its own. Text from phones (device models) or editors (names) whose first Unicode scalar
    /// would start a spreadsheet formula is prefixed with an apostrophe, so opening the file runs nothing, whatever
    /// combining marks follow it. Quotes are doubled scalar by scalar (a `"` with a combining mark is still a quote).
    /// Numbers and the header row are ours and stay bare.
    static func escape(_ value: String) -> String {
        var quoted = String.UnicodeScalarView()
        quoted.append("\"")
        if let first = value.unicodeScalars.first, formulaStarts.contains(first) { quoted.append("'") }
        for scalar in value.unicodeScalars {
            if scalar == "\"" { quoted.append("\"") }
            quoted.append(scalar)
        }
        quoted.append("\"")
        return String(quoted)
    }

    /// First characters that make a spreadsheet read a cell as a formula (OWASP's list, with their fullwidth forms).
    static let formulaStarts: Set<Unicode.Scalar> = ["=", "+", "-", "@", "\t", "\r", "\n", "\u{FF1D}", "\u{FF0B}", "\u{FF0D}", "\u{FF20}"]
}

extension SummaryReport {
    var csv: CSVTable {
        CSVTable(header: ["toursStarted", "toursCompleted", "completionRate", "uniqueDevices", "uniqueTourists", "poiViews", "poiVisits", "mediaPlays"],
                 rows: [[.integer(toursStarted), .integer(toursCompleted), .rate(completionRate), .integer(uniqueDevices),
                         .integer(uniqueTourists), .integer(poiViews), .integer(poiVisits), .integer(mediaPlays)]])
    }
}

extension PoiReportRow {
    static func csv(_ rows: [PoiReportRow]) -> CSVTable {
        CSVTable(header: ["poiId", "name", "views", "visits", "averageDwellSeconds", "mediaPlays"],
                 rows: rows.map { [.text($0.poiId.lowercased), .text($0.name), .integer($0.views), .integer($0.visits),
                                   .seconds($0.averageDwellSeconds), .integer($0.mediaPlays)] })
    }
}

extension TourReportRow {
    static func csv(_ rows: [TourReportRow]) -> CSVTable {
        CSVTable(header: ["tourId", "name", "starts", "completions", "completionRate", "uniqueDevices", "averageDurationSeconds"],
                 rows: rows.map { [.text($0.tourId.lowercased), .text($0.name), .integer($0.starts), .integer($0.completions),
                                   .rate($0.completionRate), .integer($0.uniqueDevices), .seconds($0.averageDurationSeconds)] })
    }
}

extension DeviceReport {
    /// The four breakdowns in DESIGN.md's names and order.
    var dimensions: [(name: String, counts: [String: Int])] {
        [("platform", platforms), ("model", models), ("osVersion", osVersions), ("appVersion", appVersions)]
    }

    /// One row per dimension and value: `dimension,value,devices`, most devices first within a dimension.
    var csv: CSVTable {
        CSVTable(header: ["dimension", "value", "devices"], rows: dimensions.flatMap { dimension in
            dimension.counts.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map { [.text(dimension.name), .text($0.key), .integer($0.value)] }
        })
    }
}

extension DailyReportRow {
    static func csv(_ rows: [DailyReportRow]) -> CSVTable {
        CSVTable(header: ["date", "toursStarted", "toursCompleted", "uniqueDevices", "poiViews", "poiVisits", "mediaPlays"],
                 rows: rows.map { [.text($0.date), .integer($0.toursStarted), .integer($0.toursCompleted), .integer($0.uniqueDevices),
                                   .integer($0.poiViews), .integer($0.poiVisits), .integer($0.mediaPlays)] })
    }
}

extension FunnelReport {
    /// One row per step: started, each stop in walking order, completed.
    var csv: CSVTable {
        CSVTable(header: ["step", "poiId", "name", "devices"],
                 rows: [[.text("started"), .text(nil), .text(nil), .integer(started)]]
                    + steps.enumerated().map { [.text("stop \($0.offset + 1)"), .text($0.element.poiId.lowercased), .text($0.element.name),
                                                 .integer($0.element.devices)] }
                    + [[.text("completed"), .text(nil), .text(nil), .integer(completed)]])
    }
}

extension HourReport {
    var csv: CSVTable {
        CSVTable(header: ["weekday"] + (0..<24).map { String(format: "h%02d", $0) },
                 rows: weekdays.map { [.text($0.weekday)] + $0.visits.map(CSVTable.Cell.integer) })
    }
}

extension SearchReport {
    /// The top searches, then those that found nothing, told apart by `list`; a `nothingFound` row's count is its
    /// searches that found nothing, so it fills `zeroResults` and leaves `searches` empty.
    var csv: CSVTable {
        CSVTable(header: ["list", "query", "searches", "zeroResults"],
                 rows: top.map { [.text("top"), .text($0.query), .integer($0.searches), .integer($0.zeroResults)] }
                    + nothingFound.map { [.text("nothingFound"), .text($0.query), .text(nil), .integer($0.searches)] })
    }
}

extension ViewsReport {
    /// One row per item, told apart by `list` (events, pages, people), then one per source (`list` sources, the
    /// `via` as its name, no id).
    var csv: CSVTable {
        CSVTable(header: ["list", "id", "name", "views"],
                 rows: [("events", events), ("pages", pages), ("people", people)].flatMap { list, rows in
                     rows.map { [.text(list), .text($0.id.lowercased), .text($0.name), .integer($0.views)] }
                 } + sources.map { [.text("sources"), .text(""), .text($0.via), .integer($0.views)] })
    }
}

extension LanguageReport {
    /// One row per language, as the JSON orders them; `unknown` for events without one.
    var csv: CSVTable {
        CSVTable(header: ["language", "tourStarts", "poiViews"],
                 rows: languages.map { [.text($0.language), .integer($0.tourStarts), .integer($0.poiViews)] })
    }
}
