import Foundation
import Hummingbird
import Shared

/// The media library (DESIGN.md, "Media library"; owners): the list, uploads and deletes. An upload's format
/// is read from its bytes; its bytes go to the media store under their SHA-256, then the item to catalog as
/// `media.create`.
struct MediaController {
    let projection: AdminCatalogProjection
    let writer: any CatalogWriter
    let editors: any TourEditorRepository
    let store: any MediaStore
    let maxBytes: Int
    let feedPublicURL: String
    let images: ImageVariants
    /// `SITE_LANGUAGES`: what an item's texts translate into.
    var languages = SiteLanguages.english
    /// `MEDIA_MAX_PIXELS`: the largest picture (width × height, read from its header) the library takes.
    var maxPixels = AdminSettings.defaultMediaMaxPixels

    static let path = "/media"
    /// The translated fields the item's form posts: texts and the captions file (pasted), not a file's size, which the
    /// stored captions give.
    static let formFields = MediaContent.translatedFields.filter { $0.role != .fileSize }.map(\.name)

    /// Pixels as megapixels for people: whole when whole, else to one decimal.
    static func megapixels(_ pixels: Int) -> String {
        pixels % 1_000_000 == 0 ? String(pixels / 1_000_000) : String(format: "%.1f", Double(pixels) / 1_000_000)
    }

    /// The upload route and the largest body it reads: the file and the form around it.
    static func uploadPaths(maxBytes: Int) -> [String: Int] { [path: maxBytes + 64 * 1_024] }

    func register(on router: RouterGroup<AdminRequestContext>) {
        router.get(RouterPath(Self.path), use: list)
        router.post(RouterPath(Self.path), use: upload)
        router.post(RouterPath("\(Self.path)/:id/delete"), use: delete)
        router.get(RouterPath("\(Self.path)/:id"), use: show)
        router.post(RouterPath("\(Self.path)/:id"), use: save)
    }

    private func item(_ context: AdminRequestContext) throws -> MediaState {
        guard let item = projection.content.media[try context.id("id")] else { throw AdminError.notFound("There is no such file in the library.") }
        return item
    }

    private func itemPage(_ item: MediaState, form: MediaPages.ItemForm, errors: [String: String] = [:], problem: String? = nil,
                          context: AdminRequestContext, notice: Notice? = nil, status: HTTPResponse.Status = .ok) -> Response {
        AdminPage(title: item.content.title, context: context, breadcrumbs: [("Media", Self.path), (item.content.title, nil)], notice: notice,
                  body: MediaPages.item(item, form: form, feedPublicURL: feedPublicURL,
                                        usedBy: projection.content.pois(using: item.content.sha256), errors: errors, problem: problem,
                                        csrf: context.csrfToken, languages: languages),
                  status: status).response()
    }

    @Sendable func show(_ request: Request, context: AdminRequestContext) async throws -> Response {
        try await context.access(editors).requireOwner("manage the media library")
        let item = try item(context)
        var form = MediaPages.ItemForm(title: item.content.title, altText: item.content.altText ?? "", transcript: item.content.transcript ?? "",
                                       translations: TranslationFields.values(item.content.translations))
        // The captions files' texts in the form, the site language's and each translation's, in place of their hashes.
        form.translations = form.translations.filter { TranslationFields.split($0.key)?.field != "captionsByteCount" }
        let files = [(item.content.captions, nil as String?)]
            + (item.content.translations ?? [:]).map { ($0.value["captions"], TranslationFields.formName("captions", $0.key) as String?) }
        for case let (hash?, formName) in files {
            guard let blob = try? await store.blob(hash) else {
                // No form: saved without its captions box filled, it would remove them.
                return ErrorPage.response(.serviceUnavailable, item.content.title,
                                          "The captions could not be read from the media store; reload the page in a moment.", context: context)
            }
            let text = String(decoding: blob.bytes, as: UTF8.self)
            if let formName { form.translations[formName] = text } else { form.captions = text }
        }
        return itemPage(item, form: form, context: context, notice: Notice.from(request))
    }

