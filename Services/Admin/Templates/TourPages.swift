import Foundation
import Shared

/// What the tour form holds: the typed text, kept as typed when it is refused.
struct TourForm: MergeableForm, TranslatingForm {
    var name = ""
    var summary = ""
    var purpose = ""
    // DESIGN.md, "A tour's look and route".
    var coverImage = ""
    var coverImageAlt = ""
    var estimatedMinutes = ""
    var color = ""
    /// GeoJSON, as typed or as the map drew it.
    var route = ""
    /// Translations by form name, `name@es` (DESIGN.md "Languages").
    var translations: [String: String] = [:]
    var version: Int?

    var namedFields: [String: String] {
        get { translations }
        set { translations = newValue }
    }

    init() {}

    /// The tour as editors see it: its draft when there is one.
    init(_ tour: TourState) {
        let content = tour.working.content
        name = content.name
        summary = content.summary
        purpose = content.purpose
        coverImage = content.coverImage ?? ""
        coverImageAlt = content.coverImageAlt ?? ""
        estimatedMinutes = content.estimatedMinutes.map(String.init) ?? ""
        color = content.color ?? ""
        route = content.route.map(Self.geoJSON) ?? ""
        translations = TranslationFields.values(content.translations)
        version = tour.version
    }

    init(_ form: FormData) {
        name = form["name"]
        summary = form["summary"]
        purpose = form["purpose"]
        coverImage = form["coverImage"]
        coverImageAlt = form["coverImageAlt"]
        estimatedMinutes = form["estimatedMinutes"]
        color = form["color"]
        route = form["route"]
        translations = TranslationFields.values(form, fields: TourContent.translatableFields)
        version = form.int("version")
    }

    /// The content to send, or the errors of fields that cannot even be sent (minutes that are not a number, a route
    /// that is not GeoJSON); the catalog checks the rest.
    /// `translated`: the tour's translations as stored, which the form's own (`name@es`) replace field by field.
    func content(legacyId: Int?, translated: Translations? = nil) -> Result<TourContent, FieldErrors> {
        func optional(_ text: String) -> String? {
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            return trimmed.isEmpty ? nil : trimmed
        }
        var errors: [String: String] = [:]
        let minutes = optional(estimatedMinutes)
        if let minutes, Int(minutes) == nil { errors["estimatedMinutes"] = "Estimated duration must be whole minutes, 1 to 1440 (24 hours)" }
        let line = optional(route).map(Self.lineString)
        if case .some(nil) = line {
            errors["route"] = "Route must be GeoJSON: a LineString, {\"type\": \"LineString\", \"coordinates\": [[longitude, latitude], …]}, or a Feature holding one"
        }
        guard errors.isEmpty else { return .failure(FieldErrors(byField: errors)) }
        return .success(TourContent(name: name.trimmingCharacters(in: .whitespacesAndNewlines), summary: summary.trimmingCharacters(in: .whitespacesAndNewlines),
                                    purpose: purpose.trimmingCharacters(in: .whitespacesAndNewlines), legacyId: legacyId,
                                    coverImage: optional(coverImage), coverImageAlt: optional(coverImageAlt), estimatedMinutes: minutes.flatMap { Int($0) },
                                    color: optional(color)?.lowercased(), route: line ?? nil,
                                    translations: TranslationFields.translations(translations, over: translated)))
    }

    /// A route as the form shows it: compact GeoJSON.
    static func geoJSON(_ line: LineString) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(line)).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    /// A LineString, or a Feature whose geometry is one (what geojson.io and GIS tools export); nil for anything else.
    static func lineString(_ text: String) -> LineString? {
        struct Feature: Decodable { let geometry: LineString }
        let data = Data(text.utf8)
        return (try? JSONDecoder().decode(LineString.self, from: data)) ?? (try? JSONDecoder().decode(Feature.self, from: data))?.geometry
    }

    static let fields: Set<String> = ["name", "summary", "purpose", "coverImage", "coverImageAlt", "estimatedMinutes", "color", "route"]

    static let translatedFields = [
        TranslationFields.Field(name: "name", label: "Tour's Name", rows: 1), .init(name: "summary", label: "Summary", rows: 2),
        .init(name: "purpose", label: "Tour's Purpose", rows: 4), .init(name: "coverImageAlt", label: "Cover picture shows", rows: 1),
    ]

    var siteTexts: [String: String] { ["name": name, "summary": summary, "purpose": purpose, "coverImageAlt": coverImageAlt] }

    // Computed: key paths are not Sendable.
    static var mergeFields: [(name: String, label: String, value: WritableKeyPath<TourForm, String>)] {
        [
            ("name", "Tour's Name", \.name), ("summary", "Summary", \.summary), ("purpose", "Tour's Purpose", \.purpose),
            ("coverImage", "Cover picture", \.coverImage), ("coverImageAlt", "Cover picture shows", \.coverImageAlt),
            ("estimatedMinutes", "Estimated duration (minutes)", \.estimatedMinutes), ("color", "Colour", \.color), ("route", "Route", \.route),
        ]
    }
}

