import Foundation
import Shared

/// The published people directory (DESIGN.md, "People"), searched by names, roles, departments and interests, whose
/// name order is the list's order.
typealias PeopleListing = RecordListing<PersonContent>

extension PersonContent: ListedRecord {
    /// The folded department, which `?department=` matches.
    static func derive(_ state: PersonState) -> [UInt8]? { TextFolding.fold(state.content.department) }

    static func listedBefore(_ a: PersonState, _ b: PersonState) -> Bool { (a.content.name, a.id) < (b.content.name, b.id) }

    /// A translation's role and department too: a word of any language finds them (DESIGN.md "Languages").
    var indexedText: (name: String, fields: [String])? {
        (name, [role, department] + interests + (translations ?? [:]).values.flatMap { [$0["role"], $0["department"]].compactMap { $0 } })
    }
}

extension RecordListing where Content == PersonContent {
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

extension RecordListing.Entry where Content == PersonContent {
    var foldedDepartment: [UInt8] { derived }
}
