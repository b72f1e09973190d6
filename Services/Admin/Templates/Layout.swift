import Foundation
import HTTPTypes
import Shared
import Hummingbird

/// The page shell every admin page shares: title, navigation for the signed-in role, breadcrumbs, notices.
/// Pages render their body as `HTML` and hand it here; reports pages (issue 5) do the same:
///
///     return AdminPage(title: "Reports", context: context, breadcrumbs: [("Reports", nil)], body: body).response()
struct AdminPage {
    var title: String
    var context: AdminRequestContext
    /// Trail from the home page, e.g. [("Tours Administration", "/tours"), ("Manage Tour", nil)].
    var breadcrumbs: [(String, String?)] = []
    var notice: Notice? = nil
    var body: HTML
    var status: HTTPResponse.Status = .ok
    /// Reloads the page every so many seconds (an import's progress, System Status) through admin.js, with a
    /// button to pause it (WCAG 2.2.1: a timed refresh the reader cannot stop is an accessibility failure); a meta
    /// refresh only where script does not run.
    var refreshSeconds: Int? = nil

    /// The Help section for this page: the menu entry its trail starts from.
    var helpTopic: String {
        let first = breadcrumbs.first?.0
        guard let item = NavigationItem.allCases.first(where: { $0.title == first || $0.title == title }) else { return "start" }
        return String(item.path.dropFirst())
    }

    func render() -> HTML {
        let session = context.session
        var nav: [HTML] = []
        if let user = session?.user {
            for item in NavigationItem.allCases where item.roles.contains(user.role) {
                nav.append("<li><a href=\"\(item.path)\">\(item.title)</a></li>")
            }
        }
        let account: HTML = session.map { session in
            """
            <div class="account"><span class="who">\(session.user.email) (\(session.user.role.title))</span>
            <a href="/help#\(helpTopic)">Help</a> <a href="/account">Account</a>
            <form method="post" action="/logout" class="inline">\(Forms.csrf(session.csrfToken))<button type="submit" class="link">Log Out</button></form></div>
            """
        } ?? .empty
        let trail: HTML = breadcrumbs.isEmpty ? .empty : """
            <nav class="breadcrumbs" aria-label="You are here">\(breadcrumbs.enumerated().map { index, crumb -> HTML in
                let separator: HTML = index == 0 ? .empty : " &gt; "
                if let link = crumb.1 { return "\(separator)<a href=\"\(link)\">\(crumb.0)</a>" }
                return "\(separator)<span aria-current=\"page\">\(crumb.0)</span>"
            })</nav>
            """
        return """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>iTour UNCW – \(title)</title>
            <link rel="stylesheet" href="/assets/admin.css">
            <script src="/assets/admin.js" defer></script>
            \(refreshSeconds.map { "<noscript><meta http-equiv=\"refresh\" content=\"\($0)\"></noscript>" as HTML })
            </head>
            <body>
            <a class="skip-link" href="#content">Skip to content</a>
            <header class="site">
            <a class="brand" href="/">iTour <span>admin</span></a>
            <nav class="main" aria-label="Main"><ul>\(nav)</ul></nav>
            \(account)
            </header>
            <main id="content" tabindex="-1">
            \(trail)
            \(notice.map { "<p class=\"notice \($0.kind.rawValue)\" role=\"status\">\($0.text)</p>" as HTML })
            \(refreshSeconds.map { seconds -> HTML in
                """
                <p class="refresh muted" data-refresh="\(seconds)">This page refreshes itself every \(counted(seconds, "second")). \
                <button type="button" class="link" data-refresh-toggle hidden>Pause updates</button> <a href="">Refresh now</a></p>
                """
            })
            \(body)
            </main>
            </body>
            </html>
            """
    }

    func response() -> Response {
        Response(status: status, headers: [.contentType: "text/html; charset=utf-8"],
                 body: .init(byteBuffer: ByteBuffer(string: render().rendered)))
    }
}

/// The main navigation, each entry with the roles that see it (the routes check the roles again).
enum NavigationItem: CaseIterable {
    case tours, pois, categories, calendar, people, pages, featured, media, importContent, translations, users, reports, status

    var title: String {
        switch self {
        case .tours: "Tours Administration"
        case .pois: "Points of Interest"
        case .categories: "Categories"
        case .calendar: "Calendar"
        case .people: "People"
        case .pages: "Pages"
        case .featured: "Featured"
        case .media: "Media"
        case .importContent: "Import"
        case .translations: "Translations"
        case .users: "Users"
        case .reports: "Reports"
        case .status: "System Status"
        }
    }