    /// Saves title, alt text, captions and transcript as `media.update`; pasted captions are checked and stored first.
    @Sendable func save(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let access = try await context.access(editors)
        try access.requireOwner("manage the media library")
        let item = try item(context)
        let form = MediaPages.ItemForm(title: context.form["title"], altText: context.form["altText"], transcript: context.form["transcript"],
                                       captions: context.form["captions"],
                                       translations: TranslationFields.values(context.form, fields: Self.formFields))
        var content = item.content
        content.title = form.title.trimmingCharacters(in: .whitespacesAndNewlines)
        // Each language's pasted captions become its captions file's hash and size, as the site language's do.
        var translated = form.translations.filter { TranslationFields.split($0.key)?.field != "captions" }
        var errors: [String: String] = [:]
        do {
            if content.format.kind == .image {
                content.altText = form.altText
            } else {
                content.transcript = form.transcript
                switch try await storeCaptions(form.captions) {
                case .invalid(let problem): errors["captions"] = problem
                case .stored(let hash, let size): (content.captions, content.captionsByteCount) = (hash, size)
                case .none: (content.captions, content.captionsByteCount) = (nil, nil)
                }
                for (name, text) in form.translations {
                    guard let (field, language) = TranslationFields.split(name), field == "captions" else { continue }
                    let sizeName = TranslationFields.formName("captionsByteCount", language)
                    switch try await storeCaptions(text) {
                    case .invalid(let problem): errors[name] = "\(language): \(problem)"
                    case .stored(let hash, let size): (translated[name], translated[sizeName]) = (hash, String(size))
                    case .none: (translated[name], translated[sizeName]) = ("", "")
                    }
                }
            }
        } catch {
            return itemPage(item, form: form, problem: "The captions could not be stored (\(error)); nothing was changed. Try again.",
                            context: context, status: .serviceUnavailable)
        }
        guard errors.isEmpty else { return itemPage(item, form: form, errors: errors, context: context, status: .unprocessableContent) }
        content.translations = MediaContent.tidy(TranslationFields.translations(translated, over: content.translations))
        let command = CatalogCommand(action: .updateMedia, actor: access.user.email, entityId: item.id,
                                     expectedVersion: context.form.int("version") ?? item.version, media: content)
        let result: CatalogCommandResult
        do {
            result = try await writer.execute(command, for: context)
        } catch {
            return itemPage(item, form: form, problem: error.description, context: context, status: .serviceUnavailable)
        }
        switch result.outcome {
        case .applied:
            return .redirect(to: "\(Self.path)/\(item.id.uuidString.lowercased())?notice=\(Notice.key("mediasaved", for: result))")
        case .conflict:
            let current = (try? self.item(context)) ?? item
            return itemPage(current, form: form, problem: "Someone else changed this file's details since you opened it. Your text is below; the saved version is in the library. Save again to replace it.",
                            context: context, status: .conflict)
        default:
            return itemPage(item, form: form, errors: fieldErrors(result.errors), problem: result.errors.isEmpty ? result.message : nil,
                            context: context, status: .unprocessableContent)
        }
    }

    private enum StoredCaptions {
        case none
        case stored(sha256: String, byteCount: Int)
        case invalid(String)
    }

    /// Pasted WebVTT checked and put in the media store; empty is none. The store's failure is thrown.
    private func storeCaptions(_ text: String) async throws -> StoredCaptions {
        let captions = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !captions.isEmpty else { return .none }
        if let problem = WebVTT.problem(captions) { return .invalid(problem) }
        let bytes = Array((captions + "\n").utf8)
        let hash = MediaHash.of(bytes)
        try await store.put(MediaBlob(sha256: hash, contentType: WebVTT.contentType, bytes: bytes))
        return .stored(sha256: hash, byteCount: bytes.count)
    }

    private func page(_ context: AdminRequestContext, error: String? = nil, notice: Notice? = nil,
                      status: HTTPResponse.Status = .ok) -> Response {
        AdminPage(title: "Media", context: context, breadcrumbs: [("Media", nil)], notice: notice,
                  body: MediaPages.library(projection.content.sortedMedia, feedPublicURL: feedPublicURL, maxBytes: maxBytes,
                                           error: error, csrf: context.csrfToken, languages: languages),
                  status: status).response()
    }

    @Sendable func list(_ request: Request, context: AdminRequestContext) async throws -> Response {
        try await context.access(editors).requireOwner("manage the media library")
        return page(context, notice: Notice.from(request))
    }

