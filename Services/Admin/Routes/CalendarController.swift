import Foundation
import Hummingbird
import Shared

/// The calendar (owners): Create New Event, Manage Event, publish, delete, each a catalog command (DESIGN.md, "Calendar").
struct CalendarController {
    let projection: AdminCatalogProjection
    let writer: any CatalogWriter
    let editors: any TourEditorRepository

    func register(on router: RouterGroup<AdminRequestContext>) {
        router.get("/calendar", use: list)
        router.get("/calendar/new", use: newForm)
        router.post("/calendar", use: create)
        router.get("/calendar/:id", use: manage)
        router.post("/calendar/:id", use: update)
        router.post("/calendar/:id/status", use: setStatus)
        router.get("/calendar/:id/delete", use: confirmDelete)
        router.post("/calendar/:id/delete", use: delete)
    }

    private static let breadcrumbs: [(String, String?)] = [("Calendar", "/calendar")]

    @Sendable func list(_ request: Request, context: AdminRequestContext) async throws -> Response {
        try await context.access(editors).requireOwner("manage the calendar")
        return AdminPage(title: "Calendar", context: context, notice: Notice.from(request),
                         body: CalendarPages.list(projection.content.sortedCalendar, csrf: context.csrfToken)).response()
    }

    @Sendable func newForm(_ request: Request, context: AdminRequestContext) async throws -> Response {
        try await context.access(editors).requireOwner("manage the calendar")
        // The zone of the entry edited last: a site's events are mostly in one.
        let zone = projection.content.calendar.values.max { $0.updatedAt < $1.updatedAt }?.content.timeZone ?? "UTC"
        return page(entry: nil, form: CalendarForm(timeZone: zone), context: context)
    }

    @Sendable func manage(_ request: Request, context: AdminRequestContext) async throws -> Response {
        try await context.access(editors).requireOwner("manage the calendar")
        let entry = try entry(context)
        return page(entry: entry, form: CalendarForm(entry), context: context, notice: Notice.from(request))
    }

    func page(entry: CalendarEntryState?, form: CalendarForm, context: AdminRequestContext, errors: [String: String] = [:], problem: String? = nil,
              notice: Notice? = nil, status: HTTPResponse.Status = .ok) -> Response {
        let content = projection.content
        let upcoming = entry.flatMap { CalendarSchedule($0.content) }?.occurrences(overlapping: Date(), .distantFuture, limit: 5)
            .map { $0.localStart.replacingOccurrences(of: "T", with: " ") } ?? []
        let model = CalendarPages.FormModel(entry: entry, form: form, errors: errors, problem: problem, pois: content.sortedPois,
                                            categories: content.sortedCategories, upcoming: upcoming, csrf: context.csrfToken)
        return AdminPage(title: entry == nil ? "Create New Event" : "Manage Event", context: context,
                         breadcrumbs: Self.breadcrumbs + [(entry == nil ? "Create New Event" : "Manage Event", nil)], notice: notice,
                         body: CalendarPages.form(model), status: status).response()
    }

    private func entry(_ context: AdminRequestContext) throws -> CalendarEntryState {
        guard let entry = projection.calendarEntry(try context.id("id")) else { throw AdminError.notFound("There is no such event.") }
        return entry
    }

    @Sendable func create(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let access = try await context.access(editors)
        try access.requireOwner("manage the calendar")
        let form = CalendarForm(context.form)
        switch form.content() {
        case .failure(let errors):
            return page(entry: nil, form: form, context: context, errors: errors.byField, status: .unprocessableContent)
        case .success(let content):
            let command = CatalogCommand(action: .createCalendarEntry, actor: access.user.email, entityId: UUID(), calendarEntry: content)
            return try await run(command, entry: nil, form: form, context: context, saved: "created")
        }
    }

    @Sendable func update(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let access = try await context.access(editors)
        try access.requireOwner("manage the calendar")
        let entry = try entry(context)
        let form = CalendarForm(context.form)
        switch form.content() {
        case .failure(let errors):
            return page(entry: entry, form: form, context: context, errors: errors.byField, status: .unprocessableContent)
        case .success(let content):
            let command = CatalogCommand(action: .updateCalendarEntry, actor: access.user.email, entityId: entry.id,
                                         expectedVersion: form.version ?? entry.version, calendarEntry: content)
            return try await run(command, entry: entry, form: form, context: context, saved: "saved")
        }
    }

    @Sendable func setStatus(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let access = try await context.access(editors)
        try access.requireOwner("manage the calendar")
        let entry = try entry(context)
        guard let status = ContentStatus(rawValue: context.form["status"]), status != .archived else {
            throw AdminError.badRequest("Choose Publish or Unpublish.")
        }
        let command = CatalogCommand(action: .setCalendarEntryStatus, actor: access.user.email, entityId: entry.id,
                                     expectedVersion: context.form.int("version") ?? entry.version, status: status)
        return try await run(command, entry: entry, form: CalendarForm(entry), context: context,
                             saved: status == .published ? "eventpublished" : "eventunpublished")
    }

    @Sendable func confirmDelete(_ request: Request, context: AdminRequestContext) async throws -> Response {
        try await context.access(editors).requireOwner("manage the calendar")
        let entry = try entry(context)
        return AdminPage(title: "Delete Event", context: context, breadcrumbs: Self.breadcrumbs + [("Delete Event", nil)],
                         body: CalendarPages.confirmDelete(entry, csrf: context.csrfToken)).response()
    }

    @Sendable func delete(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let access = try await context.access(editors)
        try access.requireOwner("manage the calendar")
        let entry = try entry(context)
        let command = CatalogCommand(action: .deleteCalendarEntry, actor: access.user.email, entityId: entry.id,
                                     expectedVersion: context.form.int("version") ?? entry.version)
        return try await run(command, entry: entry, form: CalendarForm(entry), context: context, saved: "deleted")
    }

    /// Sends a calendar command: on to the event (or the list, after a delete) with a notice, or the form again with
    /// the errors or the newer version.
    private func run(_ command: CatalogCommand, entry: CalendarEntryState?, form: CalendarForm, context: AdminRequestContext,
                     saved: String) async throws -> Response {
        let result: CatalogCommandResult
        do {
            result = try await writer.execute(command, for: context)
        } catch {
            return page(entry: entry, form: form, context: context, problem: error.description, status: .serviceUnavailable)
        }
        switch result.outcome {
        case .applied:
            let notice = Notice.key(saved, for: result)
            if command.action == .deleteCalendarEntry { return .redirect(to: "/calendar?notice=\(notice)") }
            let id = (result.entityId ?? entry?.id ?? UUID()).uuidString.lowercased()
            return .redirect(to: "/calendar/\(id)?notice=\(notice)")
        case .rejected:
            var errors = fieldErrors(result.errors)
            if let message = errors.removeValue(forKey: "entityId") { errors["general"] = message }
            return page(entry: entry, form: form, context: context, errors: errors, status: .unprocessableContent)
        case .conflict:
            let current = result.calendarEntry ?? entry
            return page(entry: current, form: current.map(CalendarForm.init) ?? form, context: context,
                        notice: .warning("Not saved: someone else changed this event meanwhile. The form shows the newer version; make your change again."),
                        status: .conflict)
        }
    }
}
