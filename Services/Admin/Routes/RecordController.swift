import Foundation
import Hummingbird
import Shared

/// A kind of catalog record as the admin edits it (DESIGN.md, "Catalog records"): where its pages are, what they
/// are called, its form and its pages.
protocol AdminRecordKind {
    associatedtype Content: AdminHeldRecord
    associatedtype Form: AdminRecordForm where Form.Content == Content

    /// `/calendar`, `/people`.
    static var path: String { get }
    /// The list's title and breadcrumb: "Calendar", "People".
    static var section: String { get }
    /// What an owner may do here, for the refusal: "manage the calendar".
    static var task: String { get }
    /// "Create New Event", "Manage Event", "Delete Event".
    static var createTitle: String { get }
    static var manageTitle: String { get }
    static var deleteTitle: String { get }
    /// "There is no such event."
    static var notFound: String { get }
    /// Notice keys (Layout.swift) after publishing and unpublishing.
    static var publishedNotice: String { get }
    static var unpublishedNotice: String { get }

    /// An empty form, as the catalog now stands.
    static func newForm(_ catalog: AdminCatalogProjection.Content) -> Form
    /// The list, with a "Not translated" column when the site offers other languages.
    static func list(_ catalog: AdminCatalogProjection.Content, search: ListSearch, csrf: String, languages: SiteLanguages) -> HTML
    static func form(_ model: RecordFormModel<Self>) -> HTML
    static func confirmDelete(_ record: CatalogRecordState<Content>, csrf: String) -> HTML
}

/// A record's form as typed.
protocol AdminRecordForm {
    associatedtype Content: CatalogRecordContent
    init(_ record: CatalogRecordState<Content>)
    init(_ form: FormData)
    var version: Int? { get }
    /// The content to send, or the errors of fields that cannot even be sent.
    func content() -> Result<Content, FieldErrors>
    /// The content to send in place of `stored`: what the form does not show (a translation into a language no longer
    /// offered) is kept from it.
    func content(replacing stored: Content?) -> Result<Content, FieldErrors>
}

extension AdminRecordForm {
    func content(replacing _: Content?) -> Result<Content, FieldErrors> { content() }
}

/// What a record's form page shows.
struct RecordFormModel<Kind: AdminRecordKind> {
    var record: CatalogRecordState<Kind.Content>?
    var form: Kind.Form
    var errors: [String: String] = [:]
    var problem: String?
    var catalog: AdminCatalogProjection.Content
    var csrf: String
    /// `SITE_LANGUAGES`: what a translatable record's form translates into.
    var languages = SiteLanguages.english
}

/// A record's pages (owners): the list, create, manage, publish and delete, each a catalog command.
struct RecordController<Kind: AdminRecordKind> {
    let projection: AdminCatalogProjection
    let writer: any CatalogWriter
    let editors: any TourEditorRepository
    var languages = SiteLanguages.english

    func register(on router: RouterGroup<AdminRequestContext>) {
        router.get(RouterPath(Kind.path), use: list)
        router.get(RouterPath("\(Kind.path)/new"), use: newForm)
        router.post(RouterPath(Kind.path), use: create)
        router.get(RouterPath("\(Kind.path)/:id"), use: manage)
        router.post(RouterPath("\(Kind.path)/:id"), use: update)
        router.post(RouterPath("\(Kind.path)/:id/status"), use: setStatus)
        router.get(RouterPath("\(Kind.path)/:id/delete"), use: confirmDelete)
        router.post(RouterPath("\(Kind.path)/:id/delete"), use: delete)
    }

    private var breadcrumbs: [(String, String?)] { [(Kind.section, Kind.path)] }

    @Sendable func list(_ request: Request, context: AdminRequestContext) async throws -> Response {
        try await context.access(editors).requireOwner(Kind.task)
        return AdminPage(title: Kind.section, context: context, notice: Notice.from(request),
                         body: Kind.list(projection.content, search: ListSearch(request), csrf: context.csrfToken, languages: languages)).response()
    }

    @Sendable func newForm(_ request: Request, context: AdminRequestContext) async throws -> Response {
        try await context.access(editors).requireOwner(Kind.task)
        return page(record: nil, form: Kind.newForm(projection.content), context: context)
    }

    @Sendable func manage(_ request: Request, context: AdminRequestContext) async throws -> Response {
        try await context.access(editors).requireOwner(Kind.task)
        let record = try record(context)
        return page(record: record, form: Kind.Form(record), context: context, notice: Notice.from(request))
    }

