import Foundation
import Shared

/// What the event form holds, as typed (DESIGN.md, "Calendar"; the original vocabulary: "Create New Event", "Manage Event").
struct CalendarForm: AdminRecordForm, TranslatingForm {
    var title = ""
    var summary = ""
    var description = ""
    var startsAt = ""
    var endsAt = ""
    var timeZone = "UTC"
    var allDay = false
    var placePoiId = ""
    var placeText = ""
    var url = ""
    var registrationUrl = ""
    var categories: [String] = []
    /// "", daily, weekly, monthly.
    var frequency = ""
    var interval = ""
    var byDay: [String] = []
    var count = ""
    var until = ""
    /// One per line.
    var exceptionDates = ""
    /// Translations by form name, `title@es` (DESIGN.md "Languages").
    var translations: [String: String] = [:]
    var version: Int?

    static let fields: Set<String> = ["title", "summary", "description", "startsAt", "endsAt", "timeZone", "placePoiId", "placeText", "url",
                                      "registrationUrl", "categories", "recurrence", "exceptionDates"]

    static let translatedFields = [
        TranslationFields.Field(name: "title", label: "Title", rows: 1), .init(name: "summary", label: "Summary", rows: 2),
        .init(name: "description", label: "Description", rows: 6),
    ]

    var siteTexts: [String: String] { ["title": title, "summary": summary, "description": description] }

    init(timeZone: String = "UTC") { self.timeZone = timeZone }

    init(_ entry: CalendarEntryState) {
        let content = entry.content
        title = content.title
        summary = content.summary
        description = content.description
        startsAt = content.startsAt
        endsAt = content.endsAt
        timeZone = content.timeZone
        allDay = content.allDay
        placePoiId = content.placePoiId?.uuidString.lowercased() ?? ""
        placeText = content.placeText ?? ""
        url = content.url ?? ""
        registrationUrl = content.registrationUrl ?? ""
        categories = content.categories
        frequency = content.recurrence?.frequency.rawValue ?? ""
        interval = content.recurrence?.interval.map(String.init) ?? ""
        byDay = content.recurrence?.byDay ?? []
        count = content.recurrence?.count.map(String.init) ?? ""
        until = content.recurrence?.until ?? ""
        exceptionDates = content.exceptionDates.joined(separator: "\n")
        translations = TranslationFields.values(content.translations)
        version = entry.version
    }

    init(_ form: FormData) {
        title = form["title"]
        summary = form["summary"]
        description = form["description"]
        startsAt = form["startsAt"]
        endsAt = form["endsAt"]
        timeZone = form["timeZone"]
        allDay = form["allDay"] == "1"
        placePoiId = form["placePoiId"]
        placeText = form["placeText"]
        url = form["url"]
        registrationUrl = form["registrationUrl"]
        categories = form.all("categories").filter { !$0.isEmpty }
        frequency = form["frequency"]
        interval = form["interval"]
        byDay = form.all("byDay").filter { !$0.isEmpty }
        count = form["count"]
        until = form["until"]
        exceptionDates = form["exceptionDates"]
        translations = TranslationFields.values(form, fields: CalendarEntryContent.translatableFields)
        version = form.int("version")
    }

    /// The content to send, or the errors of fields that cannot even be sent (a number that is not one).
    func content() -> Result<CalendarEntryContent, FieldErrors> { content(replacing: nil) }

    func content(replacing stored: CalendarEntryContent?) -> Result<CalendarEntryContent, FieldErrors> {
        func trimmed(_ text: String) -> String { text.trimmingCharacters(in: .whitespacesAndNewlines) }
        func optional(_ text: String) -> String? { trimmed(text).isEmpty ? nil : trimmed(text) }
        // A browser's datetime-local sends 2026-12-05T09:00; an all-day entry keeps the date.
        func when(_ text: String) -> String { allDay ? String(trimmed(text).prefix(10)) : trimmed(text) }
        var errors: [String: String] = [:]
        var recurrence: CalendarRecurrence?
        if let frequency = CalendarRecurrence.Frequency(rawValue: frequency) {
            func number(_ text: String, _ message: String) -> Int? {
                guard let text = optional(text) else { return nil }
                guard let value = Int(text) else { errors["recurrence"] = message; return nil }
                return value
            }
            recurrence = CalendarRecurrence(frequency: frequency, interval: number(interval, "Repeat every must be a whole number"),
                                            byDay: frequency == .weekly && !byDay.isEmpty ? byDay : nil,
                                            count: number(count, "Occurrences must be a whole number"), until: optional(until))
        } else if !frequency.isEmpty {
            errors["recurrence"] = "Repeats must be never, daily, weekly or monthly"
        }
        var place: UUID?
        if let text = optional(placePoiId) {
            guard let id = UUID(uuidString: text) else { return .failure(FieldErrors(byField: ["placePoiId": "Choose a point of interest from the list"])) }
            place = id
        }
        guard errors.isEmpty else { return .failure(FieldErrors(byField: errors)) }
        return .success(CalendarEntryContent(
            title: trimmed(title), summary: trimmed(summary), description: trimmed(description), startsAt: when(startsAt), endsAt: when(endsAt),
            timeZone: trimmed(timeZone), allDay: allDay, placePoiId: place, placeText: optional(placeText), url: optional(url),
            registrationUrl: optional(registrationUrl), categories: categories, recurrence: recurrence,
            exceptionDates: exceptionDates.split(whereSeparator: \.isNewline).map { when(String($0)) }.filter { !$0.isEmpty },
            translations: TranslationFields.translations(translations, over: stored?.translations)))
    }
}

