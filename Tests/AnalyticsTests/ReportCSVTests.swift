import Foundation
import Shared
import Testing
@testable import Analytics

/// The reports' CSV against spreadsheet formula injection (issue 14): text from phones (platform, model, …)
/// and editors (names) must never open as a formula, whatever the spreadsheet's separator.
@Suite("Report CSV")
struct ReportCSVTests {
    @Test("a formula start is neutralised by its first Unicode scalar, even with a combining mark after it")
    func firstScalar() {
        for start in ["=", "+", "-", "@", "\t", "\r"] {
            let value = start + "\u{0301}1+2"
            #expect(CSVTable.escape(value) == "\"'" + value + "\"", "\(start.unicodeScalars.map(\.value))")
        }
        #expect(CSVTable.escape("=HYPERLINK(\"x\")") == "\"'=HYPERLINK(\"\"x\"\")\"")
        // A quote with a combining mark is still a quote: doubled, so it cannot end the field.
        #expect(CSVTable.escape("a\"\u{0301},=1+2") == "\"a\"\"\u{0301},=1+2\"")
    }

    @Test("every text field is quoted, so `;` and tab separators cannot split off a formula")
    func everyFieldQuoted() {
        #expect(CSVTable.escape("x;=1+2") == "\"x;=1+2\"")
        #expect(CSVTable.escape("x\t=1+2") == "\"x\t=1+2\"")
        #expect(CSVTable.escape("ios") == "\"ios\"")
        #expect(CSVTable.escape("") == "\"\"")
        let table = CSVTable(header: ["dimension", "value", "devices"], rows: [[.text("model"), .text("x;=1+2"), .integer(3)], [.text(nil), .text("a"), .number(1.5)]])
        #expect(table.text == "dimension,value,devices\r\n\"model\",\"x;=1+2\",3\r\n,\"a\",1.5\r\n")
    }

    @Test("rates show to 0.1 % and mean seconds whole; counts and other numbers as they are")
    func roundedForPeople() {
        #expect(CSVTable.Cell.rate(0.6237970253718286).rendered == "0.624")
        #expect(CSVTable.Cell.rate(1).rendered == "1.000")
        #expect(CSVTable.Cell.seconds(430.5).rendered == "431")
        #expect(CSVTable.Cell.seconds(0).rendered == "0")
        let row = TourReportRow(tourId: UUID(), name: "T", starts: 3, completions: 2, completionRate: 2.0 / 3, uniqueDevices: 3,
                                averageDurationSeconds: 1234.5678)
        #expect(TourReportRow.csv([row]).text.hasSuffix(",3,2,0.667,3,1235\r\n"))
    }
}