    func page(record: CatalogRecordState<Kind.Content>?, form: Kind.Form, context: AdminRequestContext, errors: [String: String] = [:],
              problem: String? = nil, notice: Notice? = nil, status: HTTPResponse.Status = .ok) -> Response {
        let model = RecordFormModel<Kind>(record: record, form: form, errors: errors, problem: problem, catalog: projection.content, csrf: context.csrfToken,
                                          languages: languages)
        let title = record == nil ? Kind.createTitle : Kind.manageTitle
        return AdminPage(title: title, context: context, breadcrumbs: breadcrumbs + [(title, nil)], notice: notice,
                         body: Kind.form(model), status: status).response()
    }

    private func record(_ context: AdminRequestContext) throws -> CatalogRecordState<Kind.Content> {
        guard let record = projection.content[keyPath: Kind.Content.held][try context.id("id")] else { throw AdminError.notFound(Kind.notFound) }
        return record
    }

    @Sendable func create(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let access = try await context.access(editors)
        try access.requireOwner(Kind.task)
        let form = Kind.Form(context.form)
        switch form.content() {
        case .failure(let errors):
            return page(record: nil, form: form, context: context, errors: errors.byField, status: .unprocessableContent)
        case .success(let content):
            var command = CatalogCommand(action: .record(Kind.Content.self, .create), actor: access.user.email, entityId: UUID.random())
            command[keyPath: Kind.Content.commandContent] = content
            return try await run(command, record: nil, form: form, context: context, saved: "created")
        }
    }

    @Sendable func update(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let access = try await context.access(editors)
        try access.requireOwner(Kind.task)
        let record = try record(context)
        let form = Kind.Form(context.form)
        switch form.content(replacing: record.content) {
        case .failure(let errors):
            return page(record: record, form: form, context: context, errors: errors.byField, status: .unprocessableContent)
        case .success(let content):
            var command = CatalogCommand(action: .record(Kind.Content.self, .update), actor: access.user.email, entityId: record.id,
                                         expectedVersion: form.version ?? record.version)
            command[keyPath: Kind.Content.commandContent] = content
            return try await run(command, record: record, form: form, context: context, saved: "saved")
        }
    }

    @Sendable func setStatus(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let access = try await context.access(editors)
        try access.requireOwner(Kind.task)
        let record = try record(context)
        guard let status = ContentStatus(rawValue: context.form["status"]), status != .archived else {
            throw AdminError.badRequest("Choose Publish or Unpublish.")
        }
        let command = CatalogCommand(action: .record(Kind.Content.self, .setStatus), actor: access.user.email, entityId: record.id,
                                     expectedVersion: context.form.int("version") ?? record.version, status: status)
        return try await run(command, record: record, form: Kind.Form(record), context: context,
                             saved: status == .published ? Kind.publishedNotice : Kind.unpublishedNotice)
    }

    @Sendable func confirmDelete(_ request: Request, context: AdminRequestContext) async throws -> Response {
        try await context.access(editors).requireOwner(Kind.task)
        let record = try record(context)
        return AdminPage(title: Kind.deleteTitle, context: context, breadcrumbs: breadcrumbs + [(Kind.deleteTitle, nil)],
                         body: Kind.confirmDelete(record, csrf: context.csrfToken)).response()
    }

    @Sendable func delete(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let access = try await context.access(editors)
        try access.requireOwner(Kind.task)
        let record = try record(context)
        let command = CatalogCommand(action: .record(Kind.Content.self, .delete), actor: access.user.email, entityId: record.id,
                                     expectedVersion: context.form.int("version") ?? record.version)
        return try await run(command, record: record, form: Kind.Form(record), context: context, saved: "deleted")
    }

    /// Sends a command: on to the record (or the list, after a delete) with a notice, or the form again with the
    /// errors or the newer version.
    private func run(_ command: CatalogCommand, record: CatalogRecordState<Kind.Content>?, form: Kind.Form, context: AdminRequestContext,
                     saved: String) async throws -> Response {
        let result: CatalogCommandResult
        do {
            result = try await writer.execute(command, for: context)
        } catch {
            return page(record: record, form: form, context: context, problem: error.description, status: .serviceUnavailable)
        }
        switch result.outcome {
        case .applied:
            let notice = Notice.key(saved, for: result)
            if command.action == .record(Kind.Content.self, .delete) { return .redirect(to: "\(Kind.path)?notice=\(notice)") }
            let id = (result.entityId ?? record?.id ?? UUID.random()).uuidString.lowercased()
            return .redirect(to: "\(Kind.path)/\(id)?notice=\(notice)")
        case .rejected:
            var errors = fieldErrors(result.errors)
            if let message = errors.removeValue(forKey: "entityId") { errors["general"] = message }
            return page(record: record, form: form, context: context, errors: errors, status: .unprocessableContent)
        case .conflict:
            let current = result[keyPath: Kind.Content.resultState] ?? record
            return page(record: current, form: current.map(Kind.Form.init) ?? form, context: context,
                        notice: .warning("Not saved: someone else changed this meanwhile. The form shows the newer version; make your change again."),
                        status: .conflict)
        }
    }
}
