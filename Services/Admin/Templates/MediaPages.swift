import Foundation
import Shared

/// The media library's page: the upload form and the files (DESIGN.md, "Media library").
enum MediaPages {
    static func library(_ items: [MediaState], feedPublicURL: String, maxBytes: Int, error: String?, csrf: String) -> HTML {
        let rows: [HTML] = items.map { item in
            let content = item.content
            let url = "\(feedPublicURL)/v1/media/\(content.sha256)"
            let preview: HTML = content.format.kind == .image
                ? "<img class=\"media-preview\" src=\"\(url)?w=320\" alt=\"\(content.altText ?? "")\" loading=\"lazy\">"
                : "<span class=\"muted\">\(content.format.label)</span>"
            let size: HTML = content.width.map { width in " · \(String(width))×\(String(content.height ?? 0)) px" as HTML } ?? .empty
            return """
                <tr><td>\(preview)</td><td>\(content.title)<br><span class="muted">\(content.fileName)</span></td>
                <td>\(content.format.label)<br><span class="muted">\(ByteCountText.format(content.byteCount))\(size)</span></td>
                <td><a href="\(url)"><code>/v1/media/\(String(content.sha256.prefix(12)))…</code></a></td>
                <td>\(Forms.post("/media/\(item.id.uuidString.lowercased())/delete", csrf: csrf, """
                    \(Forms.hidden("version", String(item.version)))<button class="danger" type="submit">Delete</button>
                    """))</td></tr>
                """
        }
        let table: HTML = rows.isEmpty ? "<p class=\"muted\">No files yet.</p>" : """
            <table><thead><tr><th scope="col">Preview</th><th scope="col">Title</th><th scope="col">Kind</th><th scope="col">Address</th>
            <th scope="col">Actions</th></tr></thead><tbody>\(rows)</tbody></table>
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
}
