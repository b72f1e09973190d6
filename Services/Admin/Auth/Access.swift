import Foundation
import Hummingbird
import Shared

/// Errors a page answers with; AdminErrorMiddleware renders them as HTML pages.
enum AdminError: Error {
    /// No session: GETs go to the log-in page, other requests get 401.
    case notSignedIn
    /// Signed in, but the role (or tour assignment) does not allow this.
    case forbidden(String)
    case notFound(String)
    case badRequest(String)
    /// Another service did not answer what this page needs (503).
    case unavailable(String)
    /// A form without its CSRF token, or with another session's.
    case csrf
}

/// Who may do what. Every route asks here, on the server, whatever the pages happen to show.
struct Access: Sendable {
    let user: AdminUser
    /// The tours the user is an editor of (empty for owners and viewers, who need none).
    let assignedTours: Set<UUID>

    var isOwner: Bool { user.role == .owner }

    /// Owners only.
    func requireOwner(_ what: String) throws {
        guard isOwner else { throw AdminError.forbidden("Only an owner can \(what).") }
    }

    /// Owners and editors: the content pages.
    func requireContentRole() throws {
        guard user.role != .viewer else {
            throw AdminError.forbidden("Your role (viewer) can read reports but not change or browse content.")
        }
    }

    func canEdit(tour id: UUID) -> Bool { isOwner || (user.role == .editor && assignedTours.contains(id)) }

    func requireEdit(tour id: UUID) throws {
        try requireContentRole()
        guard canEdit(tour: id) else { throw AdminError.forbidden("You are not an editor of this tour; an owner can assign you to it.") }
    }

    /// An editor may edit a POI that is a stop of one of their tours.
    func canEdit(poi id: UUID, in content: AdminCatalogProjection.Content) -> Bool {
        isOwner || content.tours(stoppingAt: id).contains { canEdit(tour: $0.id) }
    }

    func requireEdit(poi id: UUID, in content: AdminCatalogProjection.Content) throws {
        try requireContentRole()
        guard canEdit(poi: id, in: content) else {
            throw AdminError.forbidden("You are not an editor of any tour that stops at this POI.")
        }
    }

    /// Adding an existing POI to a tour: owners any; an editor only a POI that one of their tours already stops at and
    /// that no one else's tour does. A POI in no tour (a place of its own, published or not) is not theirs to take: once
    /// a stop of their tour, they could edit and delete it.
    func canAttach(poi id: UUID, in content: AdminCatalogProjection.Content) -> Bool {
        if isOwner { return true }
        let tours = content.tours(stoppingAt: id)
        return user.role == .editor && !tours.isEmpty && tours.allSatisfy { canEdit(tour: $0.id) }
    }

    /// Deleting a POI takes it out of every tour, so an editor needs to be an editor of all of them.
    func canDelete(poi id: UUID, in content: AdminCatalogProjection.Content) -> Bool {
        if isOwner { return true }
        let tours = content.tours(stoppingAt: id)
        return user.role == .editor && !tours.isEmpty && tours.allSatisfy { canEdit(tour: $0.id) }
    }
}

extension AdminRequestContext {
    /// The signed-in user's access, loading an editor's tour assignments.
    func access(_ editors: any TourEditorRepository) async throws -> Access {
        let user = try requireUser()
        let tours = user.role == .editor ? try await editors.tours(editedBy: user.id) : []
        return Access(user: user, assignedTours: tours)
    }
}

extension AdminRequestContext {
    /// A path parameter that must be a UUID; a 404 page otherwise.
    func id(_ name: String) throws -> UUID {
        guard let text = parameters.get(name), let id = UUID(uuidString: text) else { throw AdminError.notFound("No such page.") }
        return id
    }
}
