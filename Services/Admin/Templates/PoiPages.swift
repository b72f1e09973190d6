import Foundation
import Shared

/// What the POI form holds, as typed (a latitude that is not a number stays in the field with its error).
struct PoiForm: MergeableForm, TranslatingForm {
    var name = ""
    var summary = ""
    var description = ""
    var latitude = ""
    var longitude = ""
    var category = ""
    /// Categories besides the main one, one path per line.
    var otherCategories = ""
    var buildings = ""
    /// One picture per line: its address, then (after a space) what it shows.
    var pictures = ""
    var triggerRadius = ""
    /// The sha256 of a library audio item, or "".
    var narration = ""
    var address = ""
    var phone = ""
    var website = ""
    var openingHours = ""
    /// "" (not given) or 0–4.
    var priceLevel = ""
    var accessibility = ""
    /// Translations by form name, `name@es` (DESIGN.md "Languages").
    var translations: [String: String] = [:]
    var version: Int?

    var namedFields: [String: String] {
        get { translations }
        set { translations = newValue }
    }

    init() {}

    /// The POI as editors see it: its draft when there is one.
    init(_ poi: PoiState) {
        let content = poi.working
        name = content.name
        summary = content.summary
        description = content.description
        latitude = Self.number(content.latitude)
        longitude = Self.number(content.longitude)
        category = content.category ?? ""
        otherCategories = content.categories.dropFirst().joined(separator: "\n")
        buildings = content.buildings.joined(separator: "\n")
        pictures = content.pictures.enumerated().map { index, url in
            content.ownAlt(ofPicture: index).map { "\(url) \($0)" } ?? url
        }.joined(separator: "\n")
        triggerRadius = content.triggerRadiusMeters.map(String.init) ?? ""
        narration = content.narration ?? ""
        address = content.address ?? ""
        phone = content.phone ?? ""
        website = content.website ?? ""
        openingHours = content.openingHours ?? ""
        priceLevel = content.priceLevel.map(String.init) ?? ""
        accessibility = content.accessibility ?? ""
        translations = TranslationFields.values(content.translations)
        version = poi.version
    }

    init(_ form: FormData) {
        name = form["name"]
        summary = form["summary"]
        description = form["description"]
        latitude = form["latitude"]
        longitude = form["longitude"]
        category = form["category"]
        otherCategories = form.all("otherCategories").filter { !$0.isEmpty }.joined(separator: "\n")
        buildings = form["buildings"]
        pictures = form["pictures"]
        triggerRadius = form["triggerRadius"]
        narration = form["narration"]
        address = form["address"]
        phone = form["phone"]
        website = form["website"]
        openingHours = form["openingHours"]
        priceLevel = form["priceLevel"]
        accessibility = form["accessibility"]
        translations = TranslationFields.values(form, fields: PoiContent.translatableFields)
        version = form.int("version")
    }

    // Computed: key paths are not Sendable.
    static var mergeFields: [(name: String, label: String, value: WritableKeyPath<PoiForm, String>)] {
        [
            ("name", "Name", \.name), ("summary", "Summary", \.summary), ("latitude", "Latitude", \.latitude),
            ("longitude", "Longitude", \.longitude), ("description", "Description", \.description), ("category", "Category", \.category),
            ("otherCategories", "Also in", \.otherCategories),
            ("buildings", "Buildings or landmarks", \.buildings), ("pictures", "Main Pictures (URL)", \.pictures),
            ("triggerRadius", "Trigger radius", \.triggerRadius), ("narration", "Narration", \.narration), ("address", "Address", \.address),
            ("phone", "Phone", \.phone), ("website", "Website", \.website), ("openingHours", "Opening hours", \.openingHours),
            ("priceLevel", "Price level", \.priceLevel), ("accessibility", "Accessibility", \.accessibility),
        ]
    }

