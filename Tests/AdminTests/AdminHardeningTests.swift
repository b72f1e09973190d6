import Foundation
import HTTPTypes
import Shared
import Testing
import TestSupport
@testable import Admin

/// Issue 43's findings on the admin site, each as the behaviour that closes it, over real HTTP against the real
/// Postgres (and catalog where content is involved): host names (DNS rebinding), the client behind a trusted proxy,
/// an unreadable chunked body, editors and places, viewers and draft tours, pictures too large to decode.
@Suite("Admin hardening (issue 43)", .serialized, .stopsIfHung)
struct AdminHardeningTests {
    static func request(_ method: String, _ path: String, host: String, headers: [String] = [], body: String = "") -> String {
        ([ "\(method) \(path) HTTP/1.1", "Host: \(host)", "Connection: close" ] + headers
            + (body.isEmpty && method == "GET" ? [] : ["Content-Length: \(body.utf8.count)"])).joined(separator: "\r\n") + "\r\n\r\n" + body
    }

    static func status(_ answer: String) -> Int { Int(answer.split(separator: " ").dropFirst().first ?? "") ?? 0 }

    // MARK: host names

    @Test("the admin answers only for ADMIN_PUBLIC_URL's host: a rebound name is 421, even for a right log-in; /health answers any")
    func hostNames() async throws {
        try await AdminHarness.run(withCatalog: false, testing: .live) { web, _ in
            let port = try #require(web.client.port)
            // The log-in form's token and double-submit cookie, as a page on the attacker's name would get them (rebound).
            let form = try await web.get("/login")
            let token = try #require(form.csrfToken)
            let cookie = "\(AdminCookie.anonymousCSRF)=\(try #require(web.cookie(AdminCookie.anonymousCSRF)))"
            let body = "csrf_token=\(WebClient.encode(token))&email=\(WebClient.encode(AdminHarness.ownerEmail))&password=\(WebClient.encode(AdminHarness.ownerPassword))"
            let rebound = "rebind.attacker.example:\(port)"
            let login = try await TCPConnection.exchange(port: port, Self.request("POST", "/login", host: rebound, headers: [
                "Origin: http://\(rebound)", "Cookie: \(cookie)", "Content-Type: application/x-www-form-urlencoded"], body: body))
            #expect(Self.status(login) == 421, "\(login.prefix(300))")
            #expect(!login.contains(AdminCookie.session), "no session for a rebound name")
            #expect(login.contains("Misdirected Request"))
            let page = try await TCPConnection.exchange(port: port, Self.request("GET", "/login", host: rebound))
            #expect(Self.status(page) == 421)
            // Not demo mode: the loopback address is not one of its names either.
            #expect(Self.status(try await TCPConnection.exchange(port: port, Self.request("GET", "/login", host: "127.0.0.1:\(port)"))) == 421)
            // Its own name, any port, any case: answered.
            #expect(Self.status(try await TCPConnection.exchange(port: port, Self.request("GET", "/login", host: "LocalHost:\(port)"))) == 200)
            // Probes come by pod address: the operational routes answer any name.
            #expect(Self.status(try await TCPConnection.exchange(port: port, Self.request("GET", "/health", host: rebound))) == 200)
        }
    }

