import Foundation
import PostgresNIO
import Shared
import Testing
import TestSupport
@testable import Catalog

/// The publish check of DESIGN.md "Accessibility and stops", against the real Postgres: a picture needs alt text,
/// library audio captions or a transcript, library video captions; a narration must be library audio.
@Suite("Accessibility at publish", .stopsIfHung)
struct AccessibilityCheckTests {
    static let base = "https://tours.example.edu/v1/media/"

    static func media(_ sha: String, _ format: MediaFormat, alt: String? = nil, captions: String? = nil, transcript: String? = nil) -> MediaContent {
        MediaContent(sha256: sha, format: format, byteCount: 10, fileName: "f", title: "File \(sha.prefix(4))", altText: alt,
                     captions: captions, captionsByteCount: captions == nil ? nil : 40, transcript: transcript)
    }

    @Test("a language's captions are a file of their own: hash and size together, each checked as the site's are")
    func translatedCaptions() async throws {
        try await HandlerFixture.with { handler, _ in
            let (audio, picture, vtt) = (String(repeating: "b", count: 64), String(repeating: "a", count: 64), String(repeating: "d", count: 64))
            func create(_ sha: String, _ format: MediaFormat, _ translations: Translations) async throws -> CatalogCommandResult {
                var content = Self.media(sha, format, captions: format == .mp3 ? vtt : nil)
                content.translations = translations
                return try await handler.handle(CatalogCommand(action: .createMedia, actor: "a", entityId: UUID(), media: content))
            }
            let spanish = String(repeating: "e", count: 64)
            for (translations, field) in [(["es": ["captions": spanish]], "translations.es.captions"),
                                          (["es": ["captions": "not-a-hash", "captionsByteCount": "12"]], "translations.es.captions"),
                                          (["es": ["captions": spanish, "captionsByteCount": "0"]], "translations.es.captionsByteCount"),
                                          (["es": ["captions": spanish, "captionsByteCount": "many"]], "translations.es.captionsByteCount")] {
                let refused = try await create(audio, .mp3, translations)
                #expect(refused.outcome == .rejected && refused.errors.map(\.field).contains(field), "\(translations): \(refused.errors)")
            }
            let onPicture = try await create(picture, .jpeg, ["es": ["captions": spanish, "captionsByteCount": "40"]])
            #expect(onPicture.errors.map(\.field) == ["translations.es.captions"], "\(onPicture.errors)")
            let created = try await create(audio, .mp3, ["es": ["captions": spanish, "captionsByteCount": "40"]])
            #expect(created.outcome == .applied, "\(created.errors)")
            #expect(created.media?.content.captionsFiles.map(\.sha256) == [vtt, spanish])
            #expect(created.media?.content.localized(to: "es").captions == spanish)
            #expect(created.media?.content.untranslatedFields(in: "fr") == ["title", "captions"], "a file's size is never missing on its own")
        }
    }

    @Test("publishing a POI or a tour refuses pictures without alt text and audio or video nobody can read; fixed in the library, it publishes")
    func publishCheck() async throws {
        try await HandlerFixture.with { handler, _ in
            let (picture, audio, video, vtt) = (String(repeating: "a", count: 64), String(repeating: "b", count: 64),
                                                String(repeating: "c", count: 64), String(repeating: "d", count: 64))
            var ids: [String: UUID] = [:]
            for (sha, content) in [(picture, Self.media(picture, .jpeg)), (audio, Self.media(audio, .mp3)), (video, Self.media(video, .mp4))] {
                let created = try await handler.handle(CatalogCommand(action: .createMedia, actor: "a", entityId: UUID(), status: .published, media: content))
                #expect(created.outcome == .applied)
                ids[sha] = created.entityId
            }
            var poi = PoiContent(name: "Hall", latitude: 34.2, longitude: -77.8,
                                 pictures: [Self.base + picture, "https://example.edu/gate.jpg", "https://example.edu/own.jpg"],
                                 links: [MediaLink(name: "Film", type: .video, url: Self.base + video),
                                         MediaLink(name: "Elsewhere", type: .audio, url: "https://example.edu/talk.mp3")],
                                 pictureAlts: ["", "", "A gate"], narration: audio)
            let created = try await handler.handle(CatalogCommand(action: .createPoi, actor: "a", poi: poi))
            #expect(created.outcome == .applied, "a draft may lack them: \(created.errors)")
            let poiId = try #require(created.entityId)

            let refused = try await handler.handle(CatalogCommand(action: .setPoiStatus, actor: "a", entityId: poiId, expectedVersion: 1, status: .published))
            #expect(refused.outcome == .rejected)
            #expect(Set(refused.errors.map(\.field)) == ["pictures", "links", "narration"])
            #expect(refused.errors.filter { $0.field == "pictures" }.map(\.message) == [
                "Picture 1 of Hall has no alt text: say what it shows, after its address or in the media library",
                "Picture 2 of Hall has no alt text: say what it shows, after its address or in the media library"])
            #expect(refused.errors.first { $0.field == "narration" }?.message.contains("has neither captions nor a transcript") == true)
            #expect(refused.errors.filter { $0.field == "links" }.map { $0.message.contains("has no captions") } == [true], "the hot-linked MP3 is not checked")

