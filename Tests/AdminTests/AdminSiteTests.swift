import Foundation
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Shared
import Testing
import TestSupport
@testable import Admin

/// The admin site against the real Postgres (and catalog over the real broker): log-in, sessions, CSRF,
/// throttling, and the role of every route checked on the server.
@Suite("Admin site", .serialized, .stopsIfHung)
struct AdminSiteTests {
    @Test("log in: the wrong password is refused, the right one gives an HttpOnly SameSite=Lax session; log out ends it")
    func loginAndLogout() async throws {
        try await AdminHarness.run(withCatalog: false) { web, _ in
            let page = try await web.get("/tours")
            #expect(page.status == .seeOther)
            #expect(page.location == "/login?next=/tours")

            let wrong = try await web.login(AdminHarness.ownerEmail, "not the password")
            #expect(wrong.status == .unauthorized)
            #expect(wrong.contains("User and password combination is invalid."))
            #expect(wrong.contains(#"value="owner@example.edu""#), "the typed email is kept")
            #expect(web.cookie(AdminCookie.session) == nil)

            let right = try await web.submit("/login", ["email": "OWNER@example.edu", "password": AdminHarness.ownerPassword, "next": "/users"],
                                             from: "/login")
            #expect(right.status == .seeOther)
            #expect(right.location == "/users")
            let setCookie = try #require(right.headers[values: .setCookie].first { $0.hasPrefix("\(AdminCookie.session)=") })
            #expect(setCookie.contains("HttpOnly"))
            #expect(setCookie.contains("SameSite=Lax"))
            #expect(!setCookie.contains("Secure"), "not Secure unless ADMIN_COOKIE_SECURE is set")
            #expect(try await web.get("/users").contains("<h1>Users</h1>"))

            let session = try #require(web.cookie(AdminCookie.session))
            let out = try await web.submit("/logout", [:], from: "/users")
            #expect(out.location == "/login?notice=loggedout")
            // The old cookie, replayed, opens nothing: the session is gone from the database.
            let replay = web.fresh()
            _ = try await replay.get("/login")
            let stolen = try await replay.client.execute(uri: "/users", method: .get, headers: [.cookie: "\(AdminCookie.session)=\(session)"])
            #expect(stolen.status == .seeOther)
        }
    }

    @Test("a next= that leaves the site is ignored (no open redirect)")
    func safeNext() {
        #expect(AuthController.safeNext("/tours/1") == "/tours/1")
        for hostile in ["https://evil.example", "//evil.example", "/\\evil.example", "javascript:alert(1)", nil] {
            #expect(AuthController.safeNext(hostile) == "/")
        }
    }

    @Test("Secure cookies when configured")
    func secureCookie() async throws {
        try await AdminHarness.run(withCatalog: false, settings: ["ADMIN_COOKIE_SECURE": "1"]) { web, _ in
            let right = try await web.login()
            #expect(right.headers[values: .setCookie].contains { $0.hasPrefix("\(AdminCookie.session)=") && $0.contains("Secure") })
        }
    }

    @Test("repeated failed log-ins for an account are throttled with 429 and Retry-After; other accounts are not")
    func throttling() async throws {
        // A long first wait: a loaded machine may take longer than the default 10 s between the fifth guess and the check below.
        let settings = ["ADMIN_LOGIN_DELAY_SECONDS": "600", "ADMIN_LOGIN_MAX_DELAY_SECONDS": "900"]
        try await AdminHarness.run(withCatalog: false, settings: settings) { web, database in
            for attempt in 1...5 {
                let page = try await web.login(AdminHarness.ownerEmail, "guess \(attempt)")
                #expect(page.status == (attempt < 5 ? .unauthorized : .tooManyRequests))
            }
            // Locked: even the right password is not checked now.
            let locked = try await web.login()
            #expect(locked.status == .tooManyRequests)
            #expect(locked.contains("Too many failed log-ins. Try again in"))
            #expect(Int(locked.headers[.retryAfter] ?? "") ?? 0 > 0)
            // Another account from the same place is still fine.
            try await TestServices.withPostgres(database) { client in
                let repository = PostgresAdminRepository(client: client, logger: TestServices.logger)
                _ = try await repository.create(AdminUser(id: UUID(), email: "viewer@example.edu", role: .viewer),
                                                passwordHash: try await PasswordHasher(cost: 4).hash("viewer-password"))
            }
            #expect(try await web.fresh().login("viewer@example.edu", "viewer-password").status == .seeOther)
        }
    }

