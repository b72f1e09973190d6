import Foundation
import Shared

/// Pieces several pages share: the delete confirmation, the conflict box, status badges.
enum CommonPages {
    /// "Are you sure you want to delete?" as a page: deleting works without JavaScript, and a Cancel goes back.
    /// A time for people, in the site's zone with the zone named (`2026-12-01 09:00 EST`), machine-readable in `datetime`.
    static func time(_ date: Date, clock: SiteClock, seconds: Bool = false) -> HTML {
        "<time datetime=\"\(RFC3339.format(date))\">\(clock.text(date, seconds: seconds))</time>"
    }

    static func confirmDelete(what: String, detail: HTML = .empty, action: String, cancel: String, version: Int?, csrf: String) -> HTML {
        let versionField: HTML = version.map { Forms.hidden("version", String($0)) } ?? .empty
        return """
            <h1>Delete \(what)</h1>
            <p class="confirm-question"><strong>Are you sure you want to delete?</strong></p>
            \(detail)
            <div class="actions">
            \(Forms.post(action, csrf: csrf, class: "inline", versionField + Forms.submit("Delete", class: "danger")))
            <a class="button" href="\(cancel)">Cancel</a>
            </div>
            """
    }

    /// A change that is not a form's fields (stops, status, delete) lost a race: say what happened and what now.
    static func staleBox(entity: String, author: ChangeAuthors.Author?, version: Int?, consequence: String) -> HTML {
        """
        <div class="conflict" role="alert">
        <p><strong>This \(entity) was changed \(ChangeAuthors.describe(author)) since this page was opened\(version.map { " (it is now version \($0))" } ?? "").</strong>
        \(consequence)</p>
        </div>
        """
    }

    /// A problem talking to catalog (down, or the broker unreachable), above the form that keeps what was typed.
    static func unavailableBox(_ message: String) -> HTML {
        "<div class=\"notice error\" role=\"alert\"><p><strong>Not saved yet.</strong> \(message)</p></div>"
    }

    static func statusBadge(_ status: ContentStatus) -> HTML {
        "<span class=\"status \(status.rawValue)\">\(statusLabel(status))</span>"
    }

    static func statusLabel(_ status: ContentStatus) -> String {
        switch status {
        case .draft: "Draft"
        case .published: "Published"
        case .archived: "Archived"
        }
    }

    static func coordinates(_ poi: PoiContent) -> String {
        String(format: "%.6f, %.6f", poi.latitude, poi.longitude)
    }
}