    @Test("ADMIN_PUBLIC_URL is required outside demo mode; demo mode adds localhost, 127.0.0.1 and [::1]")
    func allowedHostSettings() throws {
        #expect(throws: ConfigurationError.self) { try AdminSettings(environment: Environment([:])) }
        #expect(throws: ConfigurationError.self) { try AdminSettings(environment: Environment(["ADMIN_PUBLIC_URL": "admin.example.edu"])) }
        let site = try AdminSettings(environment: Environment(["ADMIN_PUBLIC_URL": "https://Admin.Example.edu/"])).allowedHosts
        #expect(site.allows("admin.example.edu") && site.allows("ADMIN.example.edu:443") && site.allows("admin.example.edu."))
        #expect(!site.allows("localhost:8081") && !site.allows("admin.example.edu.evil.example") && !site.allows(nil) && !site.allows("admin.example.edu:x"))
        let demo = try AdminSettings(environment: Environment(["ITOUR_DEMO": "1"])).allowedHosts
        for host in ["localhost:8081", "127.0.0.1:18081", "[::1]:8081", "[::1]", "localhost"] { #expect(demo.allows(host), "\(host)") }
        #expect(!demo.allows("rebind.attacker.example:8081") && !demo.allows("127.0.0.2:8081"))
    }

    // MARK: the client behind a proxy

    @Test("behind a trusted proxy the log-in throttle counts the client X-Forwarded-For names; from anyone else the header is ignored")
    func throttleByForwardedClient() async throws {
        let limits = ["ADMIN_LOGIN_FAILURES_PER_ADDRESS": "3", "ADMIN_LOGIN_FAILURES_PER_ACCOUNT": "100"]
        @Sendable func guesses(_ web: WebClient, forwardedFor: [String]) async throws -> [HTTPResponse.Status] {
            let token = try #require(try await web.get("/login").csrfToken)
            var statuses: [HTTPResponse.Status] = []
            for (index, client) in forwardedFor.enumerated() {
                statuses.append(try await web.post("/login", ["email": "guess\(index)@example.edu", "password": "wrong-password"], csrf: token,
                                                   headers: [.xForwardedFor: client]).status)
            }
            return statuses
        }
        try await AdminHarness.run(withCatalog: false, settings: limits.merging(["TRUSTED_PROXIES": "127.0.0.1/32, ::1/128"]) { $1 }, testing: .live) { web, _ in
            // The third failure from 198.51.100.7 reaches its limit; a spoofed left-hand entry does not make another client.
            let first = try await guesses(web, forwardedFor: ["198.51.100.7", "198.51.100.7", "198.51.100.7", "203.0.113.9, 198.51.100.7"])
            #expect(first == [.unauthorized, .unauthorized, .tooManyRequests, .tooManyRequests], "\(first)")
            // Another client behind the same proxy is not held back.
            #expect(try await guesses(web, forwardedFor: ["198.51.100.8"]) == [.unauthorized])
        }
        try await AdminHarness.run(withCatalog: false, settings: limits, testing: .live) { web, _ in
            // No trusted proxies: the header proves nothing; every guess counts for the TCP peer.
            let statuses = try await guesses(web, forwardedFor: ["198.51.100.1", "198.51.100.2", "198.51.100.3", "198.51.100.4"])
            #expect(statuses == [.unauthorized, .unauthorized, .tooManyRequests, .tooManyRequests], "\(statuses)")
        }
    }

    // MARK: an unreadable body

    @Test("an invalid chunk-size line is a 400, not a 500, before log-in")
    func invalidChunkSize() async throws {
        try await AdminHarness.run(withCatalog: false, testing: .live) { web, _ in
            let port = try #require(web.client.port)
            let answer = try await TCPConnection.exchange(port: port, "POST /login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                                                          + "Transfer-Encoding: chunked\r\n\r\nzz-not-a-size\r\nemail=x\r\n0\r\n\r\n")
            #expect(Self.status(answer) == 400, "\(answer.prefix(300))")
            #expect(try await web.get("/login").status == .ok, "still answering")
        }
    }

    // MARK: editors and places

    @Test("an editor cannot add a POI that none of their tours stops at (a place of its own); an owner can")
    func editorsCannotTakeOverPlaces() async throws {
        try await AdminHarness.run { owner, database in
            let world = try await AdminRoleTests.makeWorld(owner, database: database)
            // A place on its own, published: in no tour.
            let created = try await owner.submit("/pois", ["name": "Lonely Place", "latitude": "34.21", "longitude": "-77.81"], from: "/pois/new")
            #expect(created.status == .seeOther, "\(created.body.prefix(300))")
            let place = try AdminRoleTests.uuid(in: created.location, after: "/pois/")
            let listed = try await owner.submit("/pois/\(place)/draft", ["draftAction": "list"], from: "/pois/\(place)")
            #expect(listed.status == .seeOther, "\(listed.body.prefix(300))")

            let editor = owner.fresh()
            #expect(try await editor.login("editor@example.edu", "editor-password").status == .seeOther)
            let tour = try await editor.get("/tours/\(world.mine)")
            #expect(!tour.contains("Lonely Place"), "not offered")
            let attach = try await editor.post("/tours/\(world.mine)/stops", ["poi": place, "move": "add", "version": try #require(tour.version)],
                                               csrf: tour.csrfToken)
            #expect(attach.status == .forbidden, "\(attach.status)")
            #expect(attach.contains("in none of your tours"))
            #expect(try await editor.get("/pois/\(place)").status == .forbidden, "so not theirs to open")
            #expect(try await editor.get("/pois/\(place)/delete").status == .forbidden, "nor to delete")
            // Their own stop is still theirs; the owner may add the place.
            let page = try await owner.get("/tours/\(world.mine)")
            #expect(page.contains("Lonely Place"), "offered to the owner")
            let added = try await owner.post("/tours/\(world.mine)/stops", ["poi": place, "move": "add", "version": try #require(page.version)],
                                             csrf: page.csrfToken)
            #expect(added.status == .seeOther, "\(added.status)")
        }
    }

    @Test("an editor cannot revert their tour to a version that stops at a POI of tours they do not edit; an owner can")
    func editorsCannotRevertIntoOthersPlaces() async throws {
        try await AdminHarness.run { owner, database in
            let world = try await AdminRoleTests.makeWorld(owner, database: database)
            // The owner adds someone else's stop to the editor's tour, then takes it out again.
            let before = try await owner.get("/tours/\(world.mine)")
            let added = try await owner.post("/tours/\(world.mine)/stops", ["poi": world.otherStop, "move": "add", "version": try #require(before.version)],
                                             csrf: before.csrfToken)
            #expect(added.status == .seeOther, "\(added.status)")
            let withStop = try await owner.get("/tours/\(world.mine)")
            let versionWithStop = try #require(withStop.version)
            let removed = try await owner.post("/tours/\(world.mine)/stops", ["poi": world.otherStop, "move": "remove", "version": versionWithStop],
                                               csrf: withStop.csrfToken)
            #expect(removed.status == .seeOther, "\(removed.status)")

            let editor = owner.fresh()
            #expect(try await editor.login("editor@example.edu", "editor-password").status == .seeOther)
            let mine = try await editor.get("/tours/\(world.mine)")
            let reverted = try await editor.post("/tours/\(world.mine)/revert", ["revertTo": versionWithStop, "version": try #require(mine.version)],
                                                 csrf: mine.csrfToken)
            #expect(reverted.status == .forbidden, "\(reverted.status)")
            #expect(reverted.contains("Someone else&#39;s stop") || reverted.contains("Someone else's stop"), "names the stop")
            #expect(try await editor.get("/tours/\(world.mine)").version == mine.version, "nothing changed")
            // A version the history does not show cannot be checked: refused.
            let unknown = try await editor.post("/tours/\(world.mine)/revert", ["revertTo": "9999", "version": try #require(mine.version)],
                                                csrf: mine.csrfToken)
            #expect(unknown.status == .forbidden && unknown.contains("not in the history"), "\(unknown.status)")
            // An owner may.
            let page = try await owner.get("/tours/\(world.mine)")
            let byOwner = try await owner.post("/tours/\(world.mine)/revert", ["revertTo": versionWithStop, "version": try #require(page.version)],
                                               csrf: page.csrfToken)
            #expect(byOwner.status == .seeOther, "\(byOwner.status)")
        }
    }

    // MARK: forms safe to repeat, not to redirect

    @Test("the same formId and values posted to another tour change that tour: a repeat is per tour, not per form")
    func formIdPerTour() async throws {
        try await AdminHarness.run { owner, _ in
            #expect(try await owner.login().status == .seeOther)
            func tour(_ name: String) async throws -> String {
                let created = try await owner.submit("/tours", ["name": name, "purpose": "p"], from: "/tours/new")
                return try AdminRoleTests.uuid(in: created.location, after: "/tours/")
            }
            let first = try await tour("First tour"), second = try await tour("Second tour")
            let fields = ["name": "Renamed by one form", "purpose": "p", "version": "1", "formId": UUID().uuidString.lowercased()]
            let token = try #require(try await owner.get("/tours/\(first)").csrfToken)
            #expect(try await owner.post("/tours/\(first)", fields, csrf: token).status == .seeOther)
            let again = try await owner.post("/tours/\(second)", fields, csrf: token)
            #expect(again.status == .seeOther)
            #expect(try await owner.get("/tours/\(second)").contains(#"value="Renamed by one form""#), "the second tour changed too")
            // A double click on the first is still one command.
            let repeated = try await owner.post("/tours/\(first)", fields, csrf: token)
            #expect(repeated.status == .seeOther)
            #expect(try await owner.get(try #require(repeated.location)).contains("Already saved"))
        }
    }

    // MARK: viewers and draft tours

    @Test("a viewer's reports list published tours only, whatever allTours or tourId say; an owner's may list drafts")
    func viewersSeePublishedToursOnly() async throws {
        try await AdminHarness.run { owner, database in
            let world = try await AdminRoleTests.makeWorld(owner, database: database)
            let viewer = owner.fresh()
            #expect(try await viewer.login("viewer@example.edu", "viewer-password").status == .seeOther)
            for path in ["/reports?allTours=1", "/reports?tourId=\(world.other)", "/reports?allTours=1&tourId=\(world.other)",
                         "/reports/tours.csv?allTours=1"] {
                let page = try await viewer.get(path)
                #expect(!page.contains("Someone else") && !page.contains("Editor&#39;s tour"), "\(path): a draft tour's name")
            }
            #expect(!(try await viewer.get("/reports")).contains(#"name="allTours""#), "no box for viewers")
            let own = try await owner.get("/reports?allTours=1")
            #expect(own.contains("Someone else&#39;s tour"), "owners may list drafts")
        }
    }

    // MARK: pictures

    @Test("a picture above MEDIA_MAX_PIXELS is refused from its header, saying so; libvips's own words never reach the page")
    func pixelLimit() async throws {
        try await AdminHarness.run(withCatalog: false, settings: ["MEDIA_MAX_PIXELS": "4000000"]) { web, _ in
            #expect(try await web.login().status == .seeOther)
            let token = try #require(try await web.get("/media").csrfToken)
            func upload(_ name: String, _ bytes: [UInt8]) async throws -> Page {
                let boundary = "itourBoundary7"
                var body = Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"csrf_token\"\r\n\r\n\(token)\r\n".utf8)
                body += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\(name)\"\r\nContent-Type: application/octet-stream\r\n\r\n".utf8)
                body += bytes + Array("\r\n--\(boundary)--\r\n".utf8)
                return try await web.post("/media", body: body, contentType: "multipart/form-data; boundary=\(boundary)")
            }
            // 30 000 × 30 000: what the header says is enough, whatever follows (here a broken stream libvips would choke on).
            let huge = try await upload("huge.png", ImageSamples.png(width: 30_000, height: 30_000))
            #expect(huge.status == .unprocessableContent)
            #expect(huge.contains("30000 × 30000 pixels") && huge.contains("at most 4 megapixels"), "\(huge.body.prefix(2000))")
            // Small enough by its header, unreadable to libvips: refused without libvips's text.
            let broken = try await upload("broken.png", ImageSamples.png(width: 100, height: 100))
            #expect(broken.status == .unprocessableContent)
            #expect(broken.contains("could not be read as PNG image"))
            #expect(!broken.contains("vips") && !broken.contains("failed:"), "\(broken.body.prefix(2000))")
        }
    }

    @Test("image headers give the pixel size of PNG, JPEG and WebP (lossy, lossless, extended) without decoding")
    func headerDimensions() {
        #expect(ImageHeader.dimensions(ImageSamples.png(width: 30_000, height: 20_000), format: .png)! == (30_000, 20_000))
        #expect(ImageHeader.dimensions(ImageSamples.jpeg(width: 4_000, height: 3_000), format: .jpeg)! == (4_000, 3_000))
        #expect(ImageHeader.dimensions(ImageSamples.webpLossy(width: 1_024, height: 768), format: .webp)! == (1_024, 768))
        #expect(ImageHeader.dimensions(ImageSamples.webpLossless(width: 16_000, height: 9), format: .webp)! == (16_000, 9))
        #expect(ImageHeader.dimensions(ImageSamples.webpExtended(width: 16_383, height: 16_383), format: .webp)! == (16_383, 16_383))
        #expect(ImageHeader.dimensions(Array("not an image at all, not at all".utf8), format: .png) == nil)
        #expect(ImageHeader.dimensions(Array(ImageSamples.jpeg(width: 10, height: 10).prefix(12)), format: .jpeg) == nil)
    }
}

/// Image headers as encoders write them, followed by bytes no decoder can read.
enum ImageSamples {
    static func be32(_ value: Int) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }
    static func le(_ value: Int, _ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
    static let junk = [UInt8](repeating: 0x5A, count: 64)

    static func png(width: Int, height: Int) -> [UInt8] {
        [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + be32(13) + Array("IHDR".utf8) + be32(width) + be32(height)
            + [8, 2, 0, 0, 0] + be32(0x1234_5678) + junk
    }

    static func jpeg(width: Int, height: Int) -> [UInt8] {
        // SOI, an APP0 segment, a DQT-like segment, then SOF0: precision 8, height, width, 3 components.
        [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + [0, 1, 1, 0, 0, 1, 0, 1, 0, 0]
            + [0xFF, 0xDB, 0x00, 0x04, 0x00, 0x00]
            + [0xFF, 0xC0, 0x00, 0x11, 0x08, UInt8(height >> 8), UInt8(height & 0xFF), UInt8(width >> 8), UInt8(width & 0xFF), 3]
            + [1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1] + junk
    }

    private static func riff(_ chunk: String, _ payload: [UInt8]) -> [UInt8] {
        Array("RIFF".utf8) + le(4 + 8 + payload.count, 4) + Array("WEBP".utf8) + Array(chunk.utf8) + le(payload.count, 4) + payload
    }

    static func webpLossy(width: Int, height: Int) -> [UInt8] {
        riff("VP8 ", [0x10, 0x02, 0x00, 0x9D, 0x01, 0x2A] + le(width, 2) + le(height, 2) + junk)
    }

    static func webpLossless(width: Int, height: Int) -> [UInt8] {
        riff("VP8L", [0x2F] + le((width - 1) | (height - 1) << 14, 4) + junk)
    }

    static func webpExtended(width: Int, height: Int) -> [UInt8] {
        riff("VP8X", [0x00, 0, 0, 0] + le(width - 1, 3) + le(height - 1, 3) + junk)
    }
}
