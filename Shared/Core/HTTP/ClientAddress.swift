import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// An IP address, IPv4 or IPv6 (an IPv4-mapped IPv6 address is its IPv4 address), as its bytes.
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// 4 bytes for IPv4, 16 for IPv6.
    public let bytes: [UInt8]

    public var isIPv4: Bool { bytes.count == 4 }

    init(bytes: [UInt8]) {
        // ::ffff:a.b.c.d is a.b.c.d: a dual-stack socket names IPv4 peers that way.
        if bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            self.bytes = Array(bytes[12..<16])
        } else {
            self.bytes = bytes
        }
    }

    /// Dotted IPv4 or IPv6 text (`[…]` brackets and an IPv6 zone are allowed); nil for anything else, host names included.
    public init?(_ text: some StringProtocol) {
        var text = String(text).trimmingCharacters(in: .whitespaces)
        if text.hasPrefix("["), text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
        if let zone = text.firstIndex(of: "%") { text = String(text[..<zone]) }
        guard !text.isEmpty, text.utf8.count <= 45 else { return nil }
        if text.contains(":") {
            var address = in6_addr()
            guard inet_pton(AF_INET6, text, &address) == 1 else { return nil }
            self.init(bytes: withUnsafeBytes(of: &address) { Array($0) })
        } else {
            var address = in_addr()
            guard inet_pton(AF_INET, text, &address) == 1 else { return nil }
            self.init(bytes: withUnsafeBytes(of: &address) { Array($0) })
        }
    }

    /// A socket's IP address; nil for a Unix socket or none.
    public init?(_ socket: SocketAddress?) {
        switch socket {
        case .v4(let v4):
            var raw = v4.address.sin_addr
            self.init(bytes: withUnsafeBytes(of: &raw) { Array($0) })
        case .v6(let v6):
            var raw = v6.address.sin6_addr
            self.init(bytes: withUnsafeBytes(of: &raw) { Array($0) })
        default:
            return nil
        }
    }

    public var description: String {
        if isIPv4 { return bytes.map(String.init).joined(separator: ".") }
        var raw = in6_addr()
        withUnsafeMutableBytes(of: &raw) { $0.copyBytes(from: bytes) }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &raw, &text, socklen_t(text.count)) != nil else { return "?" }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// What throttles and rate limits count by: an IPv4 address whole, an IPv6 address by its /64 (one subscriber's
    /// network: a phone or a home gets a /64 and can pick any address in it).
    public var clientKey: String {
        if isIPv4 { return description }
        return stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
            .joined(separator: ":") + "::/64"
    }
}

/// A network in CIDR notation: `10.0.0.0/8`, `fd00::/8`, or one address (`192.0.2.7`, taken as /32 or /128).
public struct IPNetwork: Sendable, Hashable, CustomStringConvertible {
    public let address: IPAddress
    public let prefixLength: Int

    public init?(_ text: some StringProtocol) {
        let parts = text.trimmingCharacters(in: .whitespaces).split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(parts[0]) else { return nil }
        let maximum = address.bytes.count * 8
        if parts.count == 2 {
            // An IPv4-mapped network (::ffff:10.0.0.0/104) is its IPv4 network.
            let mappedOffset = address.isIPv4 && parts[0].contains(":") ? 96 : 0
            guard parts[1].allSatisfy(\.isASCII), let length = Int(parts[1]), (mappedOffset...(maximum + mappedOffset)).contains(length) else { return nil }
            prefixLength = length - mappedOffset
        } else {
            prefixLength = maximum
        }
        self.address = address
    }

    public func contains(_ candidate: IPAddress) -> Bool {
        guard candidate.bytes.count == address.bytes.count else { return false }
        var remaining = prefixLength
        for index in address.bytes.indices where remaining > 0 {
            let bits = min(8, remaining)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
            if candidate.bytes[index] & mask != address.bytes[index] & mask { return false }
            remaining -= bits
        }
        return true
    }

    public var description: String { "\(address)/\(prefixLength)" }
}

