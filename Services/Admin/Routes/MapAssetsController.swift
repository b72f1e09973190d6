import Foundation
import Hummingbird
import Logging

/// Leaflet, served by the admin itself from Debian's libjs-leaflet (`ADMIN_LEAFLET_DIR`): the content security
/// policy stays self-only. Read once at start; when it is not installed the pages keep their SVG map and
/// say nothing is wrong with the content.
struct MapAssetsController {
    /// The files pages load, by the name they are served under (below /assets/leaflet/).
    static let files: [String: String] = [
        "leaflet.js": "text/javascript; charset=utf-8",
        "leaflet.css": "text/css; charset=utf-8",
        "images/marker-icon.png": "image/png",
        "images/marker-icon-2x.png": "image/png",
        "images/marker-shadow.png": "image/png",
        "images/layers.png": "image/png",
        "images/layers-2x.png": "image/png",
    ]

    let assets: [String: (contentType: String, bytes: ByteBuffer)]

    init(directory: String, logger: Logger) {
        var assets: [String: (contentType: String, bytes: ByteBuffer)] = [:]
        for (name, contentType) in Self.files {
            if let data = FileManager.default.contents(atPath: "\(directory)/\(name)") {
                assets[name] = (contentType, ByteBuffer(bytes: data))
            }
        }
        if assets["leaflet.js"] == nil || assets["leaflet.css"] == nil {
            logger.warning("Leaflet not found; maps show as plain drawings without tiles (install libjs-leaflet or set ADMIN_LEAFLET_DIR)",
                           metadata: ["directory": "\(directory)"])
        }
        self.assets = assets
    }

    var isAvailable: Bool { assets["leaflet.js"] != nil && assets["leaflet.css"] != nil }

    func register(on router: RouterGroup<AdminRequestContext>) {
        for (name, asset) in assets {
            router.get("/assets/leaflet/\(name)") { _, _ in
                Response(status: .ok, headers: [.contentType: asset.contentType, .cacheControl: "public, max-age=86400"],
                         body: .init(byteBuffer: asset.bytes))
            }
        }
    }
}
