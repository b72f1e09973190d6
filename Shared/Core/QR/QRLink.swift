import Foundation

/// The links printed QR codes hold (DESIGN.md, "QR codes"), for the feed's `qr.svg` answers and the admin's sheets.
public enum QRLink {
    /// A POI's phone page, which any phone's browser opens.
    public static func poi(_ id: UUID, feedPublicURL: String) -> String {
        "\(feedPublicURL)/v1/pois/\(id.uuidString)/page?src=qr"
    }

    /// A tour, for the app.
    public static func tour(_ id: UUID, feedPublicURL: String) -> String {
        "\(feedPublicURL)/v1/tours/\(id.uuidString)?src=qr"
    }

    /// The longest `FEED_PUBLIC_URL`: its links must fit a code (`QRCode.maximumBytes`).
    public static let maximumPublicURLBytes = 120

    /// `FEED_PUBLIC_URL` as links start with it: http(s), no trailing slash; nil when it is not such an address
    /// or too long for its links to fit a code.
    public static func publicURL(_ text: String) -> String? {
        var base = text.trimmingCharacters(in: .whitespaces)
        while base.hasSuffix("/") { base.removeLast() }
        guard let url = URL(string: base), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host?.isEmpty == false,
              url.query == nil, url.fragment == nil, base.utf8.count <= maximumPublicURLBytes else { return nil }
        return base
    }
}

extension ConfigVariable {
    public static let feedPublicURL = optional(
        "FEED_PUBLIC_URL", default: "http://localhost:8080", "the address phones reach the feed at, for the links QR codes hold")
}