/// `TRUSTED_PROXIES`: the proxies (an ingress, a load balancer) whose `X-Forwarded-For` names the client. Only when the
/// TCP peer is inside one of these networks is the header read, and then the client is its right-most address that is
/// not itself a trusted proxy (each proxy appends the address it got the request from; what is left of that was written
/// by the client and proves nothing). With none (the default) the client is the TCP peer and the header is ignored.
/// Every throttle and rate limit of the feed, the admin and analytics counts by this client (DESIGN.md "Client addresses").
public struct TrustedProxies: Sendable, Hashable {
    public let networks: [IPNetwork]

    public static let none = TrustedProxies(networks: [])

    public init(networks: [IPNetwork]) {
        self.networks = networks
    }

    /// Comma-separated CIDRs; refuses anything else naming the variable.
    public init(_ text: String) throws {
        var networks: [IPNetwork] = []
        for item in text.split(separator: ",") where !item.trimmingCharacters(in: .whitespaces).isEmpty {
            guard let network = IPNetwork(item) else {
                throw ConfigurationError(name: ConfigVariable.trustedProxies.name,
                                         message: "must be networks in CIDR notation separated by commas (10.0.0.0/8,fd00::/8); \"\(item.trimmingCharacters(in: .whitespaces))\" is not one")
            }
            networks.append(network)
        }
        self.networks = networks
    }

    public init(environment: Environment) throws {
        try self.init(environment.string(.trustedProxies))
    }

    public static let variables: [ConfigVariable] = [.trustedProxies]

    public var isEmpty: Bool { networks.isEmpty }

    public func trusts(_ address: IPAddress?) -> Bool {
        guard let address else { return false }
        return networks.contains { $0.contains(address) }
    }

    /// The client of a request that came from `peer` with these `X-Forwarded-For` values (each field line as sent,
    /// in order). The peer itself unless it is a trusted proxy; then, reading the addresses from the right, the first
    /// that is not a trusted proxy. A value that is not an address ends the walk at the proxy that passed it on, and
    /// a chain of trusted proxies only gives its left-most one.
    public func client(peer: IPAddress?, forwardedFor: [String]) -> IPAddress? {
        guard var client = peer, trusts(client) else { return peer }
        for line in forwardedFor.reversed() {
            for item in line.split(separator: ",").reversed() {
                guard let hop = Self.hop(item) else { return client }
                client = hop
                if !trusts(hop) { return client }
            }
        }
        return client
    }

    /// An `X-Forwarded-For` entry's address: an address, or one with a port as some proxies write them (`a.b.c.d:port`,
    /// `[v6]:port`).
    static func hop(_ item: Substring) -> IPAddress? {
        if let address = IPAddress(item) { return address }
        let text = item.trimmingCharacters(in: .whitespaces)
        guard let colon = text.lastIndex(of: ":"), !text[text.index(after: colon)...].isEmpty,
              text[text.index(after: colon)...].allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        let host = text[..<colon]
        if host.hasPrefix("["), host.hasSuffix("]") { return IPAddress(host) }
        return host.contains(":") ? nil : IPAddress(host)
    }

    /// `client(peer:forwardedFor:)` as the key throttles count by (`IPAddress.clientKey`), "unknown" with no address.
    public func clientKey(peer: SocketAddress?, forwardedFor: [String]) -> String {
        client(peer: IPAddress(peer), forwardedFor: forwardedFor)?.clientKey ?? "unknown"
    }

    /// The same for a request as Hummingbird gives it.
    public func clientKey(peer: SocketAddress?, request: Request) -> String {
        clientKey(peer: peer, forwardedFor: isEmpty ? [] : request.headers[values: .xForwardedFor])
    }
}

extension HTTPField.Name {
    public static let xForwardedFor = Self("X-Forwarded-For")!
}

extension ConfigVariable {
    public static let trustedProxies = optional(
        "TRUSTED_PROXIES", default: "",
        "networks (CIDR, comma-separated, IPv4 and IPv6) of proxies whose X-Forwarded-For names the client; none: the TCP peer is the client")
}

/// A request context that knows the TCP peer, for services whose throttles count by client (analytics' reports token).
public struct PeerRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}
