import Foundation
import Shared

/// The published calendar entries (DESIGN.md, "Calendar"), each with its schedule read once per publication, by
/// title then id (the order of `calendar.ics`), searched by titles, summaries and place texts.
typealias CalendarListing = RecordListing<CalendarEntryContent>

extension CalendarEntryContent: ListedRecord {
    struct Listed: Sendable {
        let schedule: CalendarSchedule
        let foldedCategories: [[UInt8]]
    }

    /// An entry whose content does not read (catalog checks it, so only one from a newer catalog) is left out.
    static func derive(_ state: CalendarEntryState) -> Listed? {
        CalendarSchedule(state.content).map { Listed(schedule: $0, foldedCategories: state.content.categories.map(TextFolding.fold)) }
    }

    static func listedBefore(_ a: CalendarEntryState, _ b: CalendarEntryState) -> Bool { (a.content.title, a.id) < (b.content.title, b.id) }

    /// A translation's title and summary too: a word of any language finds the entry (DESIGN.md "Languages").
    var indexedText: (name: String, fields: [String])? {
        (title, [summary, placeText ?? ""] + (translations ?? [:]).values.flatMap { [$0["title"], $0["summary"]].compactMap { $0 } })
    }
}

extension RecordListing.Entry where Content == CalendarEntryContent {
    var schedule: CalendarSchedule { derived.schedule }
}

extension RecordListing where Content == CalendarEntryContent {
    /// By title, then id: the order of `calendar.ics`.
    var entries: [CalendarEntryState] { ordered.map(\.state) }

    /// The occurrence a search result shows: the next to come, else the last (an entry with only past ones).
    func shownOccurrence(of entry: Entry, now: Date) -> CalendarOccurrence? {
        if let next = entry.schedule.occurrences(overlapping: now, .distantFuture, limit: 1).first { return next }
        return entry.schedule.occurrences(overlapping: .distantPast, now).last
    }

    /// Every occurrence overlapping [from, to) of the entries in `category` (folded; nil: all), by start, then title.
    func occurrences(from: Date, to: Date, category: [UInt8]?) -> [(entry: Entry, occurrence: CalendarOccurrence)] {
        var found: [(entry: Entry, occurrence: CalendarOccurrence)] = []
        for entry in ordered {
            if let category, !entry.derived.foldedCategories.contains(where: { TextFolding.isPath($0, within: category) }) { continue }
            for occurrence in entry.schedule.occurrences(overlapping: from, to) { found.append((entry, occurrence)) }
        }
        return found.sorted { ($0.occurrence.start, $0.entry.content.title, $0.entry.id) < ($1.occurrence.start, $1.entry.content.title, $1.entry.id) }
    }
}
