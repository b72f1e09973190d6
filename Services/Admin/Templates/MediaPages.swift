import Foundation
import Shared

/// The media library's page: the upload form and the files (DESIGN.md, "Media library").
enum MediaPages {
    static func library(_ items: [MediaState], feedPublicURL: String, maxBytes: Int, error: String?, csrf: String,
                        languages: SiteLanguages = .english) -> HTML {
        let rows: [HTML] = items.map { item in
            let content = item.content
            let url = "\(feedPublicURL)/v1/media/\(content.sha256)"
            let preview: HTML = content.format.kind == .image
                ? "<img class=\"media-preview\" src=\"\(url)?w=320\" alt=\"\(content.altText ?? "")\" loading=\"lazy\">"
                : "<span class=\"muted\">\(content.format.label)</span>"
            let size: HTML = content.width.map { width in " · \(String(width))×\(String(content.height ?? 0)) px" as HTML } ?? .empty
            return """
                <tr><td>\(preview)</td><td><a href="/media/\(item.id.uuidString.lowercased())">\(content.title)</a>\(gap(content))<br><span class="muted">\(content.fileName)</span></td>
                <td>\(content.format.label)<br><span class="muted">\(ByteCountText.format(content.byteCount))\(size)</span></td>
                <td><a href="\(url)"><code>/v1/media/\(String(content.sha256.prefix(12)))…</code></a></td>
                \(TranslationFields.missingCell(content, languages: languages))<td>\(Forms.post("/media/\(item.id.uuidString.lowercased())/delete", csrf: csrf, """
                    \(Forms.hidden("version", String(item.version)))<button class="danger" type="submit">Delete</button>
                    """))</td></tr>
                """
        }
        let table: HTML = rows.isEmpty ? "<p class=\"muted\">No files yet.</p>" : """
            <table><thead><tr><th scope="col">Preview</th><th scope="col">Title</th><th scope="col">Kind</th><th scope="col">Address</th>
            \(TranslationFields.missingHeader(languages))<th scope="col">Actions</th></tr></thead><tbody>\(rows)</tbody></table>
            """
        let problem: HTML = error.map { "<p class=\"notice error\" role=\"alert\">\($0)</p>" as HTML } ?? .empty
        return """
            <h1>Media</h1>
            <p>Pictures, audio and video kept here rather than linked from elsewhere: each has an address on the feed,
            <code>\(feedPublicURL)/v1/media/…</code>, to use in a point of interest's pictures or links.</p>
            \(problem)
            \(Forms.post("/media", csrf: csrf, class: "media-upload", multipart: true, """
                <div class="field"><label for="field-file">File</label>
                <input type="file" id="field-file" name="file" required accept=".jpg,.jpeg,.png,.webp,.mp3,.aac,.m4a,.opus,.ogg,.mp4,.m4v"
                 data-max-bytes="\(String(maxBytes))" data-max-label="\(ByteCountText.format(maxBytes))">
                <p class="hint">\(MediaFormat.accepted); up to \(ByteCountText.format(maxBytes)).</p></div>
                \(Forms.text("Title", name: "title", value: "", hint: "Shown in this list; the file's name when left empty."))
                \(Forms.text("Alternative text", name: "altText", value: "", hint: "For a picture: what it shows, for people who cannot see it."))
                <progress class="upload-progress" max="100" value="0" hidden></progress>
                <div class="actions">\(Forms.submit("Upload"))</div>
                """))
            <h2>Files</h2>
            \(table)
            """
    }

    /// "needs alt text" and the like, for the list: what publishing a stop that uses the file would ask for.
    static func gap(_ content: MediaContent) -> HTML {
        let missing = content.format.kind == .image ? ((content.altText ?? "").isEmpty ? "has no alt text" : nil) : content.accessibilityGap
        return missing.map { "<br><span class=\"badge warning\">\($0)</span>" as HTML } ?? .empty
    }

    /// What the item page's form holds.
    struct ItemForm {
        var title = ""
        var altText = ""
        var transcript = ""
        var captions = ""
        /// Translations by form name, `title@es` (DESIGN.md "Languages").
        var translations: [String: String] = [:]
    }

