import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Shared

/// `itour-bench admin-path [--runs N]`: what an editor sees. Logs in to the admin site as the owner
/// (ADMIN_EMAIL / ADMIN_PASSWORD, demo values by default), creates and publishes a tour through the forms,
/// then saves a new name on "Manage Tour" N times and times each from the Save until `GET /v1/tours` on
/// the feed shows it: admin, command, catalog's transaction and outbox, broker, the feed's projection.
enum AdminPathBenchmark {
    struct TourList: Decodable {
        struct Tour: Decodable { let id: UUID; let name: String }
        let tours: [Tour]
    }

    static func run(runs: Int) async throws {
        let environment = Environment()
        let adminURL = environment.string(.adminURL)
        let feedURL = environment.string(.feedURL)
        let browser = Browser(base: adminURL)
        try await browser.logIn(email: environment.string(.benchAdminEmail), password: environment.string(.benchAdminPassword))

        let form = try await browser.get("/tours/new")
        let created = try await browser.post("/tours", ["name": "Admin benchmark 0", "purpose": "Timing edits", "csrf_token": try form.csrfToken()])
        guard created.status == 303, let location = created.location, let id = location.split(separator: "/").last.flatMap({ UUID(uuidString: String($0.prefix(36))) }) else {
            throw BenchError("creating the tour failed: \(created.status) \(created.body.prefix(300))")
        }
        let path = "/tours/\(id.uuidString.lowercased())"
        var page = try await browser.get(path)
        let token = try page.csrfToken()
        let published = try await browser.post("\(path)/status", ["status": "published", "version": try page.version(), "csrf_token": token])
        guard published.status == 303 else { throw BenchError("publishing failed: \(published.status)") }
        page = try await browser.get(path)
        var version = Int(try page.version()) ?? 0

        var saves: [Double] = []
        var totals: [Double] = []
        for run in 1...runs {
            let name = "Admin benchmark \(run)"
            let start = ContinuousClock.now
            let saved = try await browser.post(path, ["name": name, "summary": "", "purpose": "Timing edits", "version": String(version), "csrf_token": token])
            guard saved.status == 303 else { throw BenchError("save \(run) answered \(saved.status): \(saved.body.prefix(300))") }
            saves.append(milliseconds(ContinuousClock.now - start))
            version += 1
            while try await !feedShows(id: id, name: name, feedURL: feedURL) {
                if ContinuousClock.now - start > .seconds(10) { throw BenchError("feed did not show save \(run) within 10 s") }
            }
            totals.append(milliseconds(ContinuousClock.now - start))
            FileHandle.standardError.write(Data("\radmin path: \(run)/\(runs)".utf8))
        }
        FileHandle.standardError.write(Data("\n".utf8))
        page = try await browser.get(path)
        _ = try await browser.post("\(path)/delete", ["version": try page.version(), "csrf_token": token])
        print(Statistics.summary("admin Save answered (command applied by catalog)", milliseconds: saves))
        print(Statistics.summary("admin Save until GET /v1/tours on the feed shows it", milliseconds: totals))
    }

    static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1_000 + Double(duration.components.attoseconds) / 1e15
    }

    static func feedShows(id: UUID, name: String, feedURL: String) async throws -> Bool {
        let (data, _) = try await URLSession.shared.data(from: URL(string: "\(feedURL)/v1/tours")!)
        return try JSONCoding.decoder.decode(TourList.self, from: data).tours.contains { $0.id == id && $0.name == name }
    }
}

/// Just enough of a browser for the admin: keeps cookies, posts url-encoded forms, does not follow redirects.
final class Browser: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    struct Page {
        let status: Int
        let location: String?
        let body: String

        func field(_ name: String) throws -> String {
            guard let range = body.range(of: "name=\"\(name)\" value=\"[^\"]*\"", options: .regularExpression) else {
                throw BenchError("no \(name) field on the page")
            }
            return String(body[range].dropFirst("name=\"\(name)\" value=\"".count).dropLast())
        }

        func csrfToken() throws -> String { try field("csrf_token") }
        func version() throws -> String { try field("version") }
    }

    let base: String
    private var cookies: [String: String] = [:]
    private let lock = NSLock()
    private lazy var session = URLSession(configuration: .ephemeral, delegate: self, delegateQueue: nil)

    init(base: String) { self.base = base }

    func logIn(email: String, password: String) async throws {
        let form = try await get("/login")
        let answer = try await post("/login", ["email": email, "password": password, "csrf_token": try form.csrfToken()])
        guard answer.status == 303 else { throw BenchError("log-in as \(email) failed: \(answer.status)") }
    }

    func get(_ path: String) async throws -> Page { try await send(path, method: "GET", form: nil) }

    func post(_ path: String, _ form: [String: String]) async throws -> Page { try await send(path, method: "POST", form: form) }

    private func send(_ path: String, method: String, form: [String: String]?) async throws -> Page {
        var request = URLRequest(url: URL(string: base + path)!)
        request.httpMethod = method
        let cookie = lock.withLock { cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ") }
        if !cookie.isEmpty { request.setValue(cookie, forHTTPHeaderField: "Cookie") }
        if let form {
            let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
            request.httpBody = Data(form.map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }
                .joined(separator: "&").utf8)
            request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw BenchError("not an HTTP response") }
        if let setCookie = http.value(forHTTPHeaderField: "Set-Cookie") {
            // One cookie per response is all the admin sets.
            let pair = setCookie.split(separator: ";")[0].split(separator: "=", maxSplits: 1).map(String.init)
            if pair.count == 2 { lock.withLock { cookies[pair[0]] = pair[1] } }
        }
        return Page(status: http.statusCode, location: http.value(forHTTPHeaderField: "Location"), body: String(decoding: data, as: UTF8.self))
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        completionHandler(nil)
    }
}
