import Foundation
import Shared

/// The published calendar entries (DESIGN.md, "Calendar"), each with its schedule read once per publication, for
/// the calendar's answers.
struct CalendarListing: Sendable {
    /// An object, so the order and the id lookup share one copy (inline, an entry is most of a kilobyte).
    final class Entry: Sendable {
        let state: CalendarEntryState
        let schedule: CalendarSchedule
        let foldedCategories: [[UInt8]]

        init(state: CalendarEntryState, schedule: CalendarSchedule, foldedCategories: [[UInt8]]) {
            self.state = state
            self.schedule = schedule
            self.foldedCategories = foldedCategories
        }

        var id: UUID { state.id }
        var content: CalendarEntryContent { state.content }
    }

    /// By title, then id: the order of `calendar.ics`.
    var entries: [CalendarEntryState] { scheduled.map(\.state) }
    let scheduled: [Entry]
    let byId: [UUID: Entry]
    /// Titles, summaries and place texts, slots the entries' places in `scheduled`.
    let textIndex: TextIndex

    init(_ states: [CalendarEntryState] = []) {
        // An entry whose content does not read (catalog checks it, so only one from a newer catalog) is left out.
        scheduled = states.compactMap { state in
            CalendarSchedule(state.content).map { Entry(state: state, schedule: $0, foldedCategories: state.content.categories.map(TextFolding.fold)) }
        }.sorted { ($0.content.title, $0.id) < ($1.content.title, $1.id) }
        byId = Dictionary(scheduled.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var index = TextIndex()
        for (slot, entry) in scheduled.enumerated() {
            index.insert(slot: Int32(slot), id: entry.id, name: entry.content.title, fields: [entry.content.summary, entry.content.placeText ?? ""])
        }
        index.seal()
        textIndex = index
    }

    func entry(inSlot slot: Int32) -> Entry? { slot >= 0 && Int(slot) < scheduled.count ? scheduled[Int(slot)] : nil }

    /// The occurrence a search result shows: the next to come, else the last (an entry with only past ones).
    func shownOccurrence(of entry: Entry, now: Date) -> CalendarOccurrence? {
        if let next = entry.schedule.occurrences(overlapping: now, .distantFuture, limit: 1).first { return next }
        return entry.schedule.occurrences(overlapping: .distantPast, now).last
    }

    /// Every occurrence overlapping [from, to) of the entries in `category` (folded; nil: all), by start, then title.
    func occurrences(from: Date, to: Date, category: [UInt8]?) -> [(entry: Entry, occurrence: CalendarOccurrence)] {
        var found: [(entry: Entry, occurrence: CalendarOccurrence)] = []
        for entry in scheduled {
            if let category, !entry.foldedCategories.contains(where: { TextFolding.isPath($0, within: category) }) { continue }
            for occurrence in entry.schedule.occurrences(overlapping: from, to) { found.append((entry, occurrence)) }
        }
        return found.sorted { ($0.occurrence.start, $0.entry.content.title, $0.entry.id) < ($1.occurrence.start, $1.entry.content.title, $1.entry.id) }
    }
}