/// "Tours Administration", "Create New Tour" and "Manage Tour".
enum TourPages {
    static func list(tours: [TourState], search: ListSearch, access: Access, csrf: String, languages: SiteLanguages) -> HTML {
        let create: HTML = access.isOwner ? "<p><a class=\"button primary\" href=\"/tours/new\">Create New Tour</a> <a href=\"/deleted\">Recently deleted</a></p>" : .empty
        let rows: [HTML] = tours.map { tour in
            let description = tour.content.summary.isEmpty ? tour.content.purpose : tour.content.summary
            let delete: HTML = access.isOwner ? "<a href=\"/tours/\(tour.id.uuidString.lowercased())/delete\">Delete</a>" : .empty
            let id = tour.id.uuidString.lowercased()
            return """
                <tr><td><input type="checkbox" name="tour" value="\(id):\(tour.version)" id="select-\(id)">\
                <label for="select-\(id)" class="visually-hidden">Select \(tour.content.name)</label></td>
                <td><a href="/tours/\(id)">\(tour.content.name)</a></td>
                <td>\(description)</td><td>\(CommonPages.statusBadge(tour.status))</td><td>\(tour.stops.count)</td>\
                \(TranslationFields.missingCell(tour.working.content, languages: languages))<td>\(delete)</td></tr>
                """
        }
        let none = access.isOwner ? "There are no tours yet." : "No tours are assigned to you yet; an owner can assign you to a tour."
        // Several at once: tick tours, then one button; each tour is its own command, checked as on its own page.
        let bulk: HTML = Forms.submit("Publish selected", name: "bulk", value: "publish", class: "secondary")
            + Forms.submit("Unpublish selected", name: "bulk", value: "unpublish", class: "secondary")
            + (access.isOwner ? Forms.submit("Delete selected", name: "bulk", value: "delete", class: "secondary") : .empty)
        let table: HTML = rows.isEmpty ? search.outcome(0, "tour", none: none) : search.outcome(rows.count, "tour", none: none)
            + Forms.post("/tours/bulk", csrf: csrf, class: "bulk", """
                <p>Or edit an existing Tour from the table below, or tick several and act on them at once.</p>
                <table id="tours-table"><thead><tr><th scope="col"><span class="visually-hidden">Select</span></th><th scope="col">Tour's Name</th>\
                <th scope="col">Description</th><th scope="col">Status</th>
                <th scope="col">Stops</th>\(TranslationFields.missingHeader(languages))<th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
                <tbody>\(rows)</tbody></table>
                <div class="actions bulk-actions">\(bulk)</div>
                """)
        return "<h1>Tours Administration</h1>\(create)\(search.form(action: "/tours", label: "Search tours"))\(table)"
    }

    /// Asks before deleting the ticked tours; Delete sends the same ticks again, confirmed.
    static func confirmBulkDelete(_ tours: [TourState], csrf: String) -> HTML {
        let names: [HTML] = tours.map { "<li>\($0.working.content.name)</li>" }
        let ticks: HTML = tours.map { Forms.hidden("tour", "\($0.id.uuidString.lowercased()):\($0.version)") }.reduce(.empty, +)
        return """
            <h1>Delete \(tours.count == 1 ? "1 tour" : "\(tours.count) tours")</h1>
            <p class="confirm-question"><strong>Are you sure you want to delete these?</strong> They leave the phones at once; an owner
            can restore each from Recently deleted for 30 days.</p>
            <ul>\(names)</ul>
            <div class="actions">
            \(Forms.post("/tours/bulk", csrf: csrf, class: "inline", ticks + Forms.hidden("confirm", "1")
                + Forms.submit("Delete \(tours.count == 1 ? "1 tour" : "\(tours.count) tours")", name: "bulk", value: "delete", class: "danger")))
            <a class="button" href="/tours">Cancel</a>
            </div>
            """
    }

