import Foundation
import Hummingbird
import Shared

/// User management (owners): add users, change roles, reset passwords, delete. There is always an owner left.
struct UsersController {
    let users: any UserRepository
    let editors: any TourEditorRepository
    let hasher: PasswordHasher

    func register(on router: RouterGroup<AdminRequestContext>) {
        router.get("/users", use: list)
        router.post("/users", use: create)
        router.post("/users/:id/role", use: setRole)
        router.post("/users/:id/password", use: setPassword)
        router.get("/users/:id/delete", use: confirmDelete)
        router.post("/users/:id/delete", use: delete)
    }

    func page(context: AdminRequestContext, me: AdminUser, form: AdminPages.NewUserForm = .init(), errors: [String: String] = [:],
              notice: Notice? = nil, status: HTTPResponse.Status = .ok) async throws -> Response {
        let all = try await users.users()
        var counts: [UUID: Int] = [:]
        for user in all where user.role == .editor { counts[user.id] = try await editors.tours(editedBy: user.id).count }
        return AdminPage(title: "Users", context: context, notice: notice,
                         body: AdminPages.users(all, me: me, tourCounts: counts, form: form, errors: errors, csrf: context.csrfToken),
                         status: status).response()
    }

    func owner(_ context: AdminRequestContext) async throws -> AdminUser {
        let access = try await context.access(editors)
        try access.requireOwner("manage users")
        return access.user
    }

    func target(_ context: AdminRequestContext) async throws -> AdminUser {
        guard let user = try await users.user(id: try context.id("id")) else { throw AdminError.notFound("There is no such user.") }
        return user
    }

    @Sendable func list(_ request: Request, context: AdminRequestContext) async throws -> Response {
        try await page(context: context, me: try await owner(context), notice: Notice.from(request))
    }

    @Sendable func create(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let me = try await owner(context)
        let form = AdminPages.NewUserForm(email: context.form["email"].trimmingCharacters(in: .whitespaces).lowercased(), role: context.form["role"])
        var errors: [String: String] = [:]
        if !Self.isEmail(form.email) { errors["email"] = "Email must be an address like name@example.edu" }
        let role = Role(rawValue: form.role)
        if role == nil { errors["role"] = "Role must be owner, editor or viewer" }
        let password = context.form["password"]
        if password.count < PasswordHasher.minimumLength { errors["password"] = "Password must be at least \(PasswordHasher.minimumLength) characters" }
        if errors.isEmpty, let role {
            let created = try await users.create(AdminUser(id: UUID.random(), email: form.email, role: role), passwordHash: try await hasher.hash(password))
            if created { return .redirect(to: "/users?notice=user") }
            errors["email"] = "Email must be unique: \(form.email) already has an account"
        }
        return try await page(context: context, me: me, form: form, errors: errors, status: .unprocessableContent)
    }

    /// A plain address: no spaces, quotes or RFC 5322 specials (which no staff address needs).
    static func isEmail(_ text: String) -> Bool {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        let forbidden = Set("<>()[]\\,;:\"")
        return text.count <= 254 && parts.count == 2 && !parts[0].isEmpty && parts[1].contains(".") && !parts[1].hasPrefix(".")
            && !parts[1].hasSuffix(".") && !text.contains(where: { $0.isWhitespace || forbidden.contains($0) })
    }

    @Sendable func setRole(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let me = try await owner(context)
        let user = try await target(context)
        guard let role = Role(rawValue: context.form["role"]) else { throw AdminError.badRequest("Role must be owner, editor or viewer.") }
        if user.id == me.id && role != .owner {
            return try await page(context: context, me: me, notice: .error("You cannot take away your own owner role; another owner can."),
                                  status: .unprocessableContent)
        }
        try await users.setRole(role, of: user.id)
        return .redirect(to: "/users?notice=user")
    }

    @Sendable func setPassword(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let me = try await owner(context)
        let user = try await target(context)
        let password = context.form["password"]
        guard password.count >= PasswordHasher.minimumLength else {
            return try await page(context: context, me: me,
                                  notice: .error("Not saved: the password for \(user.email) must be at least \(PasswordHasher.minimumLength) characters."),
                                  status: .unprocessableContent)
        }
        try await users.setPasswordHash(try await hasher.hash(password), of: user.id)
        return .redirect(to: user.id == me.id ? "/login?notice=password" : "/users?notice=password")
    }

    @Sendable func confirmDelete(_ request: Request, context: AdminRequestContext) async throws -> Response {
        _ = try await owner(context)
        let user = try await target(context)
        return AdminPage(title: "Delete user", context: context, breadcrumbs: [("Users", "/users"), ("Delete", nil)],
                         body: CommonPages.confirmDelete(what: "user", detail: "<p>\(user.email) will no longer be able to log in.</p>",
                                                         action: "/users/\(user.id.uuidString.lowercased())/delete", cancel: "/users", version: nil,
                                                         csrf: context.csrfToken)).response()
    }

    @Sendable func delete(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let me = try await owner(context)
        let user = try await target(context)
        guard user.id != me.id else {
            return try await page(context: context, me: me, notice: .error("You cannot delete yourself; another owner can."), status: .unprocessableContent)
        }
        try await users.delete(id: user.id)
        return .redirect(to: "/users?notice=deleted")
    }
}
