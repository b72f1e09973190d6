import Foundation
import Shared

/// One kind of published record as the feed lists it (DESIGN.md, "Catalog records"), made once per publication that
/// changed one: in the kind's order, by id (and by the kind's own key: a page's address), each entry with what the
/// kind reads once per publication (a calendar entry's schedule, a page's HTML), and a text index over what the
/// kind's search covers, whose slots are the entries' places in the order.
struct RecordListing<Content: ListedRecord>: Sendable {
    /// An object, so the order and the lookups share one copy (inline, a calendar entry is most of a kilobyte).
    final class Entry: Sendable {
        let state: CatalogRecordState<Content>
        let derived: Content.Derived

        init(_ state: CatalogRecordState<Content>, _ derived: Content.Derived) {
            self.state = state
            self.derived = derived
        }

        var id: UUID { state.id }
        var content: Content { state.content }
    }

    /// In the kind's order (`listedBefore`).
    let ordered: [Entry]
    let byId: [UUID: Entry]
    /// By `listingKey`, for kinds that have one.
    let byKey: [String: Entry]
    let textIndex: TextIndex

    init(_ states: [CatalogRecordState<Content>] = []) {
        ordered = states.compactMap { state in Content.derive(state).map { Entry(state, $0) } }
            .sorted { Content.listedBefore($0.state, $1.state) }
        byId = Dictionary(ordered.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        byKey = Dictionary(ordered.compactMap { entry in entry.content.listingKey.map { ($0, entry) } }, uniquingKeysWith: { first, _ in first })
        var index = TextIndex()
        for (slot, entry) in ordered.enumerated() {
            guard let text = entry.content.indexedText else { continue }
            index.insert(slot: Int32(slot), id: entry.id, name: text.name, fields: text.fields)
        }
        index.seal()
        textIndex = index
    }

    func entry(inSlot slot: Int32) -> Entry? { slot >= 0 && Int(slot) < ordered.count ? ordered[Int(slot)] : nil }
}

/// How the feed lists one kind of record: what it reads once per publication, its order, and what its search covers.
protocol ListedRecord: CatalogRecordContent {
    associatedtype Derived: Sendable = Void
    /// What each answer would otherwise read again (a schedule, Markdown's HTML); nil leaves the record out.
    static func derive(_ state: CatalogRecordState<Self>) -> Derived?
    static func listedBefore(_ a: CatalogRecordState<Self>, _ b: CatalogRecordState<Self>) -> Bool
    /// The text index's name and other fields; nil: not searched.
    var indexedText: (name: String, fields: [String])? { get }
    /// A second key the kind is looked up by (a page's slug).
    var listingKey: String? { get }
}

extension ListedRecord {
    var indexedText: (name: String, fields: [String])? { nil }
    var listingKey: String? { nil }
}

extension ListedRecord where Derived == Void {
    static func derive(_: CatalogRecordState<Self>) -> Void? { () }
}