    var path: String {
        switch self {
        case .tours: "/tours"
        case .pois: "/pois"
        case .categories: "/categories"
        case .calendar: "/calendar"
        case .people: "/people"
        case .pages: "/pages"
        case .featured: "/featured"
        case .media: "/media"
        case .importContent: "/import"
        case .translations: "/translations"
        case .users: "/users"
        case .reports: "/reports"
        case .status: "/status"
        }
    }

    var roles: Set<Role> {
        switch self {
        case .tours: [.owner, .editor]
        case .pois, .categories, .calendar, .people, .pages, .featured, .media, .importContent, .translations, .users, .status: [.owner]
        case .reports: [.owner, .viewer]
        }
    }
}

/// A message above the page. After a POST the redirect names one by key (`?notice=saved`), so no
/// user text travels in URLs.
struct Notice {
    enum Kind: String { case success, error, warning }

    var kind: Kind
    var text: String

    static func success(_ text: String) -> Notice { Notice(kind: .success, text: text) }
    static func error(_ text: String) -> Notice { Notice(kind: .error, text: text) }
    static func warning(_ text: String) -> Notice { Notice(kind: .warning, text: text) }

    static let byKey: [String: Notice] = [
        "saved": .success("Saved."),
        "created": .success("Created."),
        "deleted": .success("Deleted."),
        "deleted-restorable": .success("Deleted. Changed your mind? An owner can restore it from Recently deleted (on the Tours and Points of Interest lists) for 30 days."),
        "restored": .success("Restored as an unpublished draft: check it, then publish it again."),
        "restored-already": .warning("It was restored already (and may have been changed since): this is how it is now."),
        "published": .success("Published: the tour is on the phones' feed."),
        "unpublished": .success("Unpublished: the tour is no longer on the feed."),
        "archived": .success("Archived."),
        "stops": .success("Stops saved."),
        "editors": .success("Editors saved."),
        "password": .success("Password changed."),
        "user": .success("User saved."),
        "link": .success("Links saved."),
        "loggedout": .success("You have logged out."),
        "discarded": .success("Unpublished changes discarded: the page shows the published version again."),
        "poipublished": .success("Published: the phones show this point of interest's changes."),
        "placepublished": .success("Published as a place: phones find this point of interest with or without a tour."),
        "placeunpublished": .success("Unpublished as a place: phones see it only as a stop of a published tour."),
        "reverted": .success("Reverted: that version's content is back, as a new version (History shows both)."),
        "scheduled": .success("Scheduled: catalog will make the change at that time, whether or not anyone is logged in."),
        "unscheduled": .success("Schedule cancelled."),
        "eventpublished": .success("Published: the event is in the phones' calendar and calendar.ics."),
        "eventunpublished": .success("Unpublished: the event is no longer in the phones' calendar."),
        "personpublished": .success("Published: the person is in the phones' directory."),
        "personunpublished": .success("Unpublished: the person is no longer in the phones' directory."),
        "pagepublished": .success("Published: the page is in the phones' menu of pages."),
        "pageunpublished": .success("Unpublished: the page is no longer on phones."),
        "featuredpublished": .success("Published: the item is on the phones' home screen."),
        "featuredunpublished": .success("Unpublished: the item is no longer on the phones' home screen."),
        "mediasaved": .success("Saved: the file's details are on the feed."),
        "uploaded": .success("Uploaded: the file is in the library and on the feed at its address."),
        "repeat": .success("Already saved: this form had been sent before, so nothing was changed a second time."),
    ]

    /// `key`, or "repeat" when `result` answers a form sent before (Back + Save, a double click).
    static func key(_ key: String, for result: CatalogCommandResult) -> String {
        result.repeated == true ? "repeat" : key
    }

    /// The notice a `?notice=` key names, if any.
    static func from(_ request: Request) -> Notice? {
        request.uri.queryParameters.get("notice").flatMap { byKey[$0] }
    }
}

/// A page for an error, in the layout.
enum ErrorPage {
    static func response(_ status: HTTPResponse.Status, _ title: String, _ message: String, context: AdminRequestContext) -> Response {
        let home: HTML = context.session == nil ? "<a href=\"/login\">Log in</a>" : "<a href=\"/\">Back to the start page</a>"
        let body: HTML = """
            <h1>\(title)</h1>
            <p class="error-message">\(message)</p>
            <p>\(home)</p>
            """
        return AdminPage(title: title, context: context, body: body, status: status).response()
    }
}