    @Test("the throttle's waits double after the limit, per account whatever the address, and reset after a quiet window")
    func throttlePolicy() async throws {
        let database = try await TestServices.freshDatabase()
        try await TestServices.withPostgres(database) { client in
            try await AdminMigrations.runner.run(on: client, logger: TestServices.logger)
            let throttle = LoginThrottle(repository: PostgresAdminRepository(client: client, logger: TestServices.logger), perAccount: 3,
                                         perAddress: 100, firstDelay: 30, maximumDelay: 60)
            let start = Date(timeIntervalSince1970: 1_800_000_000)
            func attempt(_ email: String, _ address: String, at seconds: TimeInterval, _ purpose: LoginThrottle.Purpose = .logIn) async throws -> String {
                switch try await throttle.begin(purpose, account: email, address: address, now: start.addingTimeInterval(seconds)) {
                case .check(let attempt): attempt.waitIfWrong.map { "check, then wait \($0)" } ?? "check"
                case .wait(let seconds): "wait \(seconds)"
                }
            }
            #expect(try await attempt("a@x.edu", "1.2.3.4", at: 0) == "check")
            #expect(try await attempt("a@x.edu", "1.2.3.4", at: 0) == "check")
            #expect(try await attempt("a@x.edu", "1.2.3.4", at: 0) == "check, then wait 30")
            #expect(try await attempt("A@X.edu", "9.9.9.9", at: 10) == "wait 20")
            #expect(try await attempt("a@x.edu", "1.2.3.4", at: 31) == "check, then wait 60")
            #expect(try await attempt("b@x.edu", "9.9.9.9", at: 31) == "check")
            // The password change is counted apart from log-ins.
            #expect(try await attempt("a@x.edu", "1.2.3.4", at: 40) == "wait 51")
            #expect(try await attempt("a@x.edu", "1.2.3.4", at: 40, .passwordChange) == "check")
            // Sixteen quiet minutes later the count starts again.
            #expect(try await attempt("a@x.edu", "1.2.3.4", at: 31 + 16 * 60) == "check")
        }
    }

    @Test("a form posted without its CSRF token, with another session's, or from another origin is refused with 403")
    func csrf() async throws {
        try await AdminHarness.run(withCatalog: false) { web, _ in
            #expect(try await web.login().status == .seeOther)
            let form = try await web.get("/users")
            let token = try #require(form.csrfToken)
            let fields = ["email": "new@example.edu", "role": "editor", "password": "long-enough-pw"]
            #expect(try await web.post("/users", fields, csrf: nil).status == .forbidden)
            let refused = try await web.post("/users", fields, csrf: String(repeating: "A", count: token.count))
            #expect(refused.status == .forbidden)
            #expect(refused.contains("security token"))
            // Another browser's session has its own token, which is no good here.
            let other = web.fresh()
            #expect(try await other.login().status == .seeOther)
            let otherToken = try #require(try await other.get("/users").csrfToken)
            #expect(otherToken != token)
            #expect(try await web.post("/users", fields, csrf: otherToken).status == .forbidden)
            #expect(try await web.post("/users", fields, csrf: token, headers: [.origin: "https://evil.example"]).status == .forbidden)
            // Log-in too (double-submit cookie): no token, no log-in.
            let anonymous = web.fresh()
            _ = try await anonymous.get("/login")
            #expect(try await anonymous.post("/login", ["email": AdminHarness.ownerEmail, "password": AdminHarness.ownerPassword], csrf: nil).status
                    == .forbidden)
            #expect(!(try await web.get("/users").contains("new@example.edu")), "nothing was created")
            // With its token the same form works.
            #expect(try await web.post("/users", fields, csrf: token).status == .seeOther)
            #expect(try await web.get("/users").contains("new@example.edu"))
        }
    }

    @Test("the first owner comes from ADMIN_EMAIL / ADMIN_PASSWORD once; with neither and no owner, start-up fails")
    func firstOwner() async throws {
        let database = try await TestServices.freshDatabase()
        try await TestServices.withPostgres(database) { client in
            try await AdminMigrations.runner.run(on: client, logger: TestServices.logger)
            let repository = PostgresAdminRepository(client: client, logger: TestServices.logger)
            let hasher = PasswordHasher(cost: 4)
            await #expect(throws: ConfigurationError.self) {
                try await OwnerBootstrap(users: repository, hasher: hasher, owner: nil, logger: TestServices.logger).run()
            }
            try await OwnerBootstrap(users: repository, hasher: hasher, owner: ("first@example.edu", "first-password"), logger: TestServices.logger).run()
            // Started again with another password: the account (perhaps changed since) is left alone.
            try await OwnerBootstrap(users: repository, hasher: hasher, owner: ("first@example.edu", "other-password"), logger: TestServices.logger).run()
            let stored = try #require(try await repository.credentials(email: "first@example.edu"))
            #expect(stored.user.role == .owner)
            #expect(try await hasher.verify("first-password", hash: stored.passwordHash))
            #expect(stored.passwordHash.hasPrefix("$2"), "bcrypt")
            try await OwnerBootstrap(users: repository, hasher: hasher, owner: nil, logger: TestServices.logger).run()
        }
        // Demo mode: the documented demo credentials; outside it, none.
        let demo = try AdminSettings(environment: Environment(["ITOUR_DEMO": "1"]))
        #expect(demo.bootstrapOwner?.email == "admin@example.edu")
        #expect(demo.bootstrapOwner?.password == "itour-demo")
        let site = ["ADMIN_PUBLIC_URL": "https://admin.example.edu"]
        #expect(try AdminSettings(environment: Environment(site)).bootstrapOwner == nil)
        #expect(throws: ConfigurationError.self) { try AdminSettings(environment: Environment(site.merging(["ADMIN_EMAIL": "x@example.edu"]) { $1 })) }
    }

    @Test("when catalog does not answer, a save says so (503), keeps what was typed, and names the timeout")
    func catalogDown() async throws {
        try await AdminHarness.run(withCatalog: false, settings: ["ADMIN_COMMAND_TIMEOUT_SECONDS": "1"]) { web, _ in
            #expect(try await web.login().status == .seeOther)
            let page = try await web.submit("/tours", ["name": "Typed while catalog is down", "purpose": "kept"], from: "/tours/new")
            #expect(page.status == .serviceUnavailable)
            #expect(page.contains("did not answer within 1 seconds; it may be down"))
            #expect(page.contains(#"value="Typed while catalog is down""#))
        }
    }
}
