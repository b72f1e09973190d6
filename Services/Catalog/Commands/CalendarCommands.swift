import Foundation
import Shared

/// The calendar's commands (DESIGN.md, "Calendar"): entries checked by `CalendarSchedule` and against the catalog's
/// categories and POIs, versioned, audited and published as `calendar.changed` / `calendar.deleted`.
extension Work {
    mutating func createCalendarEntry() async throws -> CatalogCommandResult {
        guard var content = command.calendarEntry else { return missing("calendarEntry", "calendar entry content is required") }
        if command.status == .archived { return missing("status", "status must be published or draft") }
        let errors = try await validate(&content)
        guard errors.isEmpty else { return rejected(errors) }
        let id = command.entityId ?? UUID()
        if try await transaction.calendarEntry(id) != nil { return missing("entityId", "a calendar entry with id \(id) already exists") }
        return try await commit(CalendarEntryState(id: id, version: 1, status: command.status ?? .draft, content: content, updatedAt: now), before: nil)
    }

    /// `calendar.update` (new content) and `calendar.set-status`.
    mutating func changeCalendarEntry() async throws -> CatalogCommandResult {
        guard let id = command.entityId else { return missing("entityId", "entityId is required") }
        guard let stored = try await transaction.calendarEntry(id), !stored.isDeleted else { return missing("entityId", "calendar entry \(id) does not exist") }
        if let conflict = calendarConflict(stored.state) { return conflict }
        var entry = stored.state
        if command.action == .setCalendarEntryStatus {
            guard let status = command.status, status != .archived else { return missing("status", "status must be published or draft") }
            entry.status = status
        } else {
            guard var content = command.calendarEntry else { return missing("calendarEntry", "calendar entry content is required") }
            let errors = try await validate(&content)
            guard errors.isEmpty else { return rejected(errors) }
            entry.content = content
        }
        entry.version += 1
        entry.updatedAt = now
        return try await commit(entry, before: stored.state)
    }

    mutating func deleteCalendarEntry() async throws -> CatalogCommandResult {
        guard let id = command.entityId else { return missing("entityId", "entityId is required") }
        guard let stored = try await transaction.calendarEntry(id), !stored.isDeleted else { return missing("entityId", "calendar entry \(id) does not exist") }
        if let conflict = calendarConflict(stored.state) { return conflict }
        var entry = stored.state
        entry.version += 1
        entry.updatedAt = now
        try await transaction.saveCalendarEntry(entry, deleted: true)
        try publish(CalendarEntryEvent(kind: .deleted, entityId: id, version: entry.version))
        return try await applied(id, version: entry.version, before: stored.state, after: nil as CalendarEntryState?)
    }

    private func calendarConflict(_ current: CalendarEntryState) -> CatalogCommandResult? {
        guard var conflict = conflict(current: current.version) else { return nil }
        conflict.calendarEntry = current
        return conflict
    }

    /// The schedule's rules, then the categories (paths of the tree, spelled as the tree spells them) and the place
    /// (a live POI).
    private func validate(_ content: inout CalendarEntryContent) async throws -> [FieldError] {
        content.title = content.title.trimmingCharacters(in: .whitespacesAndNewlines)
        content.categories.removeAll { CommandValidation.isBlank($0) }
        var errors = CalendarSchedule.problems(content)
        var known: [String] = []
        for category in content.categories {
            if let path = try await transaction.category(path: category)?.path {
                if !known.contains(path) { known.append(path) }
            } else {
                errors.append(FieldError(field: "categories",
                                         message: "Category must be one of the category tree's paths, e.g. Shop/Fashion; \"\(category)\" is not one"))
            }
        }
        content.categories = known
        if let poi = content.placePoiId, try await transaction.poi(poi).map({ !$0.isDeleted }) != true {
            errors.append(FieldError(field: "placePoiId", message: "Place must be an existing point of interest"))
        }
        return errors
    }

    mutating func commit(_ entry: CalendarEntryState, before: CalendarEntryState?) async throws -> CatalogCommandResult {
        try await transaction.saveCalendarEntry(entry, deleted: false)
        try publish(CalendarEntryEvent.changed(entry))
        var result = try await applied(entry.id, version: entry.version, before: before, after: entry)
        result.calendarEntry = entry
        return result
    }

    mutating func publish(_ event: CalendarEntryEvent) throws {
        outbox.append(OutboxEntry(topic: topics.topic(Topic.catalogEvents), key: event.entityId.uuidString.lowercased(),
                                  partition: nil, payload: try envelope(type: event.kind.rawValue, event), requestId: requestId))
    }
}

extension CalendarEntryState: AuditedState {
    func auditText() throws -> String { try jsonText(self) }
}
