import Foundation
import Hummingbird
import Shared

/// The category tree (owners): create, rename (its name in each offered language too), delete, each a catalog command.
struct CategoriesController {
    let projection: AdminCatalogProjection
    let writer: any CatalogWriter
    let editors: any TourEditorRepository
    let languages: SiteLanguages

    func register(on router: RouterGroup<AdminRequestContext>) {
        router.get("/categories", use: list)
        router.post("/categories", use: create)
        router.post("/categories/:id/rename", use: rename)
        router.get("/categories/:id/delete", use: confirmDelete)
        router.post("/categories/:id/delete", use: delete)
    }

    func page(context: AdminRequestContext, name: String = "", translations: [String: String] = [:], parent: String = "", errors: [String: String] = [:], problem: String? = nil,
              notice: Notice? = nil, status: HTTPResponse.Status = .ok) -> Response {
        let content = projection.content
        var usage: [String: Int] = [:]
        // A POI counts once for each category it is in or under, however many of its categories are there.
        for poi in content.pois.values {
            for path in CategoryState.pathsWithAncestors(poi.content.categories) { usage[path, default: 0] += 1 }
        }
        return AdminPage(title: "Categories", context: context, notice: notice,
                         body: AdminPages.categories(content.sortedCategories, usage: usage, name: name, translations: translations, parent: parent,
                                                     errors: errors, problem: problem, csrf: context.csrfToken, languages: languages),
                         status: status).response()
    }

    @Sendable func list(_ request: Request, context: AdminRequestContext) async throws -> Response {
        try await context.access(editors).requireOwner("manage categories")
        return page(context: context, notice: Notice.from(request))
    }

    /// Runs a category command; back to the list with a notice, or the list with the errors.
    /// `renaming`: a row's rename, whose errors the page names with the row's path (the field beside them is the add form's).
    func run(_ command: CatalogCommand, context: AdminRequestContext, name: String = "", translations: [String: String] = [:],
             parent: String = "", renaming: CategoryState? = nil) async throws -> Response {
        let result: CatalogCommandResult
        do {
            result = try await writer.execute(command, for: context)
        } catch {
            return page(context: context, name: name, translations: translations, parent: parent, problem: error.description,
                        status: .serviceUnavailable)
        }
        switch result.outcome {
        case .applied:
            return .redirect(to: "/categories?notice=\(Notice.key("saved", for: result))")
        case .rejected:
            if let renaming {
                let messages = result.errors.map(\.message).joined(separator: "; ")
                return page(context: context, errors: ["general": "\(renaming.path) was not renamed: \(messages.isEmpty ? result.message ?? "refused" : messages)"],
                            status: .unprocessableContent)
            }
            var errors = fieldErrors(result.errors)
            if let message = errors.removeValue(forKey: "entityId") { errors["general"] = message }
            if let message = errors.removeValue(forKey: "parentId") { errors["parent"] = message }
            return page(context: context, name: name, translations: translations, parent: parent, errors: errors, status: .unprocessableContent)
        case .conflict:
            return page(context: context, notice: .warning("Not saved: someone else changed that category meanwhile. The list shows the newer names."),
                        status: .conflict)
        }
    }

    @Sendable func create(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let access = try await context.access(editors)
        try access.requireOwner("manage categories")
        let name = context.form["name"]
        let parent = context.form["parent"]
        let names = TranslationFields.values(context.form, fields: ["name"])
        let command = CatalogCommand(action: .createCategory, actor: access.user.email, entityId: UUID.random(),
                                     category: CategoryContent(name: name, parentId: UUID(uuidString: parent),
                                                               translations: TranslationFields.translations(names, over: nil)))
        return try await run(command, context: context, name: name, translations: names, parent: parent)
    }

    @Sendable func rename(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let access = try await context.access(editors)
        try access.requireOwner("manage categories")
        guard let category = projection.category(try context.id("id")) else { throw AdminError.notFound("There is no such category.") }
        let command = CatalogCommand(action: .renameCategory, actor: access.user.email, entityId: category.id,
                                     expectedVersion: context.form.int("version") ?? category.version,
                                     category: CategoryContent(name: context.form["name"], translations: TranslationFields.translations(
                                        TranslationFields.values(context.form, fields: ["name"]), over: category.translations)))
        return try await run(command, context: context, renaming: category)
    }

    @Sendable func confirmDelete(_ request: Request, context: AdminRequestContext) async throws -> Response {
        try await context.access(editors).requireOwner("manage categories")
        guard let category = projection.category(try context.id("id")) else { throw AdminError.notFound("There is no such category.") }
        return AdminPage(title: "Delete category", context: context, breadcrumbs: [("Categories", "/categories"), ("Delete", nil)],
                         body: CommonPages.confirmDelete(what: "category", detail: "<p>The category <strong>\(category.path)</strong> will be deleted.</p>",
                                                         action: "/categories/\(category.id.uuidString.lowercased())/delete", cancel: "/categories",
                                                         version: category.version, csrf: context.csrfToken)).response()
    }

    @Sendable func delete(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let access = try await context.access(editors)
        try access.requireOwner("manage categories")
        guard let category = projection.category(try context.id("id")) else { throw AdminError.notFound("There is no such category.") }
        let command = CatalogCommand(action: .deleteCategory, actor: access.user.email, entityId: category.id,
                                     expectedVersion: context.form.int("version") ?? category.version)
        return try await run(command, context: context)
    }
}