/// The calendar's pages (owners), in the original vocabulary.
enum CalendarPages: AdminRecordKind {
    static var path: String { "/calendar" }
    static var section: String { "Calendar" }
    static var task: String { "manage the calendar" }
    static var createTitle: String { "Create New Event" }
    static var manageTitle: String { "Manage Event" }
    static var deleteTitle: String { "Delete Event" }
    static var notFound: String { "There is no such event." }
    static var publishedNotice: String { "eventpublished" }
    static var unpublishedNotice: String { "eventunpublished" }

    /// In the zone of the entry edited last: a site's events are mostly in one.
    static func newForm(_ catalog: AdminCatalogProjection.Content) -> CalendarForm {
        CalendarForm(timeZone: catalog.calendar.values.max { $0.updatedAt < $1.updatedAt }?.content.timeZone ?? "UTC")
    }

    static func list(_ catalog: AdminCatalogProjection.Content, search: ListSearch, csrf: String, languages: SiteLanguages) -> HTML {
        let entries = catalog.sortedCalendar.filter { search.matches($0.content.title, $0.content.summary, $0.content.placeText ?? "") }
        let rows: [HTML] = entries.map { entry in
            let path = "/calendar/\(entry.id.uuidString.lowercased())"
            return """
                <tr><td><a href="\(path)">\(entry.content.title)</a></td><td>\(when(entry.content))</td><td>\(repeats(entry.content))</td>
                <td>\(entry.status == .published ? "Published" : "Draft")</td>\(TranslationFields.missingCell(entry.content, languages: languages))
                <td><a href="\(path)">Manage Event</a> <a class="danger" href="\(path)/delete">Delete</a></td></tr>
                """
        }
        let table: HTML = search.outcome(rows.count, "event", none: "No events yet.") + (rows.isEmpty ? .empty : """
            <table><thead><tr><th scope="col">Event</th><th scope="col">When</th><th scope="col">Repeats</th><th scope="col">Status</th>
            \(TranslationFields.missingHeader(languages))<th scope="col">Actions</th></tr></thead><tbody>\(rows)</tbody></table>
            """ as HTML)
        return """
            <h1>Calendar</h1>
            <p>Events phones show in the calendar and subscribe to (<code>/v1/calendar.ics</code> on the feed), once published.</p>
            <p><a class="button primary" href="/calendar/new">Create New Event</a></p>
            \(search.form(action: "/calendar", label: "Search events"))
            \(table)
            """
    }

    static func when(_ content: CalendarEntryContent) -> String {
        let start = content.startsAt.replacingOccurrences(of: "T", with: " ")
        return content.allDay ? "\(start) (all day)" : "\(start) \(content.timeZone)"
    }

    static func repeats(_ content: CalendarEntryContent) -> String {
        guard let recurrence = content.recurrence else { return "No" }
        let every = (recurrence.interval ?? 1) > 1 ? "every \(recurrence.interval!) " : ""
        let unit = ["daily": every.isEmpty ? "Daily" : "\(every)days", "weekly": every.isEmpty ? "Weekly" : "\(every)weeks",
                    "monthly": every.isEmpty ? "Monthly" : "\(every)months"][recurrence.frequency.rawValue] ?? ""
        let days = recurrence.byDay.map { " on " + $0.joined(separator: ", ") } ?? ""
        let end = recurrence.count.map { ", \($0) times" } ?? recurrence.until.map { ", until \($0)" } ?? ""
        return unit.prefix(1).uppercased() + unit.dropFirst() + days + end
    }

