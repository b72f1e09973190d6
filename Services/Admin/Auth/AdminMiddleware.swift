import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Shared

/// Cookie names; the session cookie is HttpOnly and SameSite=Lax (and Secure when configured).
enum AdminCookie {
    static let session = "itour_session"
    /// Double-submit CSRF token for forms shown before log-in (the log-in form itself).
    static let anonymousCSRF = "itour_csrf"
    /// The hidden field every form carries.
    static let csrfField = "csrf_token"
}

/// Finds the session named by the cookie, if it is live.
struct SessionMiddleware: RouterMiddleware {
    typealias Context = AdminRequestContext
    let sessions: any SessionRepository

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        if let token = request.cookies[AdminCookie.session]?.value, !token.isEmpty, token.count <= 100 {
            context.session = try await sessions.session(tokenHash: SecureToken.hash(token), now: Date())
        }
        return try await next(request, context)
    }
}

/// Every POST carries the CSRF token of the page that showed the form, or is refused with 403. Signed in,
/// the token is the session's (synchronizer token); before log-in, it must match the `itour_csrf` cookie
/// (double submit). An `Origin` other than this site's (scheme, host and port) is refused too. Reads the form
/// once and leaves it in the context.
///
/// Multipart bodies are read only on `uploadPaths` (the import page) and only with a session: anywhere else,
/// or before log-in, they are refused before a byte of the body is read; a boundary that RFC 2046 does not
/// allow (over 70 characters, say) is refused with 400.
struct CSRFMiddleware: RouterMiddleware {
    typealias Context = AdminRequestContext
    let secureCookies: Bool
    /// The routes that take file uploads (`multipart/form-data`), each with the largest body it reads.
    let uploadPaths: [String: Int]
    /// Bodies larger than this are refused (the upload routes allow more).
    static let formLimit = 1 << 20

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        var newAnonymousToken: String?
        if context.session == nil {
            if let token = request.cookies[AdminCookie.anonymousCSRF]?.value, token.count >= 32, token.count <= 100 {
                context.anonymousCSRFToken = token
            } else if request.method == .get || request.method == .head {
                newAnonymousToken = SecureToken.make()
                context.anonymousCSRFToken = newAnonymousToken
            }
        }
        if request.method != .get && request.method != .head {
            if let origin = request.headers[.origin], origin != "null" {
                guard Self.sameOrigin(origin, as: request, secure: secureCookies) else { throw AdminError.csrf }
            }
            var request = request
            let contentType = request.headers[.contentType]
            if contentType?.lowercased().hasPrefix("multipart/form-data") == true {
                guard let limit = uploadPaths[request.uri.path] else { throw AdminError.badRequest("This form cannot be sent as an upload.") }
                guard context.session != nil else { throw AdminError.notSignedIn }
                let boundary = try Self.boundary(contentType)
                let body = try await request.collectBody(upTo: limit)
                guard let form = FormData.multipart(Array(buffer: body), boundary: boundary) else {
                    throw AdminError.badRequest("The uploaded form could not be read.")
                }
                context.form = form
            } else {
                let body = try await request.collectBody(upTo: Self.formLimit)
                context.form = FormData.urlEncoded(String(buffer: body))
            }
            let expected = context.session?.csrfToken ?? context.anonymousCSRFToken ?? ""
            guard SecureToken.equal(context.form[AdminCookie.csrfField], expected) else { throw AdminError.csrf }
            return try await next(request, context)
        }
        var response = try await next(request, context)
        if let token = newAnonymousToken {
            response.setCookie(Cookie(name: AdminCookie.anonymousCSRF, value: token, path: "/", secure: secureCookies, httpOnly: true, sameSite: .lax))
        }
        return response
    }

    /// The `boundary` parameter of a multipart `Content-Type`, if RFC 2046 allows it: 1 to 70 characters from
    /// its set, not ending in a space. Anything else is a 400.
    static func boundary(_ contentType: String?) throws -> String {
        let value = contentType?.components(separatedBy: ";").dropFirst().compactMap { piece -> String? in
            let pair = piece.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, pair[0].lowercased() == "boundary" else { return nil }
            var value = pair[1]
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            return value
        }.first
        guard let value, (1...70).contains(value.utf8.count), value.utf8.last != UInt8(ascii: " "),
              value.utf8.allSatisfy({ boundaryCharacters.contains($0) }) else {
            throw AdminError.badRequest("The uploaded form could not be read.")
        }
        return value
    }

    /// RFC 2046's `bchars`.
    private static let boundaryCharacters = Set(Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'()+_,-./:=? ".utf8))

    /// Whether `origin` is the site this request was sent to: the same scheme, host and port (a port left out is the
    /// scheme's default). The site's scheme is https when it is served over HTTPS (`ADMIN_COOKIE_SECURE`), else the request's.
    static func sameOrigin(_ origin: String, as request: Request, secure: Bool) -> Bool {
        guard let authority = request.head.authority, !authority.isEmpty else { return false }
        let scheme = secure ? "https" : (request.head.scheme?.lowercased() ?? "http")
        guard let sent = Origin(origin), let site = Origin("\(scheme)://\(authority)") else { return false }
        return sent == site
    }

    /// An origin's scheme, host and port, compared without regard to case, the default port filled in.
    struct Origin: Equatable {
        let scheme: String
        let host: String
        let port: Int

        init?(_ text: String) {
            guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
                  let host = components.host?.lowercased(), !host.isEmpty,
                  components.path.isEmpty || components.path == "/", components.query == nil, components.user == nil else { return nil }
            let defaultPort: Int
            switch scheme {
            case "http": defaultPort = 80
            case "https": defaultPort = 443
            default: return nil
            }
            self.scheme = scheme
            self.host = host
            port = components.port ?? defaultPort
        }
    }
}