    static func fields(_ form: TourForm, errors: [String: String], languages: SiteLanguages) -> HTML {
        Forms.text("Tour's Name", name: "name", value: form.name, error: errors["name"], required: true)
            + Forms.textarea("Summary", name: "summary", value: form.summary, error: errors["summary"], rows: 2,
                             hint: "One or two sentences for the phones' list of tours.")
            + Forms.textarea("Tour's Purpose", name: "purpose", value: form.purpose, error: errors["purpose"], rows: 4)
            + Forms.text("Cover picture", name: "coverImage", value: form.coverImage, error: errors["coverImage"],
                         hint: "The address of a picture for the tour's card, such as a library picture's.")
            + Forms.text("Cover picture shows", name: "coverImageAlt", value: form.coverImageAlt, error: errors["coverImageAlt"],
                         hint: "For visitors who cannot see it; required with a cover picture.")
            + Forms.text("Estimated duration (minutes)", name: "estimatedMinutes", value: form.estimatedMinutes, error: errors["estimatedMinutes"],
                         attributes: " inputmode=\"numeric\"")
            + Forms.text("Colour", name: "color", value: form.color, error: errors["color"],
                         hint: "#rrggbb, such as #0b5cad: the tour's line on maps.")
            + Forms.textarea("Route", name: "route", value: form.route, error: errors["route"], rows: 3,
                             hint: "The path walked, as GeoJSON (a LineString, or a Feature holding one), or click on the tour's map "
                                 + "with “Draw the route” ticked. Empty: the straight lines between stops.")
            + form.translationFieldsets(languages: languages, errors: errors)
    }

    static func new(_ form: TourForm, errors: [String: String], problem: String?, csrf: String, languages: SiteLanguages) -> HTML {
        """
        <h1>Create New Tour</h1>
        \(problem.map(CommonPages.unavailableBox))
        \(Forms.errorSummary(errors, fields: TourForm.fields))
        \(Forms.post("/tours", csrf: csrf, fields(form, errors: errors, languages: languages) + "<div class=\"actions\">\(Forms.submit("Save"))<a href=\"/tours\">Cancel</a></div>"))
        """
    }

    struct ManageModel {
        var tour: TourState
        var stops: [PoiState]
        var form: TourForm
        var errors: [String: String] = [:]
        /// Why the last change was not made (it lost a race): above the page, and beside the fields changed on both sides.
        var conflict: HTML = .empty
        var fieldNotes: [String: String] = [:]
        /// What the details form was rendered from (a conflict's merge keeps the base the user saw).
        var base: TourForm?
        /// Why the last Publish (or scheduled publish) was refused: no stops, or a stop far from the others.
        var publishRefusal: PublishRefusal?
        /// The schedule form's When as typed, kept when it is refused.
        var scheduleTyped: String = ""
        var problem: String? = nil
        /// POIs that can be added as stops (not stops already).
        var addable: [PoiState] = []
        var editors: [AdminUser] = []
        /// Editors an owner can assign.
        var assignable: [AdminUser] = []
        /// Stops the user may delete outright (an editor: only POIs all of whose tours are theirs).
        var deletablePois: Set<UUID> = []
        var access: Access
        var csrf: String
        var map: AdminMap
        /// `SITE_TIME_ZONE`: where the schedule's times are shown and typed.
        var clock: SiteClock
        /// `SITE_LANGUAGES`: the languages the form translates into.
        var languages: SiteLanguages
    }

    /// A refused publish or scheduled publish, and what resending it with the far stops confirmed posts.
    struct PublishRefusal {
        var message: String
        /// "status" or "schedule": the tour's route that was refused.
        var route: String
        /// The refused form's own fields, sent again by "… anyway".
        var fields: [(name: String, value: String)]
        /// The refusal is one a confirmation overrides (a far stop, not a missing one).
        var canConfirm: Bool
    }

