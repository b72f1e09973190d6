import Foundation

/// Every kind of catalog record, declared once (DESIGN.md, "Catalog records"). What each service does per kind is
/// derived from this list: the events a `catalog.events` consumer reads, the handlers it registers
/// (`CatalogRecordHandler.every`), the catalog's record commands and snapshot, and the feed's per-kind steps. A new
/// kind is a content type (its messages and codec), a place in this list, and each service's conformance for it.
public enum CatalogRecordKinds {
    /// In the order a snapshot republishes them. Media items first: a snapshot sends them ahead of the POIs, which show them.
    public static let all: [any CatalogRecordContent.Type] = [
        MediaContent.self, CalendarEntryContent.self, PersonContent.self, PageContent.self, FeaturedContent.self,
    ]

    /// The kind whose events' and commands' types start `<recordKind>.`; nil for a name no kind has.
    public static func named(_ recordKind: some StringProtocol) -> (any CatalogRecordContent.Type)? {
        all.first { $0.recordKind == recordKind }
    }
}

/// What a consumer of `catalog.events` does with every kind of record's events: one generic method, which
/// `CatalogRecordHandler.every` registers for each kind in `CatalogRecordKinds.all`.
public protocol CatalogRecordConsumer: Sendable {
    func handle<Content: CatalogRecordContent>(_ envelope: Envelope<CatalogRecordEvent<Content>>) async throws
}

extension CatalogAction {
    /// What a record command does, whatever the kind: `calendar.create`, `person.set-status`.
    public enum RecordVerb: String, Sendable, CaseIterable {
        case create, update, setStatus = "set-status", delete
    }

    /// The record kind and verb of `<recordKind>.<verb>`; nil for any other action (tours, POIs, categories…).
    public var recordCommand: (kind: any CatalogRecordContent.Type, verb: RecordVerb)? {
        guard let dot = rawValue.firstIndex(of: "."), let kind = CatalogRecordKinds.named(rawValue[..<dot]),
              let verb = RecordVerb(rawValue: String(rawValue[rawValue.index(after: dot)...])) else { return nil }
        return (kind, verb)
    }

    /// The action of a kind's verb: `.setPageStatus` for pages' `.setStatus`.
    public static func record<Content: CatalogRecordContent>(_: Content.Type, _ verb: RecordVerb) -> CatalogAction {
        guard let action = CatalogAction(rawValue: "\(Content.recordKind).\(verb.rawValue)") else {
            preconditionFailure("CatalogAction has no \(Content.recordKind).\(verb.rawValue)")
        }
        return action
    }
}