    static func form(_ model: RecordFormModel<Self>) -> HTML {
        let form = model.form, errors = model.errors
        let zones = TimeZone.knownTimeZoneIdentifiers.sorted().map { (value: $0, label: $0) }
        let places = [(value: "", label: "(none: use the text below)")] + model.catalog.placeOptions
        let dayBoxes: [HTML] = zip(CalendarSchedule.weekdayCodes, ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]).map { code, name in
            let id = "field-byDay-\(code)"
            let mark: HTML = form.byDay.contains(code) ? " checked" : .empty
            // The box before its own name, on one line: a block label put each box under the previous day's name.
            return "<span class=\"day\"><input type=\"checkbox\" id=\"\(id)\" name=\"byDay\" value=\"\(code)\"\(mark)><label for=\"\(id)\">\(name)</label></span>"
        }
        let fields: HTML = Forms.text("Title", name: "title", value: form.title, error: errors["title"], required: true)
            + Forms.textarea("Summary", name: "summary", value: form.summary, error: errors["summary"], rows: 2)
            + Forms.textarea("Description", name: "description", value: form.description, error: errors["description"], rows: 5)
            + Forms.checkbox("All day", name: "allDay", checked: form.allDay, hint: "Starts and Ends are then dates; Ends is the last day.")
            + Forms.text("Starts", name: "startsAt", value: form.startsAt, error: errors["startsAt"], required: true,
                         hint: "Local time, e.g. 2026-12-05T09:00 (or 2026-12-05 all day)")
            + Forms.text("Ends", name: "endsAt", value: form.endsAt, error: errors["endsAt"], required: true, hint: "e.g. 2026-12-05T16:00")
            + Forms.select("Time zone", name: "timeZone", options: zones, selected: form.timeZone, error: errors["timeZone"])
            + Forms.select("Place", name: "placePoiId", options: places, selected: form.placePoiId, error: errors["placePoiId"])
            + Forms.text("Place (text)", name: "placeText", value: form.placeText, error: errors["placeText"], hint: "When the place is no point of interest.")
            + Forms.text("Link", name: "url", value: form.url, error: errors["url"], type: "url")
            + Forms.text("Registration link", name: "registrationUrl", value: form.registrationUrl, error: errors["registrationUrl"], type: "url")
            + Forms.multiSelect("Categories", name: "categories", options: model.catalog.sortedCategories.map { ($0.path, $0.path) }, selected: form.categories,
                                error: errors["categories"])
            + """
            <fieldset><legend>Repeats</legend>
            \(Forms.select("Repeats", name: "frequency", options: [("", "Never"), ("daily", "Daily"), ("weekly", "Weekly"), ("monthly", "Monthly")],
                           selected: form.frequency, error: errors["recurrence"]))
            \(Forms.text("Every", name: "interval", value: form.interval, hint: "1 (every day, week or month), 2 (every other) …", attributes: " inputmode=\"numeric\""))
            <fieldset class="days"><legend>On days (weekly)</legend><div class="day-boxes">\(dayBoxes)</div></fieldset>
            \(Forms.text("Occurrences", name: "count", value: form.count, hint: "How many times in all; or give Until.", attributes: " inputmode=\"numeric\""))
            \(Forms.text("Until", name: "until", value: form.until, hint: "The last day it may happen, e.g. 2027-06-30."))
            \(Forms.textarea("Skipped dates", name: "exceptionDates", value: form.exceptionDates, error: errors["exceptionDates"], rows: 2,
                             hint: "Starts that do not happen, one per line, written as Starts is (e.g. 2026-12-24T10:00)."))
            </fieldset>
            """
        var more: HTML = .empty
        if let entry = model.record {
            let schedule = CalendarSchedule(entry.content)
            let weekday = DateFormatter()
            weekday.locale = Locale(identifier: "en_US_POSIX")
            weekday.timeZone = schedule?.timeZone
            weekday.dateFormat = "EEE"
            // With its weekday: a date alone does not show a rule that picked the wrong days.
            let next: [HTML] = (schedule?.occurrences(overlapping: Date(), .distantFuture, limit: 5) ?? [])
                .map { "<li>\(weekday.string(from: $0.start)) \($0.localStart.replacingOccurrences(of: "T", with: " "))</li>" }
            more = RecordPages.statusBox(of: entry, at: "/calendar", csrf: model.csrf,
                                         published: "<strong>Published:</strong> in the phones' calendar and in calendar.ics.",
                                         draft: "<strong>Draft:</strong> not in the phones' calendar yet.")
                + (next.isEmpty ? .empty : "<h2>Next occurrences</h2><ul class=\"occurrences\">\(next)</ul>" as HTML)
        }
        return RecordPages.form(model, top: more, fields: fields + form.translationFieldsets(languages: model.languages, errors: errors),
                                fieldNames: CalendarForm.fields)
    }

    static func confirmDelete(_ entry: CalendarEntryState, csrf: String) -> HTML {
        RecordPages.confirmDelete(entry, at: "/calendar", title: deleteTitle, csrf: csrf,
                                  "Are you sure you want to delete? \(entry.content.title) leaves the phones' calendar and calendar.ics.")
    }
}