    @Sendable func upload(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let access = try await context.access(editors)
        try access.requireOwner("manage the media library")
        guard let file = context.form.files["file"], !file.data.isEmpty else {
            return page(context, error: "Choose a file to upload.", status: .unprocessableContent)
        }
        let upload: MediaUpload
        switch MediaUpload.check(file.data, fileName: file.fileName, maxBytes: maxBytes) {
        case .failure(let refusal): return page(context, error: refusal.message, status: .unprocessableContent)
        case .success(let checked): upload = checked
        }
        let title = context.form["title"].trimmingCharacters(in: .whitespacesAndNewlines)
        // An image's size and variants first: a file libvips cannot read is refused before anything is stored.
        var made: ImageVariants.Made?
        if upload.format.kind == .image {
            // Its size from the header alone, before anything decodes it: a small file can describe a huge picture.
            guard let size = ImageHeader.dimensions(file.data, format: upload.format) else {
                return page(context, error: "File: \(file.fileName) could not be read as \(upload.format.label); nothing was added.",
                            status: .unprocessableContent)
            }
            guard size.width * size.height <= maxPixels else {
                return page(context, error: "File: the picture is \(size.width) × \(size.height) pixels; the library takes pictures of at most "
                                + "\(Self.megapixels(maxPixels)) megapixels. Make it smaller and upload it again; nothing was added.",
                            status: .unprocessableContent)
            }
            do {
                made = try await images.make(file.data, format: upload.format)
            } catch {
                // libvips's own words are for the log, not the page.
                context.logger.warning("image refused by libvips", metadata: ["file": "\(file.fileName)", "error": "\(error)"])
                return page(context, error: "File: \(file.fileName) could not be read as \(upload.format.label); nothing was added.",
                            status: .unprocessableContent)
            }
        }
        do {
            try await store.put(MediaBlob(sha256: upload.sha256, contentType: upload.format.contentType, bytes: file.data))
            for variant in made?.variants ?? [] {
                try await store.put(MediaBlob(sha256: variant.sha256, contentType: MediaFormat.webp.contentType, bytes: variant.bytes))
            }
        } catch {
            return page(context, error: "The file could not be stored (\(error)); nothing was added. Try again.", status: .serviceUnavailable)
        }
        let content = MediaContent(sha256: upload.sha256, format: upload.format, byteCount: file.data.count, fileName: file.fileName,
                                   title: title.isEmpty ? file.fileName : title,
                                   altText: context.form["altText"].isEmpty ? nil : context.form["altText"],
                                   width: made?.width, height: made?.height,
                                   variants: made?.variants.map { .init(width: $0.width, height: $0.height, sha256: $0.sha256, byteCount: $0.bytes.count) } ?? [])
        return try await run(CatalogCommand(action: .createMedia, actor: access.user.email, entityId: UUID.random(), status: .published, media: content),
                             context: context, notice: "uploaded")
    }

    @Sendable func delete(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let access = try await context.access(editors)
        try access.requireOwner("manage the media library")
        guard let item = projection.content.media[try context.id("id")] else { throw AdminError.notFound("There is no such file in the library.") }
        return try await run(CatalogCommand(action: .deleteMedia, actor: access.user.email, entityId: item.id,
                                            expectedVersion: context.form.int("version") ?? item.version),
                             context: context, notice: "deleted")
    }

    /// Sends a command: back to the library with `notice` once applied, else the library with catalog's reason.
    private func run(_ command: CatalogCommand, context: AdminRequestContext, notice: String) async throws -> Response {
        let result: CatalogCommandResult
        do {
            result = try await writer.execute(command, for: context)
        } catch {
            return page(context, error: error.description, status: .serviceUnavailable)
        }
        guard result.outcome == .applied else {
            let message = result.errors.map(\.message).joined(separator: "; ")
            return page(context, error: message.isEmpty ? (result.message ?? "Nothing was changed.") : message,
                        status: result.outcome == .conflict ? .conflict : .unprocessableContent)
        }
        return .redirect(to: "\(Self.path)?notice=\(Notice.key(notice, for: result))")
    }
}

/// An uploaded file, checked: what its bytes are, and their hash.
struct MediaUpload: Equatable {
    let format: MediaFormat
    let sha256: String

    struct Refusal: Error, Equatable {
        let message: String
    }

    /// Refuses a file over the limit, one whose bytes are none of the library's formats, and one whose name
    /// announces another kind than its bytes are (a renamed file is usually a mistake).
    static func check(_ bytes: [UInt8], fileName: String, maxBytes: Int) -> Result<MediaUpload, Refusal> {
        guard bytes.count <= maxBytes else {
            return .failure(Refusal(message: "\(fileName) is \(ByteCountText.format(bytes.count)); the library takes files up to \(ByteCountText.format(maxBytes))."))
        }
        guard let format = MediaFormat.sniff(bytes) else {
            return .failure(Refusal(message: "\(fileName) is not a file the library takes: its bytes are \(MediaFormat.describe(unrecognized: bytes)). It takes \(MediaFormat.accepted)."))
        }
        if let announced = MediaFormat.kind(announcedBy: fileName), announced != format.kind {
            return .failure(Refusal(message: "\(fileName) is named as \(announced.rawValue) but its bytes are \(format.label); rename it or choose the right file."))
        }
        let hash = MediaHash.of(bytes)
        return .success(MediaUpload(format: format, sha256: hash))
    }
}

/// "2.4 MB", "512 KB", "300 bytes".
enum ByteCountText {
    static func format(_ bytes: Int) -> String {
        if bytes >= 1_000_000 { return String(format: "%.1f MB", Double(bytes) / 1_000_000) }
        if bytes >= 1_000 { return "\(bytes / 1_000) KB" }
        return bytes == 1 ? "1 byte" : "\(bytes) bytes"
    }
}