    /// The tour's schedule: what is due and when (with Cancel), why the last one did not happen, and the form to set one.
    /// Times are typed and shown in the site's zone (SITE_TIME_ZONE), named.
    static func schedule(_ model: ManageModel) -> HTML {
        let tour = model.tour
        let path = "/tours/\(tour.id.uuidString.lowercased())/schedule"
        guard tour.status != .archived else { return .empty }
        var parts: [HTML] = []
        // Publishing a published tour publishes its changes and its stops' (catalog's setStatus).
        let hasChanges = tour.draft != nil || model.stops.contains { $0.draft != nil }
        let publishLabel = tour.status == .published ? "publish the changes" : "publish"
        if let schedule = tour.schedule {
            let what = schedule.status == .published ? publishLabel : "unpublish"
            if let failure = schedule.failure {
                parts.append("""
                    <div class="notice error" role="alert"><p><strong>The scheduled \(what) did not happen</strong> \
                    (due \(CommonPages.time(schedule.at, clock: model.clock))): \(failure).</p></div>
                    """)
            } else {
                let cancel = Forms.post(path, csrf: model.csrf, class: "inline",
                                        Forms.hidden("version", String(tour.version)) + Forms.hidden("cancel", "1")
                                            + Forms.submit("Cancel schedule", class: ""))
                parts.append("""
                    <p class="schedule">Scheduled to <strong>\(what)</strong> at \(CommonPages.time(schedule.at, clock: model.clock)) \
                    <span class="muted">(set by \(schedule.by))</span></p>\(cancel)
                    """)
            }
        }
        let options: [(value: String, label: String)] = tour.status != .published ? [("published", "Publish"), ("draft", "Unpublish")]
            : hasChanges ? [("published", "Publish the changes"), ("draft", "Unpublish")] : [("draft", "Unpublish")]
        // A refusal is told here, above its field: the page's summary sits below, over the tour's own form.
        let refused: HTML = model.errors["scheduleAt"] == nil ? .empty
            : "<div class=\"error-summary\" role=\"alert\"><p><strong>Not scheduled:</strong> please correct <a href=\"#field-at\">When</a> below.</p></div>"
        let form = Forms.post(path, csrf: model.csrf, class: "schedule-form",
                              Forms.hidden("version", String(tour.version))
                                + Forms.select("What", name: "scheduleStatus", options: options, selected: options[0].value, id: "field-scheduleStatus")
                                + Forms.text("When", name: "at", value: model.scheduleTyped, error: model.errors["scheduleAt"], type: "datetime-local",
                                             hint: "In the site's time zone, \(model.clock.name)"
                                                + (model.clock.name == model.clock.zoneName(at: Date()) ? "." : " (\(model.clock.zoneName(at: Date())) now).")
                                                + (hasChanges && tour.status == .published ? " The changes are published as they are then." : ""))
                                + Forms.submit("Schedule", class: ""))
        return "<section class=\"schedule\"><h2>Schedule publishing</h2>\(parts)\(refused)\(form)</section>"
    }

    /// The tour's QR code and one per stop, two to a row when printed; each with its name and link.
    static func qrSheet(tour: TourState, stops: [PoiState], feedPublicURL: String) -> HTML {
        let tourPath = "/tours/\(tour.id.uuidString.lowercased())"
        let name = tour.working.content.name
        func card(_ title: String, _ caption: String, link: String) -> HTML {
            // FEED_PUBLIC_URL is checked at start to leave room for every link.
            let code = (try? QRCode(link)).map { HTML(trusted: $0.svg(title: link)) } ?? "<p class=\"error\">This link is too long for a QR code.</p>"
            return """
                <figure class="qr-card">\(code)<figcaption><strong>\(title)</strong> <span class="muted">\(caption)</span><br>
                <code>\(link)</code></figcaption></figure>
                """
        }
        let cards = [card(name, "the tour, for the app", link: QRLink.tour(tour.id, feedPublicURL: feedPublicURL))]
            + stops.enumerated().map { index, poi in
                // A stop of the tour's draft only is on the feed once the draft is published.
                let caption = tour.status == .published && !tour.stops.contains(poi.id) ? "stop \(index + 1), once the changes are published" : "stop \(index + 1)"
                return card("\(index + 1). \(poi.working.name)", caption, link: QRLink.poi(poi.id, feedPublicURL: feedPublicURL))
            }
        let note: HTML = tour.status == .published
            ? "Put each stop's code up at the stop: a phone's camera opens its page, and the app counts the visit as from a code."
            : "The tour is not published (\(tour.status.rawValue)): its codes open once it is on the feed."
        let host = URL(string: feedPublicURL)?.host ?? ""
        let local: HTML = ["localhost", "127.0.0.1", "::1", "[::1]"].contains(host)
            ? "<p class=\"notice error no-print\" role=\"alert\">These codes hold \(feedPublicURL), which only this machine reaches: set FEED_PUBLIC_URL to the address phones reach the feed at before printing them.</p>"
            : .empty
        return """
            <h1>QR Codes: \(name)</h1>
            \(local)
            <p class="notice no-print" role="status">\(note) Print this page; each code is 4 cm or more across.</p>
            <div class="qr-sheet">\(cards)</div>
            <p class="no-print"><button type="button" class="primary" data-print hidden>Print</button> <a href="\(tourPath)">Back to the tour</a></p>
            """
    }

