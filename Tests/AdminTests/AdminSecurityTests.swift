import Foundation
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Shared
import Testing
import TestSupport
@testable import Admin

/// The security review's findings on the admin site (issue 14), each as the behaviour that closes it, against
/// the real Postgres: multipart bodies read only where uploads go and only after log-in, guessing throttled
/// atomically with a bounded wait, `next` only a plain path, and `Origin` compared by scheme, host and port.
@Suite("Admin security", .serialized, .stopsIfHung)
struct AdminSecurityTests {
    static let owner = AdminHarness.ownerEmail
    static let password = AdminHarness.ownerPassword

    // MARK: multipart

    @Test("multipart is read only on the upload route, after log-in: not on /login, not before the session is known")
    func multipartOnlyWhereUploadsGo() async throws {
        try await AdminHarness.run(withCatalog: false) { web, _ in
            // A log-in posted as multipart, with the right token and password, is not read at all.
            let token = try #require(try await web.get("/login").csrfToken)
            let body = WebClient.multipart([("csrf_token", token), ("email", Self.owner), ("password", Self.password)], boundary: "XyZ")
            let login = try await web.post("/login", body: body, contentType: "multipart/form-data; boundary=XyZ")
            #expect(login.status == .badRequest, "\(login.status)")
            #expect(web.cookie(AdminCookie.session) == nil)

            // The reported attack: an 8 KiB boundary of dashes and 128 KiB of dashes, no session: refused with 400.
            let dashes = [UInt8](repeating: UInt8(ascii: "-"), count: 128 << 10)
            let hostile = try await web.post("/login", body: dashes,
                                             contentType: "multipart/form-data; boundary=" + String(repeating: "-", count: 8 << 10))
            #expect(hostile.status == .badRequest)

            // The upload route with no session: "log in", whatever the body (this one is no multipart at all).
            let anonymous = try await web.fresh().post("/import", body: Array("not multipart".utf8),
                                                       contentType: "multipart/form-data; boundary=XyZ")
            #expect(anonymous.status == .unauthorized, "\(anonymous.status)")
        }
    }

    @Test("signed in: the upload route reads multipart with its CSRF token; boundaries over 70 characters are refused (RFC 2046)")
    func uploadRouteBoundaries() async throws {
        try await AdminHarness.run(withCatalog: false) { web, _ in
            #expect(try await web.login().status == .seeOther)
            let token = try #require(try await web.get("/import").csrfToken)
            func upload(boundary: String, token: String?) async throws -> Page {
                let fields = token.map { [("csrf_token", $0)] } ?? []
                return try await web.post("/import", body: WebClient.multipart(fields + [("format", "csv")], boundary: boundary),
                                          contentType: "multipart/form-data; boundary=\"\(boundary)\"")
            }
            // Read, token checked: the route answers (nothing to import).
            let seventy = String(repeating: "b", count: 70)
            let read = try await upload(boundary: seventy, token: token)
            #expect(read.status == .unprocessableContent, "\(read.status)")
            #expect(read.contains("Choose a file, or paste its content."))
            // CSRF is still checked on the upload route.
            #expect(try await upload(boundary: seventy, token: nil).status == .forbidden)
            #expect(try await upload(boundary: seventy, token: String(repeating: "A", count: token.count)).status == .forbidden)
            // 71 characters: not a boundary.
            #expect(try await upload(boundary: seventy + "b", token: token).status == .badRequest)
            // Other routes take no multipart, signed in or not.
            let users = try await web.post("/users", body: WebClient.multipart([("csrf_token", token), ("email", "m@example.edu")], boundary: "XyZ"),
                                           contentType: "multipart/form-data; boundary=XyZ")
            #expect(users.status == .badRequest)
        }
    }

