import Foundation
import Shared

/// Log in, the start page, account, users and categories.
enum AdminPages {
    static func login(email: String, next: String, error: String?, csrf: String) -> HTML {
        let problem: HTML = error.map { "<div class=\"notice error\" role=\"alert\"><p>\($0)</p></div>" } ?? .empty
        return """
            <h1>Log In</h1>
            <p>iTour content administration.</p>
            \(problem)
            \(Forms.post("/login", csrf: csrf, class: "login",
                         Forms.hidden("next", next)
                            + Forms.text("Email", name: "email", value: email, type: "email", required: true, attributes: " autocomplete=\"username\"")
                            + Forms.text("Password", name: "password", value: "", type: "password", required: true,
                                         attributes: " autocomplete=\"current-password\"")
                            + "<div class=\"actions\">\(Forms.submit("Log In"))</div>"))
            """
    }

    static func home(user: AdminUser) -> HTML {
        """
        <h1>Welcome</h1>
        <p>You are signed in as \(user.email), a \(user.role.title.lowercased()).</p>
        <p>Your role can read the <a href="/reports">Reports</a>.</p>
        """
    }

    static func account(user: AdminUser, errors: [String: String], csrf: String) -> HTML {
        """
        <h1>Account</h1>
        <p>\(user.email) · \(user.role.title)</p>
        <h2>Change password</h2>
        \(Forms.errorSummary(errors, fields: ["current", "password", "repeat"]))
        \(Forms.post("/account/password", csrf: csrf,
                     Forms.text("Current password", name: "current", value: "", error: errors["current"], type: "password", required: true,
                                attributes: " autocomplete=\"current-password\"")
                        + Forms.text("New password", name: "password", value: "", error: errors["password"], type: "password", required: true,
                                     hint: "At least \(PasswordHasher.minimumLength) characters.", attributes: " autocomplete=\"new-password\"")
                        + Forms.text("Repeat the new password", name: "repeat", value: "", error: errors["repeat"], type: "password", required: true,
                                     attributes: " autocomplete=\"new-password\"")
                        + "<div class=\"actions\">\(Forms.submit("Save"))</div>"))
        """
    }

    // MARK: users

    struct NewUserForm {
        var email = ""
        var role = Role.editor.rawValue
    }

    static func users(_ users: [AdminUser], me: AdminUser, tourCounts: [UUID: Int], form: NewUserForm, errors: [String: String],
                      csrf: String) -> HTML {
        let roles = Role.allCases.map { ($0.rawValue, $0.title) }
        let rows: [HTML] = users.map { user in
            let id = user.id.uuidString.lowercased()
            let tours: HTML = user.role == .editor ? "\(counted(tourCounts[user.id] ?? 0, "tour"))" : .empty
            let isMe = user.id == me.id
            let roleForm: HTML = isMe ? "\(user.role.title) (you)" : Forms.post("/users/\(id)/role", csrf: csrf, class: "inline",
                Forms.select("Role of \(user.email)", name: "role", options: roles, selected: user.role.rawValue, id: "role-\(id)")
                    + Forms.submit("Save", class: ""))
            let passwordForm = Forms.post("/users/\(id)/password", csrf: csrf, class: "inline",
                Forms.text("New password for \(user.email)", name: "password", value: "", type: "password", id: "password-\(id)",
                           attributes: " autocomplete=\"new-password\"") + Forms.submit("Save", class: ""))
            let delete: HTML = isMe ? .empty : "<a href=\"/users/\(id)/delete\">Delete</a>"
            return "<tr><td>\(user.email)</td><td>\(roleForm)</td><td>\(tours)</td><td>\(passwordForm)</td><td>\(delete)</td></tr>"
        }
        return """
            <h1>Users</h1>
            <p>Owners manage users and everything else; editors edit the tours they are assigned to (on each tour's page);
            viewers read reports.</p>
            <table><thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Assigned</th><th scope="col">Password</th>
            <th scope="col"><span class="visually-hidden">Delete</span></th></tr></thead><tbody>\(rows)</tbody></table>
            <h2>Add User</h2>
            \(Forms.errorSummary(errors, fields: ["email", "role", "password"]))
            \(Forms.post("/users", csrf: csrf,
                         Forms.text("Email", name: "email", value: form.email, error: errors["email"], type: "email", required: true)
                            + Forms.select("Role", name: "role", options: roles, selected: form.role, error: errors["role"])
                            + Forms.text("Password", name: "password", value: "", error: errors["password"], type: "password", required: true,
                                         hint: "At least \(PasswordHasher.minimumLength) characters; tell it to the user, who can change it under Account.",
                                         attributes: " autocomplete=\"new-password\"")
                            + "<div class=\"actions\">\(Forms.submit("Save"))</div>"))
            """
    }

