import HTTPTypes
import Hummingbird
import Shared

/// Answers a known path asked with a method it does not support with `405` and an `Allow` header
/// (RFC 9110 15.5.6) instead of the router's `404`, so clients learn the path exists.
struct MethodNotAllowedMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Path templates (a `{…}` segment is one parameter) and the methods each supports.
    let routes: [(template: [Substring], methods: [HTTPRequest.Method])]

    init(_ table: [FeedRoute]) {
        var routes: [(template: [Substring], methods: [HTTPRequest.Method])] = []
        for route in table {
            let template = route.path.split(separator: "/")
            if let index = routes.firstIndex(where: { $0.template == template }) {
                routes[index].methods.append(route.method)
            } else {
                routes.append((template, [route.method]))
            }
        }
        self.routes = routes
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            let segments = request.uri.path.split(separator: "/")
            guard let route = routes.first(where: { Self.matches($0.template, segments) }), !route.methods.contains(request.method) else {
                throw error
            }
            let allowed = route.methods.map(\.rawValue).joined(separator: ", ")
            throw Problem(.methodNotAllowed, "\(request.method.rawValue) is not supported on \(request.uri.path); use \(allowed)",
                          headers: [.allow: allowed])
        }
    }

    private static func matches(_ template: [Substring], _ segments: [Substring]) -> Bool {
        template.count == segments.count && zip(template, segments).allSatisfy { $0.first == "{" || $0 == $1 }
    }
}
