import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Shared

/// `DELETE /v1/devices/{deviceId}` (DESIGN.md "Erasure", docs/PRIVACY.md): behind the reports token, removes every
/// event-level row of the device and answers 200 with what was removed. Audited twice: a row in `erasures` and a log
/// line, both with the device's pseudonym, never the id sent.
struct ErasureRoutes: Sendable {
    let store: PostgresErasureStore
    let pseudonyms: IdPseudonyms
    let token: String
    var proxies: TrustedProxies = .none
    var tokenFailuresPerMinute = AnalyticsOptions.defaultTokenFailuresPerMinute
    let logger: Logger

    struct Answer: Encodable {
        let pseudonym: String
        let erasedAt: String
        let removed: [String: Int]
    }

    func register<Context: RemoteAddressRequestContext>(on router: Router<Context>) {
        router.group("v1/devices")
            .add(middleware: BearerTokenMiddleware(token: token, proxies: proxies, throttle: FailureThrottle(limit: tokenFailuresPerMinute)))
            .delete("{deviceId}") { request, context -> Response in
                let deviceId = try Self.deviceId(context.parameters.get("deviceId") ?? "")
                let client = proxies.client(peer: IPAddress(context.remoteAddress), forwardedFor: request.headers[values: .xForwardedFor])
                let requestedBy = "reports token from \(client.map { "\($0)" } ?? "unknown")"
                let erasure = try await store.erase(pseudonym: pseudonyms.pseudonym(deviceId), requestedBy: requestedBy)
                logger.notice("device erased", metadata: [
                    "pseudonym": "\(erasure.pseudonym)", "requestedBy": "\(requestedBy)",
                    "erasedAt": "\(erasure.erasedAt.formatted(.iso8601))", "removed": "\(erasure.removed.sorted { $0.key < $1.key })",
                ])
                let answer = Answer(pseudonym: erasure.pseudonym, erasedAt: erasure.erasedAt.formatted(.iso8601), removed: erasure.removed)
                return Response(status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                                body: .init(byteBuffer: ByteBuffer(bytes: try JSONCoding.encoder.encode(answer))))
            }
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
