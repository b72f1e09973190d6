import Foundation
@testable import Shared
import Testing

/// The one list of record kinds (CatalogRecordKinds.swift) and what is derived from it.
@Suite("Catalog record kinds")
struct CatalogRecordKindsTests {
    @Test("each kind has its four commands, and every record command names a kind and a verb")
    func commandsOfEachKind() throws {
        let names = CatalogRecordKinds.all.map { $0.recordKind }
        #expect(Set(names).count == names.count)
        for kind in CatalogRecordKinds.all {
            for verb in CatalogAction.RecordVerb.allCases {
                let action = try #require(CatalogAction(rawValue: "\(kind.recordKind).\(verb.rawValue)"))
                let command = try #require(action.recordCommand)
                #expect(command.kind == kind && command.verb == verb)
            }
        }
        // No other action reads as a record's: tours', POIs' and categories' commands have kinds of their own.
        let recordActions = CatalogAction.allCases.filter { $0.recordCommand != nil }
        #expect(recordActions.count == CatalogRecordKinds.all.count * CatalogAction.RecordVerb.allCases.count)
        #expect(CatalogAction.createTour.recordCommand == nil && CatalogAction.createCategory.recordCommand == nil)
        #expect(CatalogRecordKinds.named("calendar") == CalendarEntryContent.self && CatalogRecordKinds.named("tour") == nil)
        // A snapshot sends the first kind ahead of the POIs (SnapshotCommand.swift), so a reader renders each POI once.
        #expect(CatalogRecordKinds.all.first == MediaContent.self)
    }

    @Test("a consumer reads the events of every kind, and each command and result carries the kind's own field")
    func handlersAndFields() throws {
        #expect(CatalogRecordHandler.kinds == Set(CatalogRecordKinds.all.map { $0.recordKind }))
        #expect(CatalogRecordHandler.isRecordEvent(type: "featured.changed") && !CatalogRecordHandler.isRecordEvent(type: "tour.changed"))
        let entry = CalendarEntryContent(title: "Open day", startsAt: "2026-12-01T10:00", endsAt: "2026-12-01T12:00", timeZone: "America/New_York")
        var command = CatalogCommand(action: .record(CalendarEntryContent.self, .create), actor: "a")
        command[keyPath: CalendarEntryContent.commandContent] = entry
        let json = try JSONSerialization.jsonObject(with: JSONCoding.encoder.encode(command)) as? [String: Any]
        #expect(json?[CalendarEntryContent.commandField] != nil && json?["action"] as? String == "calendar.create")
    }
}