/// Headers every admin page gets: no caching of private pages, no framing, and a content security policy
/// that allows only the admin's own script files, never inline script, so even a missed escape could not run one.
struct SecurityHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        // A page made to be framed by the admin (a tour preview's stop) brings its own policy.
        if response.headers[.contentSecurityPolicy] == nil {
            // connect-src: the media upload's XMLHttpRequest (its progress bar), to this site only.
            response.headers[.contentSecurityPolicy] = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https: http: data:; media-src https: http:; "
                + "connect-src 'self'; frame-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
            response.headers[.xFrameOptions] = "DENY"
        }
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[.referrerPolicy] = "same-origin"
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
        return response
    }
}

/// Renders errors as HTML pages in the site's layout (the API's problem+json would mean nothing to staff).
struct AdminErrorMiddleware: RouterMiddleware {
    typealias Context = AdminRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as AdminError {
            switch error {
            case .notSignedIn:
                if request.method == .get || request.method == .head {
                    let target = request.uri.path == "/" ? "/login" : "/login?next=\(percentEncoded(request.uri.string))"
                    return Response.redirect(to: target)
                }
                return ErrorPage.response(.unauthorized, "Please log in again", "Your session has ended.", context: context)
            case .forbidden(let message):
                return ErrorPage.response(.forbidden, "Not allowed", message, context: context)
            case .notFound(let message):
                return ErrorPage.response(.notFound, "Not found", message, context: context)
            case .badRequest(let message):
                return ErrorPage.response(.badRequest, "Bad request", message, context: context)
            case .unavailable(let message):
                return ErrorPage.response(.serviceUnavailable, "Not available now", message, context: context)
            case .csrf:
                return ErrorPage.response(.forbidden, "Form refused",
                                          "This form is missing its security token, or it belongs to an older session. Go back, reload the page and try again.",
                                          context: context)
            }
        } catch let error as HTTPError {
            let message = error.status == .notFound ? "There is no such page." : (error.body ?? error.status.reasonPhrase)
            return ErrorPage.response(error.status, error.status.reasonPhrase, message, context: context)
        } catch let error as any HTTPResponseError {
            return ErrorPage.response(error.status, error.status.reasonPhrase, error.status.reasonPhrase, context: context)
        } catch where Problem.isUnreadableRequest(error) {
            // A body the HTTP decoder could not read (an invalid chunk-size line): the sender's mistake, not the page's.
            context.logger.debug("unreadable request", metadata: ["error": "\(error)"])
            var response = ErrorPage.response(.badRequest, "Bad request", "The request could not be read.", context: context)
            response.headers[.connection] = "close"
            return response
        } catch {
            context.logger.error("page failed", metadata: ["error": "\(String(reflecting: error))"])
            return ErrorPage.response(.internalServerError, "Something went wrong",
                                      "The page could not be shown; the error is in the admin service's log.", context: context)
        }
    }
}

func percentEncoded(_ text: String) -> String {
    text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~/"))) ?? ""
}

extension HTTPField.Name {
    static let xFrameOptions = Self("X-Frame-Options")!
    static let xContentTypeOptions = Self("X-Content-Type-Options")!
    static let referrerPolicy = Self("Referrer-Policy")!
}

extension Response {
    /// 303 See Other: after a POST, the browser GETs the target.
    static func redirect(to location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location])
    }
}
