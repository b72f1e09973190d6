import Foundation
import HTTPTypes
import PostgresNIO
import Shared
import Testing
import TestSupport
@testable import Admin

/// Every route checks the role on the server, with the admin writing through the real catalog.
@Suite("Admin roles", .serialized, .stopsIfHung)
struct AdminRoleTests {
    /// Content made by the owner through the pages: two tours with a stop each, a category, an editor
    /// assigned to the first tour, and a viewer.
    struct World: Sendable {
        let mine: String, mineStop: String, other: String, otherStop: String, category: String
    }

    static func uuid(in text: String?, after prefix: String) throws -> String {
        let text = try #require(text)
        let range = try #require(text.range(of: prefix + "[0-9a-f-]{36}", options: .regularExpression))
        return String(text[range].dropFirst(prefix.count))
    }

    static func makeWorld(_ owner: WebClient, database: DatabaseSettings) async throws -> World {
        #expect(try await owner.login().status == .seeOther)
        func tour(_ name: String) async throws -> String {
            let created = try await owner.submit("/tours", ["name": name, "purpose": "p"], from: "/tours/new")
            #expect(created.status == .seeOther, "\(created.body)")
            return try uuid(in: created.location, after: "/tours/")
        }
        func stop(_ tour: String, _ name: String) async throws -> String {
            let created = try await owner.submit("/tours/\(tour)/pois", ["name": name, "latitude": "34.2", "longitude": "-77.8"],
                                                 from: "/tours/\(tour)/pois/new")
            #expect(created.status == .seeOther, "\(created.body)")
            return try uuid(in: created.location, after: "/pois/")
        }
        let mine = try await tour("Editor's tour")
        let mineStop = try await stop(mine, "Editor's stop")
        let other = try await tour("Someone else's tour")
        let otherStop = try await stop(other, "Someone else's stop")
        #expect(try await owner.submit("/categories", ["name": "Eat", "parent": ""], from: "/categories").status == .seeOther)
        let category = try uuid(in: try await owner.get("/categories").body, after: "/categories/")
        for (email, role) in [("editor@example.edu", "editor"), ("viewer@example.edu", "viewer")] {
            #expect(try await owner.submit("/users", ["email": email, "role": role, "password": "\(role)-password"], from: "/users").status == .seeOther)
        }
        let editorId = try #require(try await TestServices.withPostgres(database) { client in
            try await PostgresAdminRepository(client: client, logger: TestServices.logger).credentials(email: "editor@example.edu")?.user.id
        })
        let assigned = try await owner.submit("/tours/\(mine)/editors", ["action": "add", "user": editorId.uuidString], from: "/tours/\(mine)")
        #expect(assigned.status == .seeOther)
        return World(mine: mine, mineStop: mineStop, other: other, otherStop: otherStop, category: category)
    }

    /// Every content page: GET paths, and POST paths with fields that would pass validation.
    static func contentPages(_ w: World) -> [String] {
        ["/tours", "/tours/new", "/tours/\(w.mine)", "/tours/\(w.mine)/delete", "/tours/\(w.mine)/pois/new", "/pois", "/pois/new",
         "/pois/\(w.mineStop)", "/pois/\(w.mineStop)/links", "/pois/\(w.mineStop)/preview", "/pois/\(w.mineStop)/delete",
         "/categories", "/categories/\(w.category)/delete", "/users", "/import"]
    }

    static func contentPosts(_ w: World) -> [(String, [String: String])] {
        let poi = ["name": "Changed", "latitude": "1", "longitude": "1"]
        return [
            ("/tours", ["name": "Made"]), ("/tours/\(w.mine)", ["name": "Changed"]), ("/tours/\(w.mine)/status", ["status": "archived"]),
            ("/tours/\(w.mine)/stops", ["poi": w.mineStop, "move": "remove"]), ("/tours/\(w.mine)/editors", ["action": "remove", "user": w.mine]),
            ("/tours/\(w.mine)/delete", [:]), ("/tours/\(w.mine)/pois", poi), ("/pois", poi), ("/pois/\(w.mineStop)", poi),
            ("/pois/\(w.mineStop)/delete", [:]), ("/pois/\(w.mineStop)/links", ["name": "L", "type": "page", "url": "https://x.org"]),
            ("/categories", ["name": "New"]), ("/categories/\(w.category)/rename", ["name": "Renamed"]), ("/categories/\(w.category)/delete", [:]),
            ("/users", ["email": "x@example.edu", "role": "owner", "password": "long-enough-pw"]), ("/import", ["content": "name\nx", "format": "csv"]),
        ]
    }

    @Test("a viewer is refused (403) on every content page and every change; reports are theirs")
    func viewer() async throws {
        try await AdminHarness.run { owner, database in
            let world = try await Self.makeWorld(owner, database: database)
            let viewer = owner.fresh()
            #expect(try await viewer.login("viewer@example.edu", "viewer-password").status == .seeOther)
            let home = try await viewer.get("/")
            #expect(home.contains(#"<a href="/reports">Reports</a>"#))
            #expect(!home.contains(#"href="/tours""#))
            for path in Self.contentPages(world) {
                #expect(try await viewer.get(path).status == .forbidden, "GET \(path)")
            }
            let token = try #require(try await viewer.get("/account").csrfToken)
            for (path, fields) in Self.contentPosts(world) {
                #expect(try await viewer.post(path, fields.merging(["version": "1"]) { $1 }, csrf: token).status == .forbidden, "POST \(path)")
            }
            let tour = try await owner.get("/tours/\(world.mine)")
            #expect(tour.contains("Editor&#39;s stop") && !tour.contains("Changed"), "nothing changed")
        }
    }

    @Test("an editor edits the tours assigned to them and their stops, and nothing else")
    func editor() async throws {
        try await AdminHarness.run { owner, database in
            let world = try await Self.makeWorld(owner, database: database)
            let editor = owner.fresh()
            #expect(try await editor.login("editor@example.edu", "editor-password").status == .seeOther)
            let list = try await editor.get("/tours")
            #expect(list.contains("Editor&#39;s tour") && !list.contains("Someone else"))
            #expect(!list.contains("Create New Tour"))

            // Their tour and its stop: allowed.
            let page = try await editor.get("/tours/\(world.mine)")
            #expect(page.status == .ok)
            let saved = try await editor.post("/tours/\(world.mine)", ["name": "Editor's tour", "purpose": "edited by the editor",
                                                                       "version": try #require(page.version)], csrf: page.csrfToken)
            #expect(saved.status == .seeOther)
            #expect(try await editor.get("/pois/\(world.mineStop)").status == .ok)
            let added = try await editor.submit("/tours/\(world.mine)/pois", ["name": "Another stop", "latitude": "34.3", "longitude": "-77.9"],
                                                from: "/tours/\(world.mine)/pois/new")
            #expect(added.status == .seeOther)

            // Not theirs, and owner-only pages: refused.
            for path in ["/tours/\(world.other)", "/tours/\(world.other)/pois/new", "/pois/\(world.otherStop)", "/pois/\(world.otherStop)/links",
                         "/pois/\(world.otherStop)/preview", "/tours/new", "/tours/\(world.mine)/delete", "/pois", "/pois/new", "/users",
                         "/categories", "/import"] {
                #expect(try await editor.get(path).status == .forbidden, "GET \(path)")
            }
            let token = try #require(page.csrfToken)
            for (path, fields) in [("/tours/\(world.other)", ["name": "Taken over"]), ("/tours/\(world.other)/status", ["status": "published"]),
                                   ("/pois/\(world.otherStop)", ["name": "Taken over", "latitude": "1", "longitude": "1"]),
                                   ("/tours/\(world.mine)/delete", [:]), ("/tours/\(world.mine)/editors", ["action": "add", "user": world.mine]),
                                   ("/tours/\(world.mine)/stops", ["poi": world.otherStop, "move": "add"])] {
                #expect(try await editor.post(path, fields.merging(["version": "2"]) { $1 }, csrf: token).status == .forbidden, "POST \(path)")
            }
            #expect(!(try await owner.get("/tours/\(world.other)").contains("Taken over")))
        }
    }

    @Test("the owner's edits go through catalog: validation beside the field, a conflict with the newer version, a change on the page at once")
    func ownerEditsThroughCatalog() async throws {
        try await AdminHarness.run { owner, database in
            let world = try await Self.makeWorld(owner, database: database)
            let page = try await owner.get("/pois/\(world.mineStop)")
            let token = try #require(page.csrfToken)
            let version = try #require(page.version)
            let refused = try await owner.post("/pois/\(world.mineStop)", ["name": "Editor's stop", "latitude": "91", "longitude": "-77.8",
                                                                          "version": version], csrf: token)
            #expect(refused.status == .unprocessableContent)
            #expect(refused.contains(#"<p class="field-error" id="field-latitude-error">Latitude must be between -90 and 90</p>"#))
            #expect(refused.contains(#"value="91""#))

            let saved = try await owner.post("/pois/\(world.mineStop)", ["name": "Renamed stop", "latitude": "34.21", "longitude": "-77.8",
                                                                        "version": version], csrf: token)
            #expect(saved.status == .seeOther)
            // Read-your-writes: the page right after shows the change (catalog's answer went into the projection).
            #expect(try await owner.get("/pois/\(world.mineStop)").contains(#"value="Renamed stop""#))

            let stale = try await owner.post("/pois/\(world.mineStop)", ["name": "Lost race", "latitude": "34.2", "longitude": "-77.8",
                                                                        "version": version], csrf: token)
            #expect(stale.status == .conflict)
            // The same owner made the newer version: "you, in another tab". A form without its base values (a script's) has
            // every differing field marked as changed on both sides, nothing overwritten unseen.
            #expect(stale.contains("was changed by you, in another tab or window, while you were editing it"))
            #expect(stale.contains("marked below with the other value: <strong>Name, Latitude</strong>"))
            #expect(stale.contains("Also changed in the newer version, to: “Renamed stop”"), "the newer version is shown beside the field")
            #expect(stale.contains(#"value="Lost race""#), "what was typed is kept")
        }
    }
}
