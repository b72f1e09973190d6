import Foundation
import Shared

/// Reads the analytics Reports API for the reports pages, with the reports token, through the suite's
/// small HTTP GET (HTTPFetch).
struct AnalyticsClient: Sendable {
    enum Failure: Error, CustomStringConvertible {
        case notConfigured(String)
        case unreachable(String)
        /// Analytics answered with an error; `detail` is its problem's detail.
        case refused(status: Int, detail: String)

        var description: String {
            switch self {
            case .notConfigured(let what): "\(what) The reports pages cannot ask analytics for reports."
            case .unreachable(let why): "Analytics did not answer (\(why)). The reports are back once it does."
            case .refused(_, let detail): detail
            }
        }
    }

    /// ANALYTICS_URL, e.g. http://127.0.0.1:8083, without a trailing slash.
    let baseURL: String
    let token: String?
    var timeout: Duration = .seconds(10)

    init(url: String, token: String?) throws {
        guard let components = URLComponents(string: url), components.scheme == "http", components.host?.isEmpty == false else {
            throw Failure.notConfigured("ANALYTICS_URL must be an http:// URL, got \"\(url)\".")
        }
        baseURL = url.hasSuffix("/") ? String(url.dropLast()) : url
        self.token = token
    }

    /// `GET /v1/reports/NAME?query` as JSON, decoded.
    func report<T: Decodable>(_ name: String, _ query: [(String, String)], as type: T.Type) async throws -> T {
        let response = try await get(name, query, accept: "application/json")
        do {
            return try JSONDecoder().decode(T.self, from: Data(response.body))
        } catch {
            throw Failure.unreachable("its \(name) report could not be read: \(error)")
        }
    }

    /// Up to when analytics has counted (`GET /v1/reports/freshness`).
    func freshness() async throws -> ReportFreshness {
        try await report("freshness", [], as: ReportFreshness.self)
    }

    /// The same report as CSV; the response's Content-Disposition names the file.
    func csv(_ name: String, _ query: [(String, String)]) async throws -> HTTPFetch.Response {
        try await get(name, query + [("format", "csv")], accept: "text/csv")
    }

    private func get(_ name: String, _ query: [(String, String)], accept: String) async throws -> HTTPFetch.Response {
        guard let token else { throw Failure.notConfigured("REPORTS_TOKEN is not set for the admin site.") }
        var components = URLComponents()
        components.queryItems = query.map { URLQueryItem(name: $0.0, value: $0.1) }
        let url = "\(baseURL)/v1/reports/\(name)?\(components.percentEncodedQuery ?? "")"
        let response: HTTPFetch.Response
        do {
            response = try await HTTPFetch.get(url, headers: [("Authorization", "Bearer \(token)"), ("Accept", accept)], timeout: timeout,
                                               maxBodyBytes: 32 << 20)
        } catch {
            throw Failure.unreachable("\(error)")
        }
        guard response.status == 200 else {
            let problem = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
            throw Failure.refused(status: response.status, detail: problem?["detail"] as? String ?? "analytics answered \(response.status)")
        }
        return response
    }
}
