import Foundation
import Shared

/// "Help" (`/help`): how each part of the admin works, one section per menu entry. Every page's header links to its
/// own section (`AdminPage.helpTopic`). Written in Markdown and rendered by the feed's own renderer, as pages are.
enum HelpPages {
    struct Topic {
        var id: String
        var title: String
        var markdown: String
    }

    static let topics: [Topic] = [
        Topic(id: "start", title: "Getting started", markdown: """
            Build a tour in three steps: **create the tour** (Tours Administration → Create New Tour), **add its stops**
            (each stop is a point of interest: pick it on the map, give it a description, pictures and narration), then
            **publish** it. Nothing reaches phones until it is published; after that, edits wait as unpublished changes
            until you press *Publish changes*. Every change is kept in the item's **History**, and any version can be
            brought back with *Revert*.
            """),
        Topic(id: "tours", title: "Tours and stops", markdown: """
            - **Stops** are walked in the order of the list: *Move up* and *Move down* change it; the map shows the route.
            - **Publish** sends the tour and its stops to phones. A published tour's edits (its own and its stops') are
              kept as **unpublished changes**: the banner names them, with *Publish changes* and a *Discard* for each.
            - **Schedule publishing** publishes (or unpublishes) at a time you choose, in the site's time zone, which
              the form names. Catalog makes the change at that time whether or not anyone is logged in.
            - **Preview** shows the tour as phones will once it is published; **QR codes** prints a code per stop.
            - A stop far from the others is flagged: a minus sign left out of a longitude puts it on another continent.
            - **Several at once**: tick tours in the list, then *Publish selected*, *Unpublish selected* or *Delete
              selected*. Each is checked as on its own page; the list says what was done and what was not, and why.
            - Deleted a tour or a place by mistake? An owner restores it from **Recently deleted** (on the Tours and Points of Interest lists) for
              30 days: it comes back unpublished, to check and publish again.
            """),
        Topic(id: "pois", title: "Points of interest", markdown: """
            A point of interest is a stop of one or more tours, or a place on its own (*Publish as a place*). **Pictures**:
            one per line, its address (*Choose pictures from the media library* under the field adds one), then its alt text, which describes the picture for people who
            cannot see it. **Narration**: an audio file from the Media page, with its transcript.
            """),
        Topic(id: "categories", title: "Categories", markdown: """
            Categories group places on phones (*Eat/Cafés*). Renaming one renames its subcategories and moves its places.
            """),
        Topic(id: "calendar", title: "Calendar", markdown: """
            An event happens once or repeats (daily, weekly on the days ticked, monthly). *Next occurrences* lists the next
            dates with their weekdays: check them before you save. *Skipped dates* leaves single dates out.
            """),
        Topic(id: "people", title: "People", markdown: """
            Staff and guides visitors can look up. An office chosen among the places shows on phones once that place is on
            phones; until then the form says what phones show instead.
            """),
        Topic(id: "pages", title: "Pages", markdown: """
            Pages are written in Markdown: `# Heading`, `**bold**`, `*italic*`, `- item` for a list, `[text](https://…)`
            for a link. The preview below the form shows the saved text as phones show it.
            """),
        Topic(id: "featured", title: "Featured", markdown: """
            Featured items are what the app's home screen puts first: a tour, a place, an event or a page, with a title and
            text of your own, in the order of the list.
            """),
        Topic(id: "media", title: "Media", markdown: """
            Upload pictures and audio once, then use their address in any stop. Pictures are resized for phones; a file
            larger than the site's limit is refused with its size.
            """),
        Topic(id: "import", title: "Import", markdown: """
            Import many places and tours at once from a CSV or JSON file. Start from the sample CSV on the Import page. If
            any row has a problem nothing is imported, unless you tick *Skip bad rows*; the report names each row's fate.
            Importing the same file again changes nothing, and never overwrites what you changed since: where the file no
            longer matches (a stop added in the file), the report says so; make the change on the item's page.
            """),
        Topic(id: "users", title: "Users", markdown: """
            **Owners** manage everything; **editors** edit the tours they are given; **viewers** see reports only.
            """),
        Topic(id: "reports", title: "Reports", markdown: """
            Reports count what visitors' phones sent: tour starts and completions, stop views and visits, searches. Days are
            whole UTC days, as analytics counts them. Choose a tour to see its figures; searches and "Most viewed" are
            counted on every tour. Each table downloads as a CSV whose file name says its days, tour and up to when it was
            counted.
            """),
        Topic(id: "status", title: "System Status", markdown: """
            Each service's health, updated every 2 seconds (*Pause updates* stops that). A service shown down for more than a
            few seconds needs your operations team.
            """),
    ]

    static func page() -> HTML {
        let contents: [HTML] = topics.map { "<li><a href=\"#\($0.id)\">\($0.title)</a></li>" }
        let sections: [HTML] = topics.map { topic in
            "<section id=\"\(topic.id)\" class=\"help\"><h2>\(topic.title)</h2>\(HTML(trusted: PageMarkdown.html(topic.markdown)))</section>"
        }
        return """
            <h1>Help</h1>
            <nav aria-label="Help topics"><ul class="help-topics">\(contents)</ul></nav>
            \(sections)
            """
    }
}