    static func number(_ value: Double) -> String {
        var text = String(format: "%.7f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }

    static let fields: Set<String> = ["name", "summary", "description", "latitude", "longitude", "category", "otherCategories", "buildings", "pictures",
                                      "triggerRadius", "narration", "address", "phone", "website", "openingHours", "priceLevel", "accessibility"]

    static let translatedFields = [
        TranslationFields.Field(name: "name", label: "Name", rows: 1), .init(name: "summary", label: "Summary", rows: 2),
        .init(name: "description", label: "Description", rows: 6), .init(name: "accessibility", label: "Accessibility", rows: 2),
        .init(name: "narration", label: "Narration (sha256 of a library audio file spoken in this language)", rows: 1),
        .init(name: "pictureAlts", label: "What the pictures show (a line per picture, in their order)", rows: 3),
    ]

    var siteTexts: [String: String] {
        ["name": name, "summary": summary, "description": description, "accessibility": accessibility, "narration": narration,
         "pictureAlts": pictureLines.map(\.alt).joined(separator: "\n")]
    }

    /// A text area's non-empty lines, trimmed.
    static func lines(_ text: String) -> [String] {
        text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// A picture line is its address, then what it shows: an address holds no space.
    var pictureLines: [(url: String, alt: String)] {
        Self.lines(pictures).map { line in
            let parts = line.split(maxSplits: 1, whereSeparator: \.isWhitespace)
            return (url: String(parts[0]), alt: parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : "")
        }
    }

    /// The content to send, keeping what the form does not edit (links, legacy id) from `base`; or the
    /// errors of fields that cannot even be sent (a coordinate that is not a number).
    func content(base: PoiContent?) -> Result<PoiContent, FieldErrors> {
        var errors: [String: String] = [:]
        func coordinate(_ text: String, _ label: String, _ limit: Int) -> Double {
            let cleaned = text.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: ",", with: ".")
            guard let value = Double(cleaned), value.isFinite else {
                errors[label.lowercased()] = "\(label) must be a number between -\(limit) and \(limit)"
                return 0
            }
            return value
        }
        let lat = coordinate(latitude, "Latitude", 90)
        let lon = coordinate(longitude, "Longitude", 180)
        let price = priceLevel.trimmingCharacters(in: .whitespaces)
        if !price.isEmpty, Int(price) == nil { errors["priceLevel"] = "Price level must be 0 (free) to 4 (very expensive)" }
        let radius = triggerRadius.trimmingCharacters(in: .whitespaces)
        if !radius.isEmpty, Int(radius) == nil { errors["triggerRadiusMeters"] = "Trigger radius must be whole metres, 5 to 500" }
        guard errors.isEmpty else { return .failure(FieldErrors(byField: errors)) }
        let lines = Self.lines
        func optional(_ text: String) -> String? {
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            return trimmed.isEmpty ? nil : trimmed
        }
        var alts = pictureLines.map(\.alt)
        while alts.last == "" { alts.removeLast() }
        return .success(PoiContent(name: name.trimmingCharacters(in: .whitespacesAndNewlines), summary: summary.trimmingCharacters(in: .whitespacesAndNewlines),
                                   description: description.trimmingCharacters(in: .whitespacesAndNewlines), latitude: lat, longitude: lon,
                                   categories: (optional(category).map { [$0] } ?? []) + lines(otherCategories), buildings: lines(buildings), pictures: pictureLines.map(\.url), links: base?.links ?? [],
                                   address: optional(address), phone: optional(phone), website: optional(website),
                                   openingHours: optional(openingHours), legacyId: base?.legacyId, priceLevel: Int(price),
                                   accessibility: optional(accessibility), pictureAlts: alts, triggerRadiusMeters: Int(radius),
                                   narration: optional(narration), translations: TranslationFields.translations(translations, over: base?.translations)))
    }
}

struct FieldErrors: Error {
    var byField: [String: String]
}

/// "Manage Point of Interest", "Manage Multimedia Links", "Preview POI" and the list of all POIs.
enum PoiPages {
    /// Breadcrumbs from the tour the user came from, when there is one.
    /// The trail to a POI page: through its tour when opened from one, else through the POI list, which only
    /// owners may open (an editor's trail starts at their tours).
    static func breadcrumbs(tour: TourState?, poi: PoiState?, owner: Bool, last: String?) -> [(String, String?)] {
        var crumbs: [(String, String?)] = [("Tours Administration", "/tours")]
        if let tour {
            crumbs.append(("Manage Tour", "/tours/\(tour.id.uuidString.lowercased())"))
        } else if owner {
            crumbs = [("Points of Interest", "/pois")]
        }
        if let poi {
            crumbs.append(("Manage POI", last == nil ? nil : "/pois/\(poi.id.uuidString.lowercased())\(query(tour))"))
        } else {
            crumbs.append(("Manage POI", nil))
        }
        if let last { crumbs.append((last, nil)) }
        return crumbs
    }

    /// `?tour=ID`, to keep the way back to the tour.
    static func query(_ tour: TourState?) -> String {
        tour.map { "?tour=\($0.id.uuidString.lowercased())" } ?? ""
    }

    /// The POI list's search: words of the name (case and accents ignored), and a category with its sub-categories.
    struct ListFilter {
        var search: ListSearch
        var category: String

        var isEmpty: Bool { search.isEmpty && category.isEmpty }

        func matches(_ poi: PoiState) -> Bool {
            if !category.isEmpty {
                guard poi.content.categories.contains(where: { $0 == category || $0.hasPrefix(category + "/") }) else { return false }
            }
            return search.matches(poi.content.name)
        }
    }

    static func list(pois: [PoiState], content: AdminCatalogProjection.Content, filter: ListFilter, languages: SiteLanguages) -> HTML {
        let rows: [HTML] = pois.map { poi in
            let tours = content.tours(stoppingAt: poi.id).map(\.content.name).joined(separator: ", ")
            return """
                <tr><td><a href="/pois/\(poi.id.uuidString.lowercased())">\(poi.content.name)</a></td><td>\(poi.content.categories.joined(separator: ", "))</td>
                <td>\(CommonPages.coordinates(poi.content))</td><td>\(tours.isEmpty ? "(no tour)" : tours)</td>\
                \(TranslationFields.missingCell(poi.working, languages: languages))
                <td><a href="/pois/\(poi.id.uuidString.lowercased())/delete">Delete</a></td></tr>
                """
        }
        let categories = [("", "(any)")] + content.sortedCategories.map { ($0.path, $0.path) }
        let search = filter.search.form(action: "/pois", label: "Search by name",
                                        more: Forms.select("Category", name: "category", options: categories, selected: filter.category),
                                        showAll: !filter.isEmpty)
        let empty: HTML = filter.isEmpty ? "<p class=\"muted\">No POIs yet.</p>" : "<p class=\"muted\">No POI matches.</p>"
        return """
            <h1>Points of Interest</h1>
            <p><a class="button primary" href="/pois/new">Create New POI</a> <a href="/deleted">Recently deleted</a></p>
            \(search)
            \(filter.isEmpty ? "" : "<p>\(counted(rows.count, "POI")) found.</p>" as HTML)
            \(rows.isEmpty ? empty : """
                <table><thead><tr><th scope="col">Name</th><th scope="col">Category</th><th scope="col">Coordinates</th><th scope="col">Tours</th>\(TranslationFields.missingHeader(languages))
                <th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead><tbody>\(rows)</tbody></table>
                """ as HTML)
            """
    }

    struct ManageModel {
        var poi: PoiState?
        var tour: TourState?
        var form: PoiForm
        var errors: [String: String] = [:]
        /// Why the last change was not made (it lost a race), and the other value beside each field changed on both sides.
        var conflict: HTML = .empty
        var fieldNotes: [String: String] = [:]
        var problem: String? = nil
        var categories: [CategoryState]
        /// The library's audio, for the narration, and its pictures, for the picker under Main Pictures.
        var audio: [MediaState] = []
        var pictures: [MediaState] = []
        /// `FEED_PUBLIC_URL`: a library picture's address is the feed's.
        var feedPublicURL = ""
        var canDelete: Bool
        var action: String
        var csrf: String
        var map: AdminMap
        /// The tour's other stops, in walking order, shown beside the pin; and where the map opens when the POI has
        /// no coordinates yet (the tour's stops, else every POI).
        var neighbours: [PoiState] = []
        var center: Coordinate? = nil
        /// `SITE_LANGUAGES`: what the form translates into.
        var languages = SiteLanguages.english
    }

    /// The week as the hours read, under their field; nothing while they do not read.
    static func hoursTable(_ text: String) -> HTML {
        guard !text.trimmingCharacters(in: .whitespaces).isEmpty, let hours = try? OpeningHours(parsing: text) else { return .empty }
        let rows: [HTML] = hours.week.map { day, spans in
            "<tr><th scope=\"row\">\(day.name)</th><td>\(spans.isEmpty ? "Closed" : spans.map(\.text).joined(separator: ", "))</td></tr>"
        }
        return "<table class=\"hours\" aria-label=\"Opening hours by day\">\(rows)</table>"
    }

    static func manage(_ model: ManageModel) -> HTML {
        let form = model.form
        // A conflict's notes show beside their fields like errors, but are not errors to sum up.
        let errors = model.errors.merging(model.fieldNotes) { error, _ in error }
        var categoryOptions: [(value: String, label: String)] = [("", "(none)")]
        categoryOptions += model.categories.map { ($0.path, $0.path) }
        if !form.category.isEmpty, !categoryOptions.contains(where: { $0.value == form.category }) {
            categoryOptions.append((form.category, "\(form.category) (not in the category tree)"))
        }
        var narrationOptions: [(value: String, label: String)] = [("", "(none)")]
        narrationOptions += model.audio.map { ($0.content.sha256, "\($0.content.title) (\($0.content.format.label))") }
        if !form.narration.isEmpty, !narrationOptions.contains(where: { $0.value == form.narration }) {
            narrationOptions.append((form.narration, "\(form.narration.prefix(12))… (not in the library)"))
        }
        let chosenOthers = form.otherCategories.split(whereSeparator: \.isNewline).map(String.init)
        var otherCategoryOptions = model.categories.map { (value: $0.path, label: $0.path) }
        for path in chosenOthers where !otherCategoryOptions.contains(where: { $0.value == path }) {
            otherCategoryOptions.append((path, "\(path) (not in the category tree)"))
        }
        let fields: HTML = Forms.text("Name", name: "name", value: form.name, error: errors["name"], required: true)
            + Forms.textarea("Summary", name: "summary", value: form.summary, error: errors["summary"], rows: 2,
                             hint: "A line for lists and the map's callout.")
            + """
            <fieldset><legend>Coordinates</legend>
            \(Forms.text("Latitude", name: "latitude", value: form.latitude, error: errors["latitude"], required: true,
                         hint: "Decimal degrees, -90 to 90 (north is positive), e.g. 34.226101", attributes: " inputmode=\"decimal\""))
            \(Forms.text("Longitude", name: "longitude", value: form.longitude, error: errors["longitude"], required: true,
                         hint: "Decimal degrees, -180 to 180 (east is positive), e.g. -77.876705", attributes: " inputmode=\"decimal\""))
            \(model.map.box(kind: "poi", stops: model.neighbours, center: model.center, fallback: .empty,
                            label: "Map: click to place the pin, or drag it; the coordinates follow"))
            \(model.map.hasLeaflet ? "<p class=\"hint\">Click the map to place the pin, or drag it: Latitude and Longitude follow. Numbered pins are the tour's other stops.</p>" as HTML : .empty)
            </fieldset>
            """
            + Forms.textarea("Description", name: "description", value: form.description, error: errors["description"], rows: 6)
            + Forms.select("Category", name: "category", options: categoryOptions, selected: form.category, error: errors["category"],
                           hint: "The main one. Owners manage the category tree on the Categories page.")
            + Forms.multiSelect("Also in", name: "otherCategories", options: otherCategoryOptions, selected: chosenOthers, error: errors["categories"],
                                hint: "Other categories it belongs to (Ctrl or ⌘ to pick several).")
            + Forms.textarea("Buildings or landmarks", name: "buildings", value: form.buildings, error: errors["buildings"], rows: 3,
                             hint: "One per line.")
            + Forms.textarea("Main Pictures (URL)", name: "pictures", value: form.pictures, error: errors["pictures"], rows: 3,
                             hint: "One per line: the http(s) address, a space, then what the picture shows (alt text, for people who cannot see it). A picture from the media library may leave it out: the library's alt text serves.")
            + picker(model)
            + Forms.text("Trigger radius (metres)", name: "triggerRadius", value: form.triggerRadius, error: errors["triggerRadiusMeters"],
                         hint: "How near a phone must come for the stop to count as reached and its narration to play: 5 to 500; 30 when left blank.",
                         attributes: " inputmode=\"numeric\"")
            + Forms.select("Narration", name: "narration", options: narrationOptions, selected: form.narration, error: errors["narration"],
                           hint: "Audio from the media library that phones play on arrival. It needs captions or a transcript before the stop is published.")
            + Forms.text("Address", name: "address", value: form.address, error: errors["address"])
            + Forms.text("Phone", name: "phone", value: form.phone, error: errors["phone"], type: "tel")
            + Forms.text("Website", name: "website", value: form.website, error: errors["website"], type: "url")
            + Forms.text("Opening hours", name: "openingHours", value: form.openingHours, error: errors["openingHours"],
                         hint: "OpenStreetMap style, e.g. Mo-Fr 08:00-17:00; Sa 10:00-14:00; Su off; PH off (or 24/7). Leave blank when not known.")
            + hoursTable(form.openingHours)
            + Forms.select("Price level", name: "priceLevel", options: [("", "(not given)"), ("0", "Free"), ("1", "$ inexpensive"), ("2", "$$ moderate"),
                                                                         ("3", "$$$ expensive"), ("4", "$$$$ very expensive")],
                           selected: form.priceLevel, error: errors["priceLevel"])
            + Forms.textarea("Accessibility", name: "accessibility", value: form.accessibility, error: errors["accessibility"], rows: 2,
                             hint: "Step-free entrances, lifts, accessible toilets, seating.")
            + form.translationFieldsets(languages: model.languages, errors: errors)
        // An existing POI's form carries what it was rendered from (`MergeableForm`), for a conflict's merge.
        let version: HTML = form.version.map { Forms.hidden("version", String($0)) + (model.poi.map(PoiForm.init) ?? form).baseFields() } ?? .empty
        let conflict = model.conflict
        var more: HTML = .empty
        if let poi = model.poi, let tour = model.tour, let distance = AdminMap.strayDistance(of: poi, in: model.neighbours + [poi]) {
            more += """
                <p class="notice warning" role="status">This stop is \(TourMap.distance(distance)) from the middle of \(tour.content.name)'s \
                stops. Check its Latitude and Longitude: a minus sign left out moves a stop to the other side of the world.</p>
                """
        }
        if let poi = model.poi, poi.draft != nil {
            let path = "/pois/\(poi.id.uuidString.lowercased())"
            func draftButton(_ action: String, _ label: String, _ className: String) -> HTML {
                Forms.post("\(path)/draft\(query(model.tour))", csrf: model.csrf, class: "inline",
                           Forms.hidden("version", String(poi.version)) + Forms.hidden("draftAction", action) + Forms.submit(label, class: className))
            }
            more += """
                <div class="notice warning drafts" role="status"><p><strong>Unpublished changes.</strong> The phones still show the \
                published version of this stop; the form shows your changes. They go live when you publish them here, or with its tour.</p>
                <div class="actions">\(draftButton("publish", "Publish changes", "primary")) \(draftButton("discard", "Discard changes", ""))</div></div>
                """
        }
        if let poi = model.poi {
            // A POI's own status (DESIGN.md, "Places on their own"), sent through the same form as its drafts.
            let path = "/pois/\(poi.id.uuidString.lowercased())"
            let published = poi.status == .published
            let button = Forms.post("\(path)/draft\(query(model.tour))", csrf: model.csrf, class: "inline",
                                    Forms.hidden("version", String(poi.version)) + Forms.hidden("draftAction", published ? "unlist" : "list")
                                        // Secondary: the page's one primary action is its Save (or Publish changes).
                                        + Forms.submit(published ? "Unpublish place" : "Publish as a place", class: ""))
            let state: HTML = published
                ? "<strong>Published as a place:</strong> phones find it when they browse places, search or look nearby, with or without a tour."
                : "<strong>Not published as a place:</strong> phones see it only as a stop of a published tour."
            more += """
                <div class="notice placestatus" role="status"><p>\(state)</p><div class="actions">\(button)</div></div>
                """
        }
        if let poi = model.poi {
            let path = "/pois/\(poi.id.uuidString.lowercased())"
            let delete: HTML = model.canDelete ? "<a class=\"button danger\" href=\"\(path)/delete\(query(model.tour))\">Delete</a>" : .empty
            more += """
                <div class="actions"><a class="button" href="\(path)/links\(query(model.tour))">Manage Multimedia Links</a>
                <a class="button" href="\(path)/preview\(query(model.tour))">Preview POI</a>
                <a class="button" href="\(path)/history\(query(model.tour))">History</a> \(delete)</div>
                <p class="muted">Version \(poi.version).\(model.tour == nil ? "" : " Stop of \(model.tour!.content.name).")</p>
                """
        }
        let cancel = model.tour.map { "/tours/\($0.id.uuidString.lowercased())" } ?? "/pois"
        return """
            <h1>Manage Point of Interest</h1>
            \(more)
            \(model.problem.map(CommonPages.unavailableBox))
            \(conflict)
            \(Forms.errorSummary(model.errors, fields: PoiForm.fields))
            \(Forms.post(model.action, csrf: model.csrf, version + fields + "<div class=\"actions\">\(Forms.submit("Save"))<a href=\"\(cancel)\">Cancel</a></div>"))
            """
    }

    // MARK: links

    struct LinkForm {
        var name = ""
        var type = MediaType.page.rawValue
        var url = ""

        init() {}
        init(_ link: MediaLink) { name = link.name; type = link.type.rawValue; url = link.url }
        init(_ form: FormData) { name = form["name"]; type = form["type"]; url = form["url"] }
    }

    static func linkFields(_ form: LinkForm, errors: [String: String]) -> HTML {
        Forms.text("Link Name", name: "name", value: form.name, error: errors["name"], required: true)
            + Forms.select("Media Type", name: "type", options: MediaType.allCases.map { ($0.rawValue, mediaLabel($0)) }, selected: form.type,
                           error: errors["type"])
            + Forms.text("URL", name: "url", value: form.url, error: errors["url"], type: "url", required: true, hint: "An http or https address.")
    }

    /// The media library's pictures as thumbnails under Main Pictures: Add puts a picture's address on a line of its own
    /// (admin.js); without script each shows the address to copy.
    static func picker(_ model: ManageModel) -> HTML {
        guard !model.pictures.isEmpty else {
            return "<p class=\"muted\">No pictures in the media library yet: upload them on the <a href=\"/media\">Media</a> page.</p>"
        }
        let items: [HTML] = model.pictures.map { item in
            let url = "\(model.feedPublicURL)/v1/media/\(item.content.sha256)"
            let alt = item.content.altText.map { $0.isEmpty ? "no alt text yet" : "alt: \($0)" } ?? "no alt text yet"
            return """
                <li><img src="\(url)?w=160" alt="" loading="lazy"><span class="name">\(item.content.title)</span>\
                <span class="muted">\(alt)</span>\
                <button type="button" class="secondary" data-add-picture="\(url)" hidden>Add <span class="visually-hidden">\(item.content.title)</span></button>\
                <code class="copy">\(url)</code></li>
                """
        }
        return """
            <details class="media-picker"><summary>Choose pictures from the media library (\(model.pictures.count))</summary>
            <ul>\(items)</ul></details>
            """
    }

    static func mediaLabel(_ type: MediaType) -> String {
        switch type {
        case .page: "Web Page"
        case .video: "Video"
        case .audio: "Audio"
        case .image: "Image"
        }
    }

    struct LinksModel {
        var poi: PoiState
        var tour: TourState?
        var form: LinkForm
        var errors: [String: String] = [:]
        var problem: String? = nil
        var conflict: Bool = false
        var canEdit: Bool
        var csrf: String
    }

    static func links(_ model: LinksModel) -> HTML {
        let poi = model.poi
        let path = "/pois/\(poi.id.uuidString.lowercased())/links"
        func table(_ title: String, _ filter: (MediaType) -> Bool) -> HTML {
            let rows: [HTML] = poi.working.links.enumerated().filter { filter($0.element.type) }.map { index, link in
                let actions: HTML = model.canEdit ? """
                    <td><a href="\(path)/\(index)/edit\(query(model.tour))">Edit</a></td><td><a href="\(path)/\(index)/delete\(query(model.tour))">Delete</a></td>
                    """ : "<td></td><td></td>"
                return """
                    <tr><td>\(link.name)</td><td>\(mediaLabel(link.type))</td><td><a href="\(safeURL(link.url))" rel="noopener noreferrer">\(link.url)</a></td>\(actions)</tr>
                    """
            }
            return """
                <h2>\(title)</h2>
                \(rows.isEmpty ? "<p class=\"muted\">None.</p>" : """
                    <table><thead><tr><th scope="col">Link Name</th><th scope="col">Media Type</th><th scope="col">URL Address</th>
                    <th scope="col"><span class="visually-hidden">Edit</span></th><th scope="col"><span class="visually-hidden">Delete</span></th></tr></thead>
                    <tbody>\(rows)</tbody></table>
                    """ as HTML)
                """
        }
        let add: HTML = model.canEdit ? """
            <h2>Add New Link</h2>
            \(model.problem.map(CommonPages.unavailableBox))
            \(model.conflict ? "<div class=\"conflict\" role=\"alert\"><p><strong>This point of interest was changed by someone else while you were editing it.</strong> The links above are the newer version; your link was not added. Save again to add it.</p></div>" as HTML : .empty)
            \(Forms.errorSummary(model.errors, fields: ["name", "type", "url"]))
            \(Forms.post("\(path)\(query(model.tour))", csrf: model.csrf, Forms.hidden("version", String(poi.version)) + linkFields(model.form, errors: model.errors)
                + "<div class=\"actions\">\(Forms.submit("Save"))</div>"))
            """ : .empty
        return """
            <h1>Manage Point of Interest - Multimedia Links</h1>
            <p>Links of <strong>\(poi.content.name)</strong>. <a href="/pois/\(poi.id.uuidString.lowercased())/preview\(query(model.tour))">Preview POI</a></p>
            \(table("Related Links") { $0 == .page })
            \(table("Multimedia Links") { $0 != .page })
            \(add)
            """
    }

    static func editLink(poi: PoiState, tour: TourState?, index: Int, form: LinkForm, errors: [String: String], problem: String?,
                         conflict: Bool, csrf: String) -> HTML {
        let path = "/pois/\(poi.id.uuidString.lowercased())/links"
        return """
            <h1>Edit Link</h1>
            \(problem.map(CommonPages.unavailableBox))
            \(conflict ? "<div class=\"conflict\" role=\"alert\"><p><strong>This point of interest was changed by someone else while you were editing it.</strong> Your change was not saved; check the links and try again.</p></div>" as HTML : .empty)
            \(Forms.errorSummary(errors, fields: ["name", "type", "url"]))
            \(Forms.post("\(path)/\(index)\(query(tour))", csrf: csrf, Forms.hidden("version", String(poi.version)) + linkFields(form, errors: errors)
                + "<div class=\"actions\">\(Forms.submit("Save"))<a href=\"\(path)\(query(tour))\">Cancel</a></div>"))
            """
    }

    // MARK: preview

    /// The POI as the phone shows it (the feed's POI page): name, pictures, summary, description, details, links.
    static func preview(poi: PoiState, tour: TourState?) -> HTML {
        let content = poi.content
        let pictures: [HTML] = content.pictures.map { "<img src=\"\(safeURL($0))\" alt=\"\(content.name)\">" }
        var details: [HTML] = []
        if !content.buildings.isEmpty { details.append("<p><strong>Buildings:</strong> \(content.buildings.joined(separator: ", "))</p>") }
        if let address = content.address { details.append("<p><strong>Address:</strong> \(address)</p>") }
        if let phone = content.phone { details.append("<p><strong>Phone:</strong> \(phone)</p>") }
        if let website = content.website { details.append("<p><a href=\"\(safeURL(website))\" rel=\"noopener noreferrer\">Website</a></p>") }
        if let hours = content.openingHours { details.append("<p><strong>Opening hours:</strong> \(hours)</p>") }
        let links: [HTML] = content.links.map {
            "<li><a href=\"\(safeURL($0.url))\" rel=\"noopener noreferrer\">\($0.name)</a> <span class=\"muted\">(\(mediaLabel($0.type)))</span></li>"
        }
        return """
            <h1>Preview POI</h1>
            <p class="muted">As the phone shows it.</p>
            <div class="phone">
            <h2>\(content.name)</h2>
            \(pictures)
            \(content.summary.isEmpty ? .empty : "<p><em>\(content.summary)</em></p>" as HTML)
            \(content.description.isEmpty ? .empty : "<p>\(content.description)</p>" as HTML)
            \(details)
            \(links.isEmpty ? .empty : "<ul>\(links)</ul>" as HTML)
            </div>
            <p><a class="button" href="/pois/\(poi.id.uuidString.lowercased())\(query(tour))">Back to Manage POI</a></p>
            """
    }
}