    /// The tour as the phone will show it once published (drafts applied): its text, its stops in walking
    /// order with the distance between them, and each stop's page as the feed renders it, in a frame.
    static func preview(tour: TourState, stops: [PoiState]) -> HTML {
        let tourPath = "/tours/\(tour.id.uuidString.lowercased())"
        let working = tour.working.content
        let pending = tour.draft != nil || stops.contains { $0.draft != nil }
        let note: HTML = tour.status == .published && !pending
            ? "This is what phones show now."
            : tour.status == .published ? "Phones still show the published version; this is what they will show once you publish the changes."
            : "The tour is not published (\(tour.status.rawValue)); this is what phones will show once it is."
        var walked = 0.0
        let items: [HTML] = stops.enumerated().map { index, poi in
            if index > 0 { walked += Geo.distanceMeters(stops[index - 1].coordinate, poi.coordinate) }
            let leg: HTML = index == 0 ? "Start here" : "\(TourMap.distance(walked)) walked"
            let poiId = poi.id.uuidString.lowercased()
            return """
                <li id="stop-\(index + 1)"><h3>\(index + 1). \(poi.working.name)\(poi.draft != nil ? " <span class=\"status draft\">changed</span>" as HTML : .empty)</h3>
                <p class="muted">\(leg)</p>
                <iframe class="phone-page" src="\(tourPath)/preview/stops/\(poiId)" title="\(poi.working.name) as phones show it" loading="lazy"></iframe></li>
                """
        }
        return """
            <h1>Preview: \(working.name)</h1>
            <p class="notice" role="status">\(note) Stop pages are rendered by the feed's own page code.</p>
            <div class="phone-preview">
            <h2>\(working.name)</h2>
            \(working.summary.isEmpty ? .empty : "<p>\(working.summary)</p>" as HTML)
            \(working.purpose.isEmpty ? .empty : "<p class=\"muted\">\(working.purpose)</p>" as HTML)
            <p>\(counted(stops.count, "stop"))\(stops.count > 1 ? ", \(TourMap.distance(walked)) on foot" : "")</p>
            \(items.isEmpty ? "<p class=\"muted\">No stops yet: phones would show an empty tour, and it cannot be published.</p>" as HTML : "<ol class=\"preview-stops\">\(items)</ol>" as HTML)
            </div>
            <p><a href="\(tourPath)">Back to the tour</a></p>
            """
    }

    /// Beside Publish: what the tour and its stops leave untranslated, per language (phones asking for it get the site
    /// language's text there).
    static func untranslated(_ model: ManageModel) -> HTML {
        let working = model.tour.working.content
        let items: [HTML] = model.languages.translated.compactMap { language -> HTML? in
            var gaps: [String] = []
            let own = working.untranslatedFields(in: language)
            if !own.isEmpty { gaps.append("the tour (\(own.joined(separator: ", ")))") }
            for stop in model.stops {
                let fields = stop.working.untranslatedFields(in: language)
                if !fields.isEmpty { gaps.append("\(stop.working.name) (\(fields.joined(separator: ", ")))") }
            }
            guard !gaps.isEmpty else { return nil }
            return "<li>\(TranslationFields.name(of: language)): \(gaps.joined(separator: "; "))</li>"
        }
        guard !items.isEmpty else { return .empty }
        return """
            <div class="notice untranslated" role="status"><p><strong>Not translated yet.</strong> Publishing shows the \
            \(TranslationFields.name(of: model.languages.site)) text in their place to phones asking for:</p><ul>\(items)</ul></div>
            """
    }

