import Foundation
import Metrics
import NIOCore
import Shared
import Synchronization

/// `FEED_MAX_CONNECTIONS_PER_CLIENT`: how many connections one TCP peer may hold open at once. Counted by the peer's
/// `IPAddress.clientKey` (an IPv6 peer by its /64) as each connection is accepted, and given back when it closes. A
/// trusted proxy's connections are not counted: behind an ingress every connection comes from it, and which client a
/// request is from is known only from its `X-Forwarded-For`, request by request (the rate limits count by that).
final class ConnectionLimiter: Sendable {
    let perClient: Int
    let proxies: TrustedProxies
    private let open = Mutex<[String: Int]>([:])
    private let refused = Counter(label: "itour_feed_connections_refused_total",
                                  help: "Connections refused because their address already held FEED_MAX_CONNECTIONS_PER_CLIENT.")

    /// `perClient` 0: no limit.
    init(perClient: Int, proxies: TrustedProxies) {
        self.perClient = perClient
        self.proxies = proxies
    }

    /// Counts a new connection; false (and not counted) when its address already holds `perClient`.
    func admit(_ channel: any Channel) -> Bool {
        guard perClient > 0, let peer = IPAddress(channel.remoteAddress), !proxies.trusts(peer) else { return true }
        let key = peer.clientKey
        let admitted = open.withLock { open -> Bool in
            let count = open[key, default: 0]
            guard count < perClient else { return false }
            open[key] = count + 1
            return true
        }
        guard admitted else {
            refused.increment()
            return false
        }
        channel.closeFuture.whenComplete { [self] _ in
            open.withLock { open in
                let left = open[key, default: 1] - 1
                open[key] = left > 0 ? left : nil
            }
        }
        return true
    }

    /// Connections open from `address` now (tests).
    func openConnections(_ address: String) -> Int {
        open.withLock { $0[IPAddress(address)?.clientKey ?? address, default: 0] }
    }
}
