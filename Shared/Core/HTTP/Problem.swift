import Foundation
import HTTPTypes
import Hummingbird
import NIOHTTP1

/// An RFC 9457 problem: every error the suite's HTTP APIs answer is one of these, as
/// `application/problem+json`, with a `detail` a client developer can act on.
public struct Problem: HTTPResponseError, Sendable {
    public let status: HTTPResponse.Status
    public let detail: String
    public let headers: HTTPFields
    public let extra: [String: String]

    public init(_ status: HTTPResponse.Status, _ detail: String, headers: HTTPFields = [:], extra: [String: String] = [:]) {
        self.status = status
        self.detail = detail
        self.headers = headers
        self.extra = extra
    }

    public static func badRequest(_ detail: String) -> Problem { Problem(.badRequest, detail) }
    public static func notFound(_ detail: String) -> Problem { Problem(.notFound, detail) }

    /// A request body the HTTP decoder could not read (an invalid chunk-size line, a body cut short): the client's
    /// mistake, answered 400 and closed, never a 500 with an error in the log.
    public static func isUnreadableRequest(_ error: any Error) -> Bool { error is HTTPParserError }

    public static var unreadableRequest: Problem {
        Problem(.badRequest, "the request could not be read as HTTP/1.1 (a malformed chunk or body)", headers: [.connection: "close"])
    }

    public static func unavailable(_ detail: String, retryAfterSeconds: Int) -> Problem {
        Problem(.serviceUnavailable, detail, headers: [.retryAfter: String(retryAfterSeconds)])
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        Response(status: status, headers: responseHeaders, body: .init(byteBuffer: try responseBody()))
    }

    /// The answer's headers: `headers` and the problem+json content type.
    public var responseHeaders: HTTPFields {
        var fields = headers
        fields[.contentType] = "application/problem+json"
        return fields
    }

    /// The problem+json document.
    public func responseBody() throws -> ByteBuffer {
        var body: [String: String] = extra
        body["type"] = "about:blank"
        body["title"] = status.reasonPhrase
        body["status"] = String(status.code)
        body["detail"] = detail
        // `status` must be a number in problem+json: encode by hand around the string map.
        var object = body.mapValues { $0 as Any }
        object["status"] = status.code
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        return ByteBuffer(bytes: data)
    }
}

/// Turns errors that are not `Problem`s into problems: Hummingbird's own HTTP errors keep their status,
/// anything else is a 500 whose detail hides internals (the log has them).
public struct ProblemMiddleware<Context: RequestContext>: RouterMiddleware {
    public init() {}

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let problem as Problem {
            throw problem
        } catch let error as HTTPError {
            throw Problem(error.status, error.body ?? error.status.reasonPhrase, headers: error.headers)
        } catch let error as any HTTPResponseError {
            throw Problem(error.status, error.status.reasonPhrase)
        } catch is DecodingError {
            throw Problem.badRequest("malformed request body")
        } catch where Problem.isUnreadableRequest(error) {
            context.logger.debug("unreadable request", metadata: ["error": "\(error)"])
            throw Problem.unreadableRequest
        } catch {
            context.logger.error("unhandled error", metadata: ["error": "\(String(reflecting: error))"])
            throw Problem(.internalServerError, "internal error; see the service log")
        }
    }
}