    static func manage(_ model: ManageModel) -> HTML {
        let tour = model.tour
        let tourPath = "/tours/\(tour.id.uuidString.lowercased())"
        let conflict = model.conflict
        let version = Forms.hidden("version", String(model.form.version ?? tour.version))
        let details = Forms.post(tourPath, csrf: model.csrf, class: "tour-form",
                                 version + (model.base ?? TourForm(tour)).baseFields()
                                    + fields(model.form, errors: model.errors.merging(model.fieldNotes) { error, _ in error }, languages: model.languages)
                                    + "<div class=\"actions\">\(Forms.submit("Save"))</div>")

        func statusButton(_ status: ContentStatus, _ label: String, _ className: String = "") -> HTML {
            Forms.post("\(tourPath)/status", csrf: model.csrf, class: "inline",
                       Forms.hidden("version", String(tour.version)) + Forms.hidden("status", status.rawValue) + Forms.submit(label, class: className))
        }
        var statusActions: [HTML] = []
        if tour.status != .published { statusActions.append(statusButton(.published, "Publish", "primary")) }
        let draftStops = model.stops.filter { $0.draft != nil }
        var drafts: HTML = .empty
        if tour.status == .published && (tour.draft != nil || !draftStops.isEmpty) {
            // Say what changed (the tour, which stops), and offer to discard each of them.
            let stopsText = draftStops.isEmpty ? ""
                : "\(counted(draftStops.count, "stop")) (\(draftStops.map(\.working.name).joined(separator: ", ")))"
            let changed = tour.draft == nil ? stopsText : stopsText.isEmpty ? "this tour" : "this tour and to \(stopsText)"
            var discards: [HTML] = []
            if tour.draft != nil {
                discards.append(Forms.post("\(tourPath)/discard", csrf: model.csrf, class: "inline",
                                           Forms.hidden("version", String(tour.version)) + Forms.submit("Discard changes to the tour", class: "")))
            }
            for poi in draftStops {
                discards.append(Forms.post("/pois/\(poi.id.uuidString.lowercased())/draft?tour=\(tour.id.uuidString.lowercased())", csrf: model.csrf,
                                           class: "inline", Forms.hidden("version", String(poi.version)) + Forms.hidden("draftAction", "discard")
                                            + Forms.submit("Discard changes to \(poi.working.name)", class: "")))
            }
            drafts = """
                <div class="notice warning drafts" role="status"><p><strong>Unpublished changes.</strong> The phones still show the \
                published version; your changes to \(changed) go live when you publish them.</p>
                <div class="actions">\(statusButton(.published, "Publish changes", "primary")) \(discards)</div></div>
                """
        }
        let refusal: HTML = model.publishRefusal.map { refusal in
            let resent: HTML = "\(refusal.fields.map { Forms.hidden($0.name, $0.value) })"
            let anyway: HTML = refusal.canConfirm
                ? Forms.post("\(tourPath)/\(refusal.route)", csrf: model.csrf, class: "inline",
                             Forms.hidden("version", String(tour.version)) + resent + Forms.hidden("confirmFarStops", "1")
                                + Forms.submit(refusal.route == "schedule" ? "Schedule anyway" : "Publish anyway", class: "danger"))
                : .empty
            let what: HTML = refusal.route == "schedule" ? "Not scheduled." : "Not published."
            return "<div class=\"notice error\" role=\"alert\"><p><strong>\(what)</strong> \(refusal.message)</p>\(anyway)</div>"
        } ?? .empty
        if tour.status == .published { statusActions.append(statusButton(.draft, "Unpublish")) }
        if tour.status != .archived { statusActions.append(statusButton(.archived, "Archive")) }
        if tour.status == .archived { statusActions.append(statusButton(.draft, "Restore as draft")) }

        let stopRows: [HTML] = model.stops.enumerated().map { index, poi in
            let poiId = poi.id.uuidString.lowercased()
            func move(_ action: String, _ label: String, disabled: Bool = false) -> HTML {
                let off: HTML = disabled ? " disabled" : .empty
                return Forms.post("\(tourPath)/stops", csrf: model.csrf, class: "inline",
                                  Forms.hidden("version", String(tour.version)) + Forms.hidden("poi", poiId) + Forms.hidden("move", action)
                                    + "<button type=\"submit\"\(off) aria-label=\"\(label): \(poi.content.name)\">\(label)</button>")
            }
            let delete: HTML = model.deletablePois.contains(poi.id)
                ? "<a href=\"/pois/\(poiId)/delete?tour=\(tour.id.uuidString.lowercased())\">Delete</a>" : .empty
            let stray: HTML = AdminMap.strayDistance(of: poi, in: model.stops).map {
                "<br><strong class=\"stray\">\(TourMap.distance($0)) from the middle of the tour: check the coordinates</strong>"
            } ?? .empty
            return """
                <tr id="stop-\(poiId)"><td>\(index + 1)</td>
                <td><a href="/pois/\(poiId)?tour=\(tour.id.uuidString.lowercased())">\(poi.content.name)</a></td>
                <td>\(CommonPages.coordinates(poi.content))\(stray)</td>
                <td class="row-actions">\(move("up", "Move up", disabled: index == 0)) \(move("down", "Move down", disabled: index == model.stops.count - 1))
                \(move("remove", "Remove from tour")) \(delete)</td></tr>
                """
        }
        let stops: HTML = stopRows.isEmpty ? "<p class=\"muted\">This tour has no stops yet.</p>" : """
            <p>Or edit an existing POI from the table below...</p>
            <table class="stops"><thead><tr><th scope="col">Stop</th><th scope="col">Points of Interest</th><th scope="col">Coordinates</th>
            <th scope="col">Order</th></tr></thead><tbody>\(stopRows)</tbody></table>
            """
        let addExisting: HTML = model.addable.isEmpty ? .empty : Forms.post("\(tourPath)/stops", csrf: model.csrf, class: "add-existing",
            Forms.hidden("version", String(tour.version)) + Forms.hidden("move", "add")
                + Forms.select("Add an existing POI as the last stop", name: "poi",
                               options: model.addable.map { ($0.id.uuidString.lowercased(), $0.content.name) }, selected: "", id: "field-add-poi")
                + Forms.submit("Add stop", class: ""))

        var editorsSection: HTML = .empty
        if model.access.isOwner {
            let rows: [HTML] = model.editors.map { editor in
                "<li>\(editor.email) \(Forms.post("\(tourPath)/editors", csrf: model.csrf, class: "inline", Forms.hidden("user", editor.id.uuidString.lowercased()) + Forms.hidden("action", "remove") + Forms.submit("Remove", class: "")))</li>"
            }
            let list: HTML = rows.isEmpty ? "<p class=\"muted\">No editors: only owners can edit this tour.</p>" : "<ul>\(rows)</ul>"
            let assign: HTML = model.assignable.isEmpty ? "<p class=\"muted\">Every editor is assigned (add editors on the Users page).</p>"
                : Forms.post("\(tourPath)/editors", csrf: model.csrf,
                             Forms.hidden("action", "add")
                                + Forms.select("Assign an editor", name: "user", options: model.assignable.map { ($0.id.uuidString.lowercased(), $0.email) },
                                               selected: "", id: "field-editor")
                                + Forms.submit("Assign", class: ""))
            editorsSection = "<h2>Editors</h2>\(list)\(assign)"
        }
        let delete: HTML = model.access.isOwner ? "<p><a class=\"button danger\" href=\"\(tourPath)/delete\">Delete</a></p>" : .empty
        return """
            <h1>Manage Tour</h1>
            <p>Status: \(CommonPages.statusBadge(tour.status)) <span class="muted">version \(tour.version)</span>
            <a href="\(tourPath)/history">History</a> · <a href="\(tourPath)/preview">Preview as phones will show it</a> ·
            <a href="\(tourPath)/qr">QR codes to print</a></p>
            <div class="actions">\(statusActions)</div>
            \(untranslated(model))
            \(schedule(model))
            \(refusal)
            \(drafts)
            \(model.problem.map(CommonPages.unavailableBox))
            \(conflict)
            \(Forms.errorSummary(model.errors.filter { $0.key != "scheduleAt" }, fields: TourForm.fields))
            \(details)
            <h2 id="stops">Points of Interest</h2>
            <p><a class="button primary" href="\(tourPath)/pois/new">Add New POI</a></p>
            \(stops)
            \(addExisting)
            <h2>Map</h2>
            \(TourMap.map(stops: model.stops, tour: model.tour.working.content, map: model.map))
            \(editorsSection)
            \(delete)
            """
    }
}