    /// One file's page: its details to edit (title, alt text; for audio and video captions and a transcript).
    static func item(_ item: MediaState, form: ItemForm, feedPublicURL: String, usedBy: [PoiState], errors: [String: String], problem: String?,
                     csrf: String, languages: SiteLanguages = .english) -> HTML {
        let content = item.content
        let url = "\(feedPublicURL)/v1/media/\(content.sha256)"
        let preview: HTML = switch content.format.kind {
        case .image: "<img class=\"media-preview large\" src=\"\(url)?w=640\" alt=\"\(content.altText ?? "")\">"
        case .audio: "<audio controls preload=\"none\" src=\"\(url)\"></audio>"
        case .video: "<video controls preload=\"none\" width=\"480\" src=\"\(url)\"></video>"
        }
        let timed = content.format.kind != .image
        let fields: HTML = Forms.text("Title", name: "title", value: form.title, error: errors["title"], required: true)
            + (timed ? .empty : Forms.textarea("Alternative text", name: "altText", value: form.altText, error: errors["altText"], rows: 2,
                                               hint: "What the picture shows, for people who cannot see it. Stops using it cannot be published without it (unless they give their own)."))
            + (timed ? Forms.textarea("Captions (WebVTT)", name: "captions", value: form.captions, error: errors["captions"], rows: 8,
                                      hint: "Paste the WebVTT file: it starts with WEBVTT, then cues such as 00:00.000 --> 00:04.000 and their text. \(content.format.kind == .video ? "Video needs captions before a stop using it is published." : "Audio needs captions or a transcript before a stop using it is published.")")
                       + Forms.textarea("Transcript", name: "transcript", value: form.transcript, error: errors["transcript"], rows: 8,
                                        hint: "Everything said, as text; phones show it under the player.")
                     : .empty)
        let problemBox: HTML = problem.map { "<p class=\"notice error\" role=\"alert\">\($0)</p>" as HTML } ?? .empty
        let uses: [HTML] = usedBy.map { "<li><a href=\"/pois/\($0.id.uuidString.lowercased())\">\($0.working.name)</a></li>" }
        let usedList: HTML = uses.isEmpty ? "<p class=\"muted\">No point of interest uses this file.</p>"
            : "<h2>Used by</h2><p>Deleting or unpublishing it takes it off these points of interest; publishing them needs it published.</p><ul>\(uses)</ul>"
        return """
            <h1>\(content.title)</h1>
            <p class="muted">\(content.fileName) · \(content.format.label) · \(ByteCountText.format(content.byteCount)) · <a href="\(url)"><code>/v1/media/\(String(content.sha256.prefix(12)))…</code></a></p>
            \(preview)
            \(problemBox)
            \(Forms.post("/media/\(item.id.uuidString.lowercased())", csrf: csrf, """
                \(Forms.hidden("version", String(item.version)))
                \(fields)
                \(translations(form, kind: content.format.kind, languages: languages, errors: errors))
                <div class="actions">\(Forms.submit("Save"))<a href="/media">Back to the library</a></div>
                """))
            \(usedList)
            """
    }

    /// The item's translation fieldsets: its title, and its alternative text (pictures) or captions and transcript (audio, video).
    static func translations(_ form: ItemForm, kind: MediaFormat.Kind, languages: SiteLanguages, errors: [String: String]) -> HTML {
        let fields = [TranslationFields.Field(name: "title", label: "Title", rows: 1)]
            + (kind == .image ? [.init(name: "altText", label: "Alternative text", rows: 2)]
                : [.init(name: "captions", label: "Captions (WebVTT)", rows: 6), .init(name: "transcript", label: "Transcript", rows: 6)])
        let siteTexts = ["title": form.title, "altText": form.altText, "transcript": form.transcript, "captions": form.captions]
        return TranslationFields.fieldsets(fields, languages: languages, siteText: { siteTexts[$0] ?? "" }, values: form.translations, errors: errors)
    }
}
