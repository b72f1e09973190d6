import Foundation
import Shared

/// The names of the records whose views are reported (`GET /v1/reports/views`), kept as they change on
/// `catalog.events`. A deletion keeps the name: reports over past days still show what was visited.
struct RecordNames<Store: IngestStore>: CatalogRecordConsumer {
    let store: Store

    func handle<Content: CatalogRecordContent>(_ envelope: Envelope<CatalogRecordEvent<Content>>) async throws {
        guard let reported = Content.self as? any ReportedRecord.Type else { return }
        try await save(envelope.data, as: reported)
    }

    /// `Record` is the event's own content type, opened from the existential: the cast cannot fail.
    private func save<Record: ReportedRecord>(_ event: some Any, as _: Record.Type) async throws {
        guard let event = event as? CatalogRecordEvent<Record> else { return assertionFailure("not a \(Record.recordKind) event") }
        guard event.kind == .changed, let record = event.record else { return }
        try await store.saveName(entityId: record.id, kind: Record.reportKind, name: record.content.reportName, version: record.version, stops: nil)
    }
}

/// The kinds of `CatalogRecordKinds.all` whose views are reported.
enum ReportedRecords {
    static let all: [any CatalogRecordContent.Type] = CatalogRecordKinds.all.filter { $0 is any ReportedRecord.Type }
}

/// A kind of record whose views the reports count, by the kind and name they show.
protocol ReportedRecord: CatalogRecordContent {
    /// The kind in `GET /v1/reports/views` (DESIGN.md, "Report semantics").
    static var reportKind: String { get }
    var reportName: String { get }
}

extension CalendarEntryContent: ReportedRecord {
    static var reportKind: String { "event" }
    var reportName: String { title }
}

extension PersonContent: ReportedRecord {
    static var reportKind: String { "person" }
    var reportName: String { name }
}

extension PageContent: ReportedRecord {
    static var reportKind: String { "page" }
    var reportName: String { title }
}
