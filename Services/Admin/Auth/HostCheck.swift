import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Shared

/// The host names the admin answers for (DNS rebinding): `ADMIN_PUBLIC_URL`'s host, and in demo mode `localhost`,
/// `127.0.0.1` and `[::1]` as well. A page a browser loaded from another name (an attacker's, pointed at this address)
/// sends that name in `Host`, and is answered 421 Misdirected Request, so it can neither read a page nor post a form.
/// Ports are not compared: a proxy or a published container port may change them, a rebinding attack cannot change
/// the name.
struct AllowedHosts: Sendable, Equatable {
    let names: Set<String>

    static let demoNames: Set<String> = ["localhost", "127.0.0.1", "[::1]"]

    init(names: Set<String>) {
        self.names = Set(names.compactMap { Self.host(ofAuthority: $0) })
    }

    /// `publicURL`'s host, and the loopback names in demo mode; nil when `publicURL` is not an http(s) URL with a host.
    init?(publicURL: String, demo: Bool) {
        guard let components = URLComponents(string: publicURL), let scheme = components.scheme?.lowercased(), ["http", "https"].contains(scheme),
              let host = components.host, !host.isEmpty, components.user == nil else { return nil }
        let name = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        self.init(names: Set([name]).union(demo ? Self.demoNames : []))
    }

    func allows(_ authority: String?) -> Bool {
        guard let authority, let host = Self.host(ofAuthority: authority) else { return false }
        return names.contains(host)
    }

    /// The host of a `Host` value (`name`, `name:port`, `[v6]:port`), lower-cased, without a trailing dot; nil when malformed.
    static func host(ofAuthority authority: String) -> String? {
        var text = Substring(authority.trimmingCharacters(in: .whitespaces).lowercased())
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            let rest = text[text.index(after: close)...]
            guard rest.isEmpty || (rest.hasPrefix(":") && rest.dropFirst().allSatisfy(\.isNumber)) else { return nil }
            return String(text[...close])
        }
        if let colon = text.lastIndex(of: ":") {
            guard text[text.index(after: colon)...].allSatisfy(\.isNumber) else { return nil }
            text = text[..<colon]
        }
        if text.hasSuffix(".") { text = text.dropLast() }
        guard !text.isEmpty, !text.contains(":") else { return nil }
        return String(text)
    }
}

/// Answers 421 Misdirected Request, a short plain page, to a request whose `Host` is not one the admin answers for.
struct HostCheckMiddleware<Context: RequestContext>: RouterMiddleware {
    let allowed: AllowedHosts

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard allowed.allows(request.head.authority) else {
            context.logger.notice("request for a host this admin does not answer for", metadata: ["host": "\(request.head.authority ?? "")"])
            return Response(status: .misdirectedRequest,
                            headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store", .xContentTypeOptions: "nosniff"],
                            body: .init(byteBuffer: ByteBuffer(string: "421 Misdirected Request: this site does not answer for that host name.\n")))
        }
        return try await next(request, context)
    }
}

/// Sets the request's client (`TRUSTED_PROXIES`): the log-in throttle counts by it.
struct ClientAddressMiddleware: RouterMiddleware {
    typealias Context = AdminRequestContext
    let proxies: TrustedProxies

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.clientAddress = proxies.clientKey(peer: context.peer, request: request)
        return try await next(request, context)
    }
}
