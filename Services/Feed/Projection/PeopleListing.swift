import Foundation
import Shared

/// The published people directory (DESIGN.md, "People"), made once per publication that changed it: the entries,
/// by id, and a text index over names, roles, departments and interests, whose name order is the list's order.
struct PeopleListing: Sendable {
    final class Entry: Sendable {
        let state: PersonState
        let foldedDepartment: [UInt8]

        init(_ state: PersonState) {
            self.state = state
            foldedDepartment = TextFolding.fold(state.content.department)
        }

        var id: UUID { state.id }
        var content: PersonContent { state.content }
    }

    /// Slots of the text index.
    let entries: [Entry]
    let byId: [UUID: Entry]
    let textIndex: TextIndex

    init(_ states: [PersonState] = []) {
        entries = states.map(Entry.init)
        byId = Dictionary(entries.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var index = TextIndex()
        for (slot, entry) in entries.enumerated() {
            index.insert(slot: Int32(slot), id: entry.id, name: entry.content.name,
                         fields: [entry.content.role, entry.content.department] + entry.content.interests)
        }
        index.seal()
        textIndex = index
    }

    func entry(inSlot slot: Int32) -> Entry? { slot >= 0 && Int(slot) < entries.count ? entries[Int(slot)] : nil }

    /// In name order: with `query`, the entries containing it; with `department`, those in it.
    func matches(query: [UInt8]?, department: [UInt8]?) -> [Entry] {
        var slots: [Int32] = []
        if let query {
            slots = textIndex.search(folded: query, limit: .max)
        } else {
            textIndex.walkInNameOrder(after: nil) { slot in
                slots.append(slot)
                return true
            }
        }
        return slots.compactMap(entry(inSlot:)).filter { department == nil || $0.foldedDepartment == department }
    }
}
