import Foundation
import Hummingbird
import Shared

/// Log in, log out, the start page, the account page, the stylesheet and the script.
struct AuthController {
    let users: any UserRepository
    let sessions: any SessionRepository
    let throttle: LoginThrottle
    let hasher: PasswordHasher
    let sessionLifetime: Duration
    let secureCookies: Bool

    func register(on router: RouterGroup<AdminRequestContext>) {
        router.get("/assets/admin.css") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/css; charset=utf-8", .cacheControl: "public, max-age=3600"],
                     body: .init(byteBuffer: ByteBuffer(string: Stylesheet.css)))
        }
        router.get("/assets/admin.js") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/javascript; charset=utf-8", .cacheControl: "public, max-age=3600"],
                     body: .init(byteBuffer: ByteBuffer(string: AdminScript.javaScript)))
        }
        router.get("/") { _, context -> Response in
            let user = try context.requireUser()
            if user.role == .viewer {
                return AdminPage(title: "Welcome", context: context, body: AdminPages.home(user: user)).response()
            }
            return .redirect(to: "/tours")
        }
        router.get("/login") { request, context -> Response in
            if context.session != nil { return .redirect(to: "/") }
            let next = Self.safeNext(request.uri.queryParameters.get("next"))
            // Sent here from a page: say why, rather than show a login form out of nowhere.
            let why: Notice? = next == "/" ? nil : Notice(kind: .warning, text: "Please log in to see that page.")
            return AdminPage(title: "Log In", context: context, notice: Notice.from(request) ?? why,
                             body: AdminPages.login(email: "", next: next, error: nil, csrf: context.csrfToken)).response()
        }
        router.post("/login", use: login)
        router.post("/logout") { request, context -> Response in
            if let token = request.cookies[AdminCookie.session]?.value {
                try await sessions.deleteSession(tokenHash: SecureToken.hash(token))
            }
            var response = Response.redirect(to: "/login?notice=loggedout")
            response.setCookie(Cookie(name: AdminCookie.session, value: "", maxAge: 0, path: "/", secure: secureCookies, httpOnly: true, sameSite: .lax))
            return response
        }
        router.get("/account") { request, context -> Response in
            let user = try context.requireUser()
            return AdminPage(title: "Account", context: context, notice: Notice.from(request),
                             body: AdminPages.account(user: user, errors: [:], csrf: context.csrfToken)).response()
        }
        router.post("/account/password", use: changePassword)
        router.get("/help") { _, context -> Response in
            _ = try context.requireUser()
            return AdminPage(title: "Help", context: context, breadcrumbs: [("Help", nil)], body: HelpPages.page()).response()
        }
    }

    /// Only a plain path on this site: it starts with a single "/", holds no "//" anywhere, and only visible ASCII
    /// other than "\\" (no control characters, whitespace or backslashes, which browsers drop or read as "/" and
    /// so could turn into another origin). Anything else, or the log-in page itself, is "/".
    static func safeNext(_ next: String?) -> String {
        guard let next, next.hasPrefix("/"), !next.contains("//"), !next.hasPrefix("/login"),
              next.utf8.allSatisfy({ (0x21...0x7e).contains($0) && $0 != UInt8(ascii: "\\") }) else { return "/" }
        return next
    }

    /// A 429 page that says how long to wait, with `Retry-After`.
    static func tooMany(_ page: AdminPage, wait: Int) -> Response {
        var response = page.response()
        response.headers[.retryAfter] = String(wait)
        return response
    }

    @Sendable func login(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let email = context.form["email"].trimmingCharacters(in: .whitespaces).lowercased()
        let password = context.form["password"]
        let next = Self.safeNext(context.form["next"])
        func refuse(_ message: String, status: HTTPResponse.Status) -> AdminPage {
            AdminPage(title: "Log In", context: context, body: AdminPages.login(email: email, next: next, error: message, csrf: context.csrfToken),
                      status: status)
        }
        // Counted before the password is checked, so attempts sent at once cannot all pass a check made before any was counted.
        let attempt: LoginThrottle.Attempt
        switch try await throttle.begin(.logIn, account: email, address: context.clientAddress) {
        case .wait(let wait):
            return Self.tooMany(refuse("Too many failed log-ins. Try again in \(wait) seconds.", status: .tooManyRequests), wait: wait)
        case .check(let counted):
            attempt = counted
        }
        let found = try await users.credentials(email: email)
        let valid: Bool
        if let found {
            valid = try await hasher.verify(password, hash: found.passwordHash)
        } else {
            try await hasher.dummyVerify(password)
            valid = false
        }
        guard valid, let user = found?.user else {
            context.logger.notice("failed log-in", metadata: ["email": "\(email)", "address": "\(context.clientAddress)"])
            if let wait = attempt.waitIfWrong {
                return Self.tooMany(refuse("User and password combination is invalid. Too many failed log-ins: try again in \(wait) seconds.",
                                           status: .tooManyRequests), wait: wait)
            }
            return refuse("User and password combination is invalid.", status: .unauthorized).response()
        }
        try await throttle.succeeded(attempt)
        let token = SecureToken.make()
        let expires = Date().addingTimeInterval(TimeInterval(sessionLifetime.components.seconds))
        try await sessions.createSession(tokenHash: SecureToken.hash(token), userId: user.id, csrfToken: SecureToken.make(), expiresAt: expires)
        try? await sessions.deleteExpiredSessions(now: Date())
        try? await throttle.forgetQuiet()
        context.logger.info("logged in", metadata: ["user": "\(user.email)", "role": "\(user.role.rawValue)"])
        var response = Response.redirect(to: next)
        response.setCookie(Cookie(name: AdminCookie.session, value: token, maxAge: Int(sessionLifetime.components.seconds), path: "/",
                                  secure: secureCookies, httpOnly: true, sameSite: .lax))
        return response
    }

    @Sendable func changePassword(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let user = try context.requireUser()
        let form = context.form
        var errors: [String: String] = [:]
        func page(status: HTTPResponse.Status) -> AdminPage {
            AdminPage(title: "Account", context: context, body: AdminPages.account(user: user, errors: errors, csrf: context.csrfToken), status: status)
        }
        // Guessing the current password (with a stolen session, say) is throttled like log-ins.
        let attempt: LoginThrottle.Attempt
        switch try await throttle.begin(.passwordChange, account: user.email, address: context.clientAddress) {
        case .wait(let wait):
            errors["current"] = "Too many wrong passwords. Try again in \(wait) seconds."
            return Self.tooMany(page(status: .tooManyRequests), wait: wait)
        case .check(let counted):
            attempt = counted
        }
        if let found = try await users.credentials(email: user.email), try await hasher.verify(form["current"], hash: found.passwordHash) {
            try await throttle.succeeded(attempt)
            if form["password"].count < PasswordHasher.minimumLength {
                errors["password"] = "New password must be at least \(PasswordHasher.minimumLength) characters"
            } else if form["password"] != form["repeat"] {
                errors["repeat"] = "The two new passwords must be the same"
            }
        } else {
            context.logger.notice("wrong current password", metadata: ["user": "\(user.email)", "address": "\(context.clientAddress)"])
            if let wait = attempt.waitIfWrong {
                errors["current"] = "Current password is not right. Too many wrong passwords: try again in \(wait) seconds."
                return Self.tooMany(page(status: .tooManyRequests), wait: wait)
            }
            errors["current"] = "Current password is not right"
        }
        guard errors.isEmpty else { return page(status: .unprocessableContent).response() }
        // Setting the password ends every session of the user, this one included: log in again with the new one.
        try await users.setPasswordHash(try await hasher.hash(form["password"]), of: user.id)
        var response = Response.redirect(to: "/login?notice=password")
        response.setCookie(Cookie(name: AdminCookie.session, value: "", maxAge: 0, path: "/", secure: secureCookies, httpOnly: true, sameSite: .lax))
        return response
    }
}
