import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Shared
import Testing
import TestSupport
@testable import Admin
@testable import Catalog

/// The admin site in a test: the real admin app (and, unless told otherwise, the real catalog) on a fresh
/// database and topic prefix, driven through HummingbirdTesting like a browser (cookies kept, forms posted).
enum AdminHarness {
    static let ownerEmail = "owner@example.edu"
    static let ownerPassword = "owner-password-1"

    static func settings(_ extra: [String: String] = [:]) throws -> AdminSettings {
        try AdminSettings(environment: Environment([
            "ADMIN_EMAIL": ownerEmail, "ADMIN_PASSWORD": ownerPassword, "ADMIN_BCRYPT_COST": "4", "ADMIN_COMMAND_TIMEOUT_SECONDS": "10",
            // HummingbirdTesting sends Host: localhost.
            "ADMIN_PUBLIC_URL": "http://localhost",
        ].merging(extra) { $1 }))
    }

    /// Runs admin (and catalog when `withCatalog`) until `body` returns. With catalog, waits until admin is
    /// ready (its projection loaded from catalog's snapshot).
    static func run(withCatalog: Bool = true, settings extra: [String: String] = [:], testing: TestingSetup = .router,
                    _ body: @Sendable (WebClient, DatabaseSettings) async throws -> Void) async throws {
        let database = try await TestServices.freshDatabase()
        let kafka = TestServices.kafka()
        let admin = try Admin.buildApplication(settings: TestServices.serviceSettings(name: "admin", database: database, kafka: kafka),
                                               admin: settings(extra))
        guard withCatalog else {
            try await admin.test(testing) { client in
                let web = WebClient(client: client)
                let started = try await TestServices.eventually(timeout: .seconds(30)) {
                    try await web.get("/login").status == .ok
                }
                try #require(started)
                try await body(web, database)
            }
            return
        }
        let catalog = try Catalog.buildApplication(settings: TestServices.serviceSettings(name: "catalog", database: database, kafka: kafka))
        try await catalog.test(.router) { _ in
            try await admin.test(testing) { client in
                try await TestServices.waitUntilReady(client, "admin", timeout: .seconds(60))
                try await body(WebClient(client: client), database)
            }
        }
    }
}

/// A page as a browser got it.
struct Page: Sendable {
    let status: HTTPResponse.Status
    let headers: HTTPFields
    let body: String

    var location: String? { headers[.location] }

    /// The CSRF token the page's forms carry.
    var csrfToken: String? {
        guard let range = body.range(of: #"name="csrf_token" value="([^"]+)""#, options: .regularExpression) else { return nil }
        return String(body[range].dropFirst(#"name="csrf_token" value=""#.count).dropLast())
    }

    /// The value of the hidden `version` field of the first form that has one.
    var version: String? {
        guard let range = body.range(of: #"name="version" value="([0-9]+)""#, options: .regularExpression) else { return nil }
        return String(body[range].dropFirst(#"name="version" value=""#.count).dropLast())
    }

    func contains(_ text: String) -> Bool { body.contains(text) }
}

/// A cookie-keeping client over HummingbirdTesting's, posting url-encoded forms.
final class WebClient: @unchecked Sendable {
    let client: any TestClientProtocol
    private let lock = NSLock()
    private var cookies: [String: String] = [:]

    init(client: any TestClientProtocol) { self.client = client }

    var cookieHeader: String { lock.withLock { cookies.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: "; ") } }

    func cookie(_ name: String) -> String? { lock.withLock { cookies[name] } }

    func clearCookies() { lock.withLock { cookies = [:] } }

    /// Another browser: its own cookies.
    func fresh() -> WebClient { WebClient(client: client) }

    @discardableResult
    func get(_ path: String) async throws -> Page {
        try await send(path, method: .get, body: nil, headers: [:])
    }

    /// Posts a form; `csrf` is added unless given as nil.
    @discardableResult
    func post(_ path: String, _ fields: [String: String], csrf: String?, headers: HTTPFields = [:]) async throws -> Page {
        var fields = fields
        if let csrf { fields["csrf_token"] = csrf }
        let body = fields.map { "\(Self.encode($0.key))=\(Self.encode($0.value))" }.joined(separator: "&")
        var headers = headers
        headers[.contentType] = "application/x-www-form-urlencoded"
        return try await send(path, method: .post, body: ByteBuffer(string: body), headers: headers)
    }

    /// Posts `body` as it is, with this `Content-Type` (multipart uploads, hostile bodies).
    @discardableResult
    func post(_ path: String, body: [UInt8], contentType: String, headers: HTTPFields = [:]) async throws -> Page {
        var headers = headers
        headers[.contentType] = contentType
        return try await send(path, method: .post, body: ByteBuffer(bytes: body), headers: headers)
    }

    /// A `multipart/form-data` body with these text fields (and, optionally, one file), delimited by `boundary`.
    static func multipart(_ fields: [(String, String)], file: (name: String, fileName: String, content: String)? = nil,
                          boundary: String) -> [UInt8] {
        var body = ""
        for (name, value) in fields {
            body += "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n"
        }
        if let file {
            body += "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(file.name)\"; filename=\"\(file.fileName)\"\r\n"
            body += "Content-Type: text/csv\r\n\r\n\(file.content)\r\n"
        }
        return Array((body + "--\(boundary)--\r\n").utf8)
    }

    /// Gets `formPath` for its CSRF token, then posts `fields` to `path`.
    @discardableResult
    func submit(_ path: String, _ fields: [String: String], from formPath: String) async throws -> Page {
        let form = try await get(formPath)
        let token: String = try #require(form.csrfToken, "no form on \(formPath)")
        return try await post(path, fields, csrf: token)
    }

    func login(_ email: String = AdminHarness.ownerEmail, _ password: String = AdminHarness.ownerPassword) async throws -> Page {
        try await submit("/login", ["email": email, "password": password], from: "/login")
    }

    static func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? ""
    }

    private func send(_ path: String, method: HTTPRequest.Method, body: ByteBuffer?, headers: HTTPFields) async throws -> Page {
        var headers = headers
        let cookie = cookieHeader
        if !cookie.isEmpty { headers[.cookie] = cookie }
        let response = try await client.execute(uri: path, method: method, headers: headers, body: body)
        for field in response.headers where field.name == .setCookie {
            let pair = field.value.split(separator: ";")[0].split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2 else { continue }
            lock.withLock {
                if pair[1].isEmpty || field.value.contains("Max-Age=0") { cookies[pair[0]] = nil } else { cookies[pair[0]] = pair[1] }
            }
        }
        return Page(status: response.status, headers: response.headers, body: String(buffer: response.body))
    }
}