    @Test("the delimiter search is linear: an adversarial body costs at most two steps a byte")
    func linearDelimiterSearch() throws {
        // 70 boundary characters, all but the last the same as the body's: a naive search compares ~70 bytes at each offset.
        let boundary = String(repeating: "-", count: 69) + "x"
        let pattern = BytePattern(Array("--\(boundary)".utf8))
        let body = [UInt8](repeating: UInt8(ascii: "-"), count: 256 << 10)
        var steps = 0
        #expect(pattern.firstRange(in: body, from: 0, steps: &steps) == nil)
        #expect(steps <= 2 * body.count + pattern.bytes.count, "\(steps) steps for \(body.count) bytes")

        // The same answers as a plain scan, on random bodies over a small alphabet.
        var random = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            let needle = (0..<Int.random(in: 1...6, using: &random)).map { _ in UInt8.random(in: 97...99, using: &random) }
            let haystack = (0..<Int.random(in: 0...80, using: &random)).map { _ in UInt8.random(in: 97...99, using: &random) }
            let from = Int.random(in: 0...haystack.count, using: &random)
            let expected = from > haystack.count - needle.count ? nil : (from...(haystack.count - needle.count)).first {
                Array(haystack[$0..<($0 + needle.count)]) == needle
            }.map { $0..<($0 + needle.count) }
            #expect(BytePattern(needle).firstRange(in: haystack, from: from) == expected, "\(needle) in \(haystack) from \(from)")
        }
        // And a whole adversarial form still parses.
        let form = try #require(FormData.multipart(Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n".utf8)
            + body + Array("\r\n--\(boundary)--\r\n".utf8), boundary: boundary))
        #expect(form["a"].utf8.count == body.count)
    }

    // MARK: throttling

    @Test("12 log-ins at once, 11 wrong then the right one: no session while throttled; after the bounded wait the owner logs in")
    func concurrentGuesses() async throws {
        try await AdminHarness.run(withCatalog: false, settings: ["ADMIN_BCRYPT_COST": "12", "ADMIN_LOGIN_DELAY_SECONDS": "20"]) { web, _ in
            let token = try #require(try await web.get("/login").csrfToken)
            let pages = try await withThrowingTaskGroup(of: (right: Bool, page: Page).self) { group in
                for attempt in 1...11 {
                    group.addTask { (false, try await web.post("/login", ["email": Self.owner, "password": "wrong \(attempt)"], csrf: token)) }
                }
                // The right one as soon as a wrong one was refused (the account's wait is running), while the
                // rest are in flight. A fixed pause lost the race on a loaded machine both ways: sent before the
                // wrong ones were counted, or after the wait had run out while bcrypt checks held the machine
                // (seconds each, with the other suites running): hence a wait of 20 s, far past any such delay.
                var pages: [(right: Bool, page: Page)] = []
                while !pages.contains(where: { $0.page.status == .tooManyRequests }), let page = try await group.next() { pages.append(page) }
                group.addTask { (true, try await web.post("/login", ["email": Self.owner, "password": Self.password], csrf: token)) }
                return try await group.reduce(into: pages) { $0.append($1) }
            }
            let wrong = pages.filter { !$0.right }.map(\.page.status)
            #expect(wrong.count(where: { $0 == .unauthorized }) <= 4, "\(wrong)")
            #expect(wrong.count(where: { $0 == .tooManyRequests }) >= 7, "\(wrong)")
            let right = try #require(pages.first { $0.right }?.page)
            #expect(right.status == .tooManyRequests, "the right password got \(right.status) while the account was throttled")
            #expect(!right.headers[values: .setCookie].contains { $0.hasPrefix("\(AdminCookie.session)=") && !$0.hasPrefix("\(AdminCookie.session)=;") })
            let wait = try #require(Int(right.headers[.retryAfter] ?? ""))
            #expect(wait <= 20, "the wait is the configured first delay, not extended by the refused attempts")
            try await Task.sleep(for: .seconds(wait) + .milliseconds(300))
            let later = web.fresh()
            #expect(try await later.login().status == .seeOther)
        }
    }

    @Test("the wait grows but never beyond 60 s, attempts refused meanwhile do not extend it, and a right password takes its count back")
    func boundedDelay() async throws {
        let database = try await TestServices.freshDatabase()
        try await TestServices.withPostgres(database) { client in
            try await AdminMigrations.runner.run(on: client, logger: TestServices.logger)
            let throttle = LoginThrottle(repository: PostgresAdminRepository(client: client, logger: TestServices.logger), perAccount: 3,
                                         perAddress: 1_000, firstDelay: 10, maximumDelay: 60)
            var now = Date(timeIntervalSince1970: 1_800_000_000)
            var waits: [Int] = []
            for _ in 0..<30 {
                // Every attempt here is a wrong password: counted by `begin` alone.
                guard case .check(let attempt) = try await throttle.begin(.logIn, account: "a@x.edu", address: "1.2.3.4", now: now) else {
                    Issue.record("refused at \(now) with no wait running")
                    return
                }
                if let wait = attempt.waitIfWrong {
                    waits.append(wait)
                    for refusedAt in [1.5, 2.5] {
                        guard case .wait(let left) = try await throttle.begin(.logIn, account: "A@x.edu", address: "5.6.7.8",
                                                                              now: now.addingTimeInterval(refusedAt)) else {
                            Issue.record("not refused during the wait")
                            return
                        }
                        #expect(left == wait - Int(refusedAt), "a refused attempt extended the wait")
                    }
                    now.addTimeInterval(TimeInterval(wait))
                }
            }
            #expect(waits.count == 28)
            #expect(waits.prefix(4) == [10, 20, 40, 60])
            #expect(waits.max() == 60, "\(waits)")
            // The right password (once the wait is over) clears the account's count: the next failure imposes nothing.
            guard case .check(let right) = try await throttle.begin(.logIn, account: "a@x.edu", address: "1.2.3.4", now: now) else {
                Issue.record("refused after the wait")
                return
            }
            try await throttle.succeeded(right)
            guard case .check(let next) = try await throttle.begin(.logIn, account: "a@x.edu", address: "1.2.3.4", now: now) else {
                Issue.record("refused after a right password")
                return
            }
            #expect(next.waitIfWrong == nil)
        }
    }

    @Test("wrong current passwords on the account page are throttled too; log-in stays open to the owner")
    func passwordChangeThrottled() async throws {
        try await AdminHarness.run(withCatalog: false) { web, _ in
            #expect(try await web.login().status == .seeOther)
            let change = ["password": "new-password-123", "repeat": "new-password-123"]
            for attempt in 1...5 {
                let page = try await web.submit("/account/password", change.merging(["current": "guess \(attempt)"]) { $1 }, from: "/account")
                #expect(page.status == (attempt < 5 ? .unprocessableContent : .tooManyRequests), "attempt \(attempt): \(page.status)")
            }
            let right = try await web.submit("/account/password", change.merging(["current": Self.password]) { $1 }, from: "/account")
            #expect(right.status == .tooManyRequests, "\(right.status)")
            #expect(Int(right.headers[.retryAfter] ?? "") ?? 0 > 0)
            // The password was not changed, and the owner can still log in elsewhere.
            #expect(try await web.fresh().login().status == .seeOther)
        }
    }

    // MARK: next

    @Test("next= must be a plain path: no control characters, whitespace, backslashes or //")
    func plainNext() async throws {
        #expect(AuthController.safeNext("/tours/1?tab=stops") == "/tours/1?tab=stops")
        for hostile in ["/\t/127.0.0.1:8080/v1/tours", "/\n/evil.example", "/ /evil.example", "/\u{0}x", "/a\\b", "/tours//evil",
                        "/\u{7f}/evil.example", "/\u{2028}/evil.example", "/\u{a0}/evil.example", "tours"] {
            #expect(AuthController.safeNext(hostile) == "/", "\(hostile.unicodeScalars.map { $0.value })")
        }
        try await AdminHarness.run(withCatalog: false) { web, _ in
            let form = try await web.get("/login?next=/%09/127.0.0.1:8080/v1/tours")
            #expect(!form.contains("127.0.0.1:8080"))
            let token = try #require(form.csrfToken)
            let right = try await web.post("/login", ["email": Self.owner, "password": Self.password, "next": "/\t/127.0.0.1:8080/v1/tours"],
                                           csrf: token)
            #expect(right.status == .seeOther)
            #expect(right.location == "/")
        }
    }

    // MARK: Origin

    @Test("a POST whose Origin differs in scheme or port is refused; the same origin is fine")
    func originSchemeHostAndPort() async throws {
        try await AdminHarness.run(withCatalog: false) { web, _ in
            #expect(try await web.login().status == .seeOther)
            let token = try #require(try await web.get("/users").csrfToken)
            func add(_ email: String, origin: String) async throws -> HTTPResponse.Status {
                try await web.post("/users", ["email": email, "role": "viewer", "password": "long-enough-pw"], csrf: token,
                                   headers: [.origin: origin]).status
            }
            // The test client asks for http://localhost (port 80).
            #expect(try await add("wrongport@example.edu", origin: "http://localhost:8081") == .forbidden)
            #expect(try await add("scheme@example.edu", origin: "https://localhost") == .forbidden)
            #expect(try await add("same@example.edu", origin: "http://localhost") == .seeOther)
            #expect(try await add("implicit80@example.edu", origin: "http://LOCALHOST:80") == .seeOther)
            let users = try await web.get("/users")
            #expect(!users.contains("wrongport@example.edu") && !users.contains("scheme@example.edu"))
        }
    }
}