    // MARK: categories

    /// `usage`: how many POIs are in or under each path. Each row renames in place, its name in every offered language
    /// beside it; `translations` are the add form's `name@es` values.
    static func categories(_ categories: [CategoryState], usage: [String: Int], name: String, translations: [String: String], parent: String,
                           errors: [String: String], problem: String?, csrf: String, languages: SiteLanguages) -> HTML {
        let translated = !languages.translated.isEmpty
        let rows: [HTML] = categories.map { category in
            let id = category.id.uuidString.lowercased()
            let depth = category.path.filter { $0 == "/" }.count
            let indent = String(repeating: "— ", count: depth)
            let names = languages.translated.reduce(HTML.empty) { html, language in
                html + Forms.text("\(TranslationFields.name(of: language)) name for \(category.path)", name: TranslationFields.formName("name", language),
                                  value: category.translated(in: language)?["name"] ?? "", id: "rename-\(id)-\(language)",
                                  attributes: " lang=\"\(language)\"")
            }
            let rename = Forms.post("/categories/\(id)/rename", csrf: csrf, class: "inline",
                Forms.hidden("version", String(category.version))
                    + Forms.text("New name for \(category.path)", name: "name", value: category.name, id: "rename-\(id)")
                    + names
                    + Forms.submit("Save", class: ""))
            return """
                <tr><td>\(indent)\(category.name)</td><td>\(category.path)</td><td>\(usage[category.path] ?? 0)</td>\(TranslationFields.missingCell(category, languages: languages))<td>\(rename)</td>
                <td><a href="/categories/\(id)/delete">Delete</a></td></tr>
                """
        }
        let parents = [("", "(top level)")] + categories.map { ($0.id.uuidString.lowercased(), $0.path) }
        let newNames = languages.translated.reduce(HTML.empty) { html, language in
            let field = TranslationFields.formName("name", language)
            return html + Forms.text("Name (\(language))", name: field, value: translations[field] ?? "",
                                     error: errors["translations.\(language).name"], hint: "Empty: phones asking for \(language) get the name above.",
                                     attributes: " lang=\"\(language)\"")
        }
        return """
            <h1>Categories</h1>
            <p>The category tree POIs are filed under, e.g. Shop/Fashion. A count includes the POIs of its sub-categories. Renaming a category moves its POIs with it.\(translated ? " Phones see each name in their language; paths stay in \(TranslationFields.name(of: languages.site))." : "")</p>
            \(problem.map(CommonPages.unavailableBox))
            \(Forms.errorSummary(errors, fields: Set(["name", "parent"] + languages.translated.map { "translations.\($0).name" })))
            \(rows.isEmpty ? "<p class=\"muted\">No categories yet.</p>" : """
                <table><thead><tr><th scope="col">Category</th><th scope="col">Path</th><th scope="col">POIs</th>\(TranslationFields.missingHeader(languages))<th scope="col">Rename</th>
                <th scope="col"><span class="visually-hidden">Delete</span></th></tr></thead><tbody>\(rows)</tbody></table>
                """ as HTML)
            <h2>Add Category</h2>
            \(Forms.post("/categories", csrf: csrf,
                         Forms.text("Name", name: "name", value: name, error: errors["name"], required: true)
                            + newNames
                            + Forms.select("Parent", name: "parent", options: parents, selected: parent, error: errors["parent"])
                            + "<div class=\"actions\">\(Forms.submit("Save"))</div>"))
            """
    }
}