            let tour = try await handler.handle(CatalogCommand(action: .createTour, actor: "a", tour: TourContent(name: "T")))
            let stops = try await handler.handle(CatalogCommand(action: .setTourStops, actor: "a", entityId: tour.entityId, expectedVersion: 1, stops: [poiId]))
            #expect(stops.outcome == .applied)
            let tourRefused = try await handler.handle(CatalogCommand(action: .setTourStatus, actor: "a", entityId: tour.entityId, expectedVersion: 2,
                                                                      status: .published, confirmFarStops: true))
            #expect(tourRefused.outcome == .rejected && tourRefused.errors.count == 4, "confirming far stops does not skip it: \(tourRefused.errors)")

            // Fixed where it belongs: the library's alt text, captions and a transcript; the POI's own alt for the gate.
            for (sha, content) in [(picture, Self.media(picture, .jpeg, alt: "Brick hall")), (audio, Self.media(audio, .mp3, transcript: "Welcome.")),
                                   (video, Self.media(video, .mp4, captions: vtt))] {
                let updated = try await handler.handle(CatalogCommand(action: .updateMedia, actor: "a", entityId: ids[sha], expectedVersion: 1, media: content))
                #expect(updated.outcome == .applied, "\(updated.errors)")
            }
            poi.pictureAlts = ["", "An iron gate", "A gate"]
            #expect(try await handler.handle(CatalogCommand(action: .updatePoi, actor: "a", entityId: poiId, expectedVersion: 1, poi: poi)).outcome == .applied)
            let published = try await handler.handle(CatalogCommand(action: .setTourStatus, actor: "a", entityId: tour.entityId, expectedVersion: 2,
                                                                    status: .published))
            #expect(published.outcome == .applied, "\(published.errors)")
        }
    }

    @Test("a tour whose cover names a library file that is not published is refused at publish; a published one or another site's passes")
    func coverAtPublish() async throws {
        try await HandlerFixture.with { handler, _ in
            let (shown, hidden) = (String(repeating: "e", count: 64), String(repeating: "f", count: 64))
            for (sha, status) in [(shown, ContentStatus.published), (hidden, .draft)] {
                let created = try await handler.handle(CatalogCommand(action: .createMedia, actor: "a", entityId: UUID(), status: status,
                                                                      media: Self.media(sha, .jpeg, alt: "The quad")))
                #expect(created.outcome == .applied)
            }
            let poi = try #require(try await handler.handle(CatalogCommand(action: .createPoi, actor: "a",
                                                                           poi: PoiContent(name: "Quad", latitude: 34.2, longitude: -77.8))).entityId)
            func tour(cover: String) async throws -> CatalogCommandResult {
                let created = try await handler.handle(CatalogCommand(action: .createTour, actor: "a",
                                                                      tour: TourContent(name: "Covered", coverImage: cover, coverImageAlt: "The quad")))
                #expect(created.outcome == .applied, "\(created.errors)")
                _ = try await handler.handle(CatalogCommand(action: .setTourStops, actor: "a", entityId: created.entityId, expectedVersion: 1, stops: [poi]))
                return try await handler.handle(CatalogCommand(action: .setTourStatus, actor: "a", entityId: created.entityId, expectedVersion: 2,
                                                               status: .published))
            }
            let refused = try await tour(cover: Self.base + hidden)
            #expect(refused.outcome == .rejected && refused.errors.map(\.field) == ["coverImage"], "\(refused.errors)")
            #expect(try await tour(cover: Self.base + shown + "?w=400").outcome == .applied)
            #expect(try await tour(cover: "https://example.edu/quad.jpg").outcome == .applied, "another site's picture cannot be checked")
        }
    }

    @Test("a narration must be a live library audio file; radius 5 to 500; alt texts no more than pictures")
    func fields() async throws {
        try await HandlerFixture.with { handler, _ in
            let picture = String(repeating: "e", count: 64)
            _ = try await handler.handle(CatalogCommand(action: .createMedia, actor: "a", entityId: UUID(), status: .published,
                                                        media: Self.media(picture, .png, alt: "x")))
            var poi = PoiContent(name: "Hall", latitude: 34.2, longitude: -77.8, pictures: ["https://example.edu/a.jpg"],
                                 pictureAlts: ["a", "b"], triggerRadiusMeters: 501, narration: picture)
            var result = try await handler.handle(CatalogCommand(action: .createPoi, actor: "a", poi: poi))
            #expect(Set(result.errors.map(\.field)) == ["pictureAlts", "triggerRadiusMeters", "narration"])
            #expect(result.errors.first { $0.field == "narration" }?.message.hasPrefix("Narration must be audio") == true)
            poi.narration = String(repeating: "f", count: 64)
            poi.triggerRadiusMeters = 4
            result = try await handler.handle(CatalogCommand(action: .createPoi, actor: "a", poi: poi))
            #expect(result.errors.first { $0.field == "narration" }?.message.hasPrefix("Narration must be a file of the media library") == true)
            #expect(result.errors.contains { $0.field == "triggerRadiusMeters" })
            poi.narration = "NOT-HEX"
            result = try await handler.handle(CatalogCommand(action: .createPoi, actor: "a", poi: poi))
            #expect(result.errors.first { $0.field == "narration" }?.message.contains("64 lower-case hex digits") == true)
            // A file is in the library once; a picture of an unpublished item cannot be published.
            let again = try await handler.handle(CatalogCommand(action: .createMedia, actor: "a", entityId: UUID(), status: .published,
                                                                media: Self.media(picture, .png, alt: "y")))
            #expect(again.errors.map(\.field) == ["sha256"])
            let draftPicture = String(repeating: "8", count: 64)
            _ = try await handler.handle(CatalogCommand(action: .createMedia, actor: "a", entityId: UUID(), status: .draft,
                                                        media: Self.media(draftPicture, .png, alt: "z")))
            let place = try await handler.handle(CatalogCommand(action: .createPoi, actor: "a", poi: PoiContent(
                name: "Lawn", latitude: 34.2, longitude: -77.8, pictures: [Self.base + draftPicture])))
            let publishing = try await handler.handle(CatalogCommand(action: .setPoiStatus, actor: "a", entityId: place.entityId, expectedVersion: 1,
                                                                     status: .published))
            #expect(publishing.errors.map(\.message) == ["Picture 1 of Lawn names a library file that is not published (or was deleted): publish it, or choose another"])
            let captionsOnImage = try await handler.handle(CatalogCommand(action: .createMedia, actor: "a", entityId: UUID(), status: .published,
                                                                           media: Self.media(String(repeating: "9", count: 64), .png, captions: picture)))
            #expect(captionsOnImage.errors.map(\.field) == ["captions"])
        }
    }

    @Test("an import publishes a tour whose stops' pictures have no alt text: its formats carry none, so it is not checked")
    func importsAreNotChecked() async throws {
        try await HandlerFixture.with { handler, _ in
            let content = PoiContent(name: "Imported hall", latitude: 53.8, longitude: -1.5, pictures: ["https://example.edu/hall.jpg"])
            let poiRow = ContentImportFile.poiRow(label: "poi", legacyId: 91_001, content: content, actor: "import")
            let tourRow = ContentImportFile.tourRow(label: "tour", legacyId: 91_002, content: TourContent(name: "Imported walk"),
                                                    stops: [ContentImportFile.stableId(ContentImportFile.Kind.poi.rawValue, 91_001)],
                                                    status: .published, actor: "import")
            let result = try await handler.handle(CatalogCommand(action: .importBatch, actor: "owner@example.edu", rows: [poiRow, tourRow]))
            #expect(result.outcome == .applied, "\(result.message ?? "") \(result.rows?.map(\.message) ?? [])")
        }
    }
}
