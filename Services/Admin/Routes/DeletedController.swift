import Foundation
import Hummingbird
import Shared

/// Undo of a delete (owners, who are the ones who delete): the tours and POIs deleted lately, and Restore, which is
/// catalog's revert of a deleted one to its last version (docs/ADMIN.md, `catalog.recently-deleted` and `tour.revert`).
struct DeletedController {
    let writer: any CatalogWriter
    let editors: any TourEditorRepository
    let clock: SiteClock

    func register(on router: RouterGroup<AdminRequestContext>) {
        router.get("/deleted", use: list)
        router.post("/deleted/tours/:id", use: restoreTour)
        router.post("/deleted/pois/:id", use: restorePoi)
    }

    @Sendable func list(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let access = try await context.access(editors)
        try access.requireOwner("restore deleted tours and POIs")
        let entries: [CatalogHistoryEntry]
        do {
            entries = try await writer.execute(CatalogCommand(action: .recentlyDeleted, actor: access.user.email),
                                               requestId: RequestIdMiddleware.id(of: context)).history ?? []
        } catch {
            return AdminPage(title: "Recently deleted", context: context, breadcrumbs: [("Recently deleted", nil)], notice: .error(error.description),
                             body: "<h1>Recently deleted</h1>", status: .serviceUnavailable).response()
        }
        return AdminPage(title: "Recently deleted", context: context, breadcrumbs: [("Recently deleted", nil)], notice: Notice.from(request),
                         body: DeletedPages.page(entries, days: CatalogRetention.restorableDays, clock: clock, csrf: context.csrfToken)).response()
    }

    @Sendable func restoreTour(_ request: Request, context: AdminRequestContext) async throws -> Response {
        try await restore(.revertTour, context: context) { ToursController.path($0) }
    }

    @Sendable func restorePoi(_ request: Request, context: AdminRequestContext) async throws -> Response {
        try await restore(.revertPoi, context: context) { PoisController.path($0) }
    }

    private func restore(_ action: CatalogAction, context: AdminRequestContext, path: (UUID) -> String) async throws -> Response {
        let access = try await context.access(editors)
        try access.requireOwner("restore deleted tours and POIs")
        let id = try context.id("id")
        guard let version = context.form.int("revertTo"), let tombstone = context.form.int("version") else {
            throw AdminError.badRequest("Choose what to restore from the list.")
        }
        let result: CatalogCommandResult
        do {
            result = try await writer.execute(CatalogCommand(action: action, actor: access.user.email, entityId: id, expectedVersion: tombstone,
                                                             revertToVersion: version),
                                              for: context)
        } catch {
            throw AdminError.unavailable(error.description)
        }
        // Restored already (by someone else, or a second press), and perhaps changed since: its page says how it is now.
        if result.outcome == .conflict { return .redirect(to: "\(path(id))?notice=restored-already") }
        guard result.outcome == .applied else {
            throw AdminError.badRequest(result.errors.first.map { "Not restored: \($0.message)" } ?? result.message ?? "Catalog refused to restore it.")
        }
        return .redirect(to: "\(path(id))?notice=restored")
    }
}
