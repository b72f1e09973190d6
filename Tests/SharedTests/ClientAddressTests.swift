import Foundation
import NIOCore
@testable import Shared
import Testing

/// `TRUSTED_PROXIES` (DESIGN.md "Client addresses"): networks parsed as CIDRs, and the client a request names read
/// from the right of `X-Forwarded-For`, only when its TCP peer is a trusted proxy.
@Suite("Client addresses")
struct ClientAddressTests {
    static func ip(_ text: String) -> IPAddress { IPAddress(text)! }

    @Test("addresses and networks: IPv4, IPv6, IPv4-mapped IPv6, single addresses; anything else refused naming the variable")
    func parsing() throws {
        #expect(Self.ip("::ffff:192.0.2.1") == Self.ip("192.0.2.1"))
        #expect(Self.ip("[2001:db8::1]").description == "2001:db8::1")
        #expect(Self.ip("2001:db8:1:2:3:4:5:6").clientKey == "2001:db8:1:2::/64")
        #expect(IPAddress("proxy.example") == nil && IPAddress("300.1.1.1") == nil && IPAddress("") == nil)
        let proxies = try TrustedProxies("10.0.0.0/8, 192.0.2.7 ,fd00::/8,::ffff:172.16.0.0/108")
        #expect(proxies.networks.count == 4)
        for inside in ["10.1.2.3", "192.0.2.7", "fd12::1", "::ffff:10.9.9.9", "172.16.5.5"] { #expect(proxies.trusts(Self.ip(inside)), "\(inside)") }
        for outside in ["11.0.0.1", "192.0.2.8", "fe80::1", "2001:db8::1", "172.32.0.1"] { #expect(!proxies.trusts(Self.ip(outside)), "\(outside)") }
        #expect(try TrustedProxies("").isEmpty)
        for bad in ["10.0.0.0/33", "10.0.0.0/x", "proxy.example", "fd00::/129", "10.0.0.0/8;"] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try TrustedProxies(bad) }
        }
        #expect(try TrustedProxies(environment: Environment(["TRUSTED_PROXIES": "127.0.0.1/32"])).trusts(Self.ip("127.0.0.1")))
        #expect(throws: ConfigurationError.self) { try TrustedProxies(environment: Environment(["TRUSTED_PROXIES": "everyone"])) }
    }

    @Test("the client: the peer unless it is trusted; then the right-most forwarded address that is not a trusted proxy")
    func resolution() throws {
        let proxies = try TrustedProxies("10.0.0.0/8,fd00::/8")
        let proxy = Self.ip("10.0.0.5"), stranger = Self.ip("198.51.100.9")
        // An untrusted peer is the client, whatever it says.
        #expect(proxies.client(peer: stranger, forwardedFor: ["203.0.113.1"]) == stranger)
        #expect(TrustedProxies.none.client(peer: proxy, forwardedFor: ["203.0.113.1"]) == proxy)
        // Behind the proxy: what it appended, not what the client wrote before it.
        #expect(proxies.client(peer: proxy, forwardedFor: ["203.0.113.1, 198.51.100.2"]) == Self.ip("198.51.100.2"))
        // Entries with a port, as some proxies write them; anything else after a colon is not an address.
        #expect(proxies.client(peer: proxy, forwardedFor: ["198.51.100.2:52100"]) == Self.ip("198.51.100.2"))
        #expect(proxies.client(peer: proxy, forwardedFor: ["[2001:db8::7]:443"]) == Self.ip("2001:db8::7"))
        #expect(proxies.client(peer: proxy, forwardedFor: ["198.51.100.2:http"]) == proxy)
        #expect(proxies.client(peer: proxy, forwardedFor: ["198.51.100.2:"]) == proxy)
        // Through two proxies, over two field lines.
        #expect(proxies.client(peer: proxy, forwardedFor: ["198.51.100.3", "10.0.0.9"]) == Self.ip("198.51.100.3"))
        #expect(proxies.client(peer: proxy, forwardedFor: ["[2001:db8::5], fd00::1"]) == Self.ip("2001:db8::5"))
        // No header, or only proxies: the left-most proxy; garbage ends the walk at the proxy that passed it on.
        #expect(proxies.client(peer: proxy, forwardedFor: []) == proxy)
        #expect(proxies.client(peer: proxy, forwardedFor: ["10.0.0.7"]) == Self.ip("10.0.0.7"))
        #expect(proxies.client(peer: proxy, forwardedFor: ["198.51.100.4, unknown, 10.0.0.8"]) == Self.ip("10.0.0.8"))
        #expect(proxies.client(peer: nil, forwardedFor: ["198.51.100.4"]) == nil)
        let peer = try SocketAddress(ipAddress: "10.0.0.5", port: 443)
        #expect(proxies.clientKey(peer: peer, forwardedFor: ["2001:db8:aa:bb:1::9"]) == "2001:db8:aa:bb::/64")
        #expect(proxies.clientKey(peer: nil, forwardedFor: []) == "unknown")
    }
}
