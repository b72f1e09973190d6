import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Shared

/// `DELETE /v1/devices/{deviceId}` (DESIGN.md "Erasure", docs/PRIVACY.md): behind the erasure token (`ERASURE_TOKEN`, staff
/// only; the read-only reports token gets 403), with a JSON body naming who asks and why; removes every event-level row of
/// the device and answers 200 with what was removed. Audited twice: a row in `erasures` and a log line, both with the
/// device's pseudonym (never the id sent), who asked, why, and the client address.
struct ErasureRoutes: Sendable {
    let store: PostgresErasureStore
    let pseudonyms: IdPseudonyms
    /// Open once the stored ids are converted (IdConversion): before, an erasure would miss the rows still unconverted.
    let converted: StartupBarrier
    /// `ERASURE_TOKEN`; empty: erasures are not enabled and every request gets 403 saying so.
    let token: String
    /// `REPORTS_TOKEN`, named in the 403 it gets here.
    let reportsToken: String
    var proxies: TrustedProxies = .none
    var tokenFailuresPerMinute = AnalyticsOptions.defaultTokenFailuresPerMinute
    let logger: Logger

    /// The request's body: who asks (a person or ticket, for the audit) and why.
    struct Asked: Decodable {
        let requestedBy: String
        let reason: String
    }

    struct Answer: Encodable {
        let pseudonym: String
        let erasedAt: String
        let removed: [String: Int]
    }

    func register<Context: RemoteAddressRequestContext>(on router: Router<Context>) {
        let group = router.group("v1/devices")
        guard !token.isEmpty else {
            group.delete("{deviceId}") { _, _ -> Response in
                throw Problem(.forbidden, "erasure is not enabled on this analytics: set ERASURE_TOKEN (DESIGN.md \"Erasure\")")
            }
            return
        }
        group.add(middleware: BearerTokenMiddleware(
                token: token, proxies: proxies, throttle: FailureThrottle(limit: tokenFailuresPerMinute), name: "erasure token", realm: "itour-erasure",
                weaker: (reportsToken, "the reports token is read-only; an erasure needs the erasure token (ERASURE_TOKEN)")))
            .delete("{deviceId}") { request, context -> Response in
                let deviceId = try Self.deviceId(context.parameters.get("deviceId") ?? "")
                let asked = try Self.asked(try await request.body.collect(upTo: Self.maximumBody))
                guard converted.isOpen else {
                    throw Problem.unavailable("analytics is still converting the ids stored before pseudonyms; erasures wait for it",
                                              retryAfterSeconds: 60)
                }
                let client = proxies.client(peer: IPAddress(context.remoteAddress), forwardedFor: request.headers[values: .xForwardedFor])
                    .map { "\($0)" } ?? "unknown"
                let erasure = try await store.erase(pseudonym: pseudonyms.pseudonym(deviceId), requestedBy: asked.requestedBy,
                                                    reason: asked.reason, clientAddress: client)
                // As psql shows a uuid (lower case): what an operator compares with the tables.
                let pseudonym = erasure.pseudonym.lowercased()
                logger.notice("device erased", metadata: [
                    "pseudonym": "\(pseudonym)", "requestedBy": "\(asked.requestedBy)", "reason": "\(asked.reason)", "client": "\(client)",
                    "erasedAt": "\(erasure.erasedAt.formatted(.iso8601))", "removed": "\(erasure.removed.sorted { $0.key < $1.key })",
                ])
                let answer = Answer(pseudonym: pseudonym, erasedAt: erasure.erasedAt.formatted(.iso8601), removed: erasure.removed)
                return Response(status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                                body: .init(byteBuffer: ByteBuffer(bytes: try JSONCoding.encoder.encode(answer))))
            }
    }

    static let maximumBody = 8_192

    /// The body, both fields required and not blank (the audit must say who asked and why); else a 400.
    static func asked(_ body: ByteBuffer) throws -> Asked {
        guard let asked = try? JSONDecoder().decode(Asked.self, from: Data(body.readableBytesView)) else {
            throw Problem.badRequest(#"send a JSON body {"requestedBy": "who asks", "reason": "why"}: the erasure is audited with both"#)
        }
        for (name, value, limit) in [("requestedBy", asked.requestedBy, 200), ("reason", asked.reason, 2_000)] {
            guard !value.allSatisfy(\.isWhitespace) else { throw Problem.badRequest("\(name) must not be empty") }
            guard value.utf8.count <= limit else { throw Problem.badRequest("\(name) must be at most \(limit) bytes (UTF-8)") }
        }
        return asked
    }

    /// The path's device id, percent-decoded, under the events' own rule (1 to 128 bytes of UTF-8); else a 400.
    static func deviceId(_ raw: String) throws -> String {
        guard let decoded = raw.removingPercentEncoding else {
            throw Problem.badRequest("deviceId is not valid percent-encoding")
        }
        guard (1...128).contains(decoded.utf8.count) else {
            throw Problem.badRequest("deviceId must be 1 to 128 bytes (UTF-8)")
        }
        guard !decoded.unicodeScalars.contains("\0") else { throw Problem.badRequest("deviceId must not hold a NUL character") }
        return decoded
    }
}
