import Foundation
import Shared

/// What the tour form holds: the typed text, kept as typed when it is refused.
struct TourForm: MergeableForm {
    var name = ""
    var summary = ""
    var purpose = ""
    var version: Int?

    init() {}

    /// The tour as editors see it: its draft when there is one.
    init(_ tour: TourState) {
        let content = tour.working.content
        name = content.name
        summary = content.summary
        purpose = content.purpose
        version = tour.version
    }

    init(_ form: FormData) {
        name = form["name"]
        summary = form["summary"]
        purpose = form["purpose"]
        version = form.int("version")
    }

    func content(legacyId: Int?) -> TourContent {
        TourContent(name: name.trimmingCharacters(in: .whitespacesAndNewlines), summary: summary.trimmingCharacters(in: .whitespacesAndNewlines),
                    purpose: purpose.trimmingCharacters(in: .whitespacesAndNewlines), legacyId: legacyId)
    }

    static let fields: Set<String> = ["name", "summary", "purpose"]

    // Computed: key paths are not Sendable.
    static var mergeFields: [(name: String, label: String, value: WritableKeyPath<TourForm, String>)] {
        [
            ("name", "Tour's Name", \.name), ("summary", "Summary", \.summary), ("purpose", "Tour's Purpose", \.purpose),
        ]
    }
}

/// "Tours Administration", "Create New Tour" and "Manage Tour".
enum TourPages {
    static func list(tours: [TourState], access: Access) -> HTML {
        let create: HTML = access.isOwner ? "<p><a class=\"button primary\" href=\"/tours/new\">Create New Tour</a></p>" : .empty
        let rows: [HTML] = tours.map { tour in
            let description = tour.content.summary.isEmpty ? tour.content.purpose : tour.content.summary
            let delete: HTML = access.isOwner ? "<a href=\"/tours/\(tour.id.uuidString.lowercased())/delete\">Delete</a>" : .empty
            return """
                <tr><td><a href="/tours/\(tour.id.uuidString.lowercased())">\(tour.content.name)</a></td>
                <td>\(description)</td><td>\(CommonPages.statusBadge(tour.status))</td><td>\(tour.stops.count)</td><td>\(delete)</td></tr>
                """
        }
        let table: HTML = rows.isEmpty
            ? "<p class=\"muted\">\(access.isOwner ? "There are no tours yet." : "No tours are assigned to you yet; an owner can assign you to a tour.")</p>"
            : """
                <p>Or edit an existing Tour from the table below...</p>
                <table><thead><tr><th scope="col">Tour's Name</th><th scope="col">Description</th><th scope="col">Status</th>
                <th scope="col">Stops</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
                <tbody>\(rows)</tbody></table>
                """
        return "<h1>Tours Administration</h1>\(create)\(table)"
    }

    static func fields(_ form: TourForm, errors: [String: String]) -> HTML {
        Forms.text("Tour's Name", name: "name", value: form.name, error: errors["name"], required: true)
            + Forms.textarea("Summary", name: "summary", value: form.summary, error: errors["summary"], rows: 2,
                             hint: "One or two sentences for the phones' list of tours.")
            + Forms.textarea("Tour's Purpose", name: "purpose", value: form.purpose, error: errors["purpose"], rows: 4)
    }

    static func new(_ form: TourForm, errors: [String: String], problem: String?, csrf: String) -> HTML {
        """
        <h1>Create New Tour</h1>
        \(problem.map(CommonPages.unavailableBox))
        \(Forms.errorSummary(errors, fields: TourForm.fields))
        \(Forms.post("/tours", csrf: csrf, fields(form, errors: errors) + "<div class=\"actions\">\(Forms.submit("Save"))<a href=\"/tours\">Cancel</a></div>"))
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
        /// Why the last Publish was refused (no stops, or a stop far from the others).
        var publishRefusal: String?
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
    }

    static func manage(_ model: ManageModel) -> HTML {
        let tour = model.tour
        let tourPath = "/tours/\(tour.id.uuidString.lowercased())"
        let conflict = model.conflict
        let version = Forms.hidden("version", String(model.form.version ?? tour.version))
        let details = Forms.post(tourPath, csrf: model.csrf, class: "tour-form",
                                 version + (model.base ?? TourForm(tour)).baseFields()
                                    + fields(model.form, errors: model.errors.merging(model.fieldNotes) { error, _ in error })
                                    + "<div class=\"actions\">\(Forms.submit("Save"))</div>")

        func statusButton(_ status: ContentStatus, _ label: String, _ className: String = "") -> HTML {
            Forms.post("\(tourPath)/status", csrf: model.csrf, class: "inline",
                       Forms.hidden("version", String(tour.version)) + Forms.hidden("status", status.rawValue) + Forms.submit(label, class: className))
        }
        var statusActions: [HTML] = []
        if tour.status != .published { statusActions.append(statusButton(.published, "Publish", "primary")) }
        let draftStops = model.stops.filter { $0.draft != nil }.count
        var drafts: HTML = .empty
        if tour.status == .published && (tour.draft != nil || draftStops > 0) {
            let stopsNote = draftStops == 0 ? "" : " (and to \(counted(draftStops, "stop")))"
            let discard: HTML = tour.draft == nil ? .empty : Forms.post("\(tourPath)/discard", csrf: model.csrf, class: "inline",
                Forms.hidden("version", String(tour.version)) + Forms.submit("Discard changes to the tour", class: ""))
            drafts = """
                <div class="notice warning drafts" role="status"><p><strong>Unpublished changes.</strong> The phones still show the \
                published version; your changes to this tour\(stopsNote) go live when you publish them.</p>
                <div class="actions">\(statusButton(.published, "Publish changes", "primary")) \(discard)</div></div>
                """
        }
        let refusal: HTML = model.publishRefusal.map { message in
            let anyway: HTML = message.contains("confirm to publish anyway")
                ? Forms.post("\(tourPath)/status", csrf: model.csrf, class: "inline",
                             Forms.hidden("version", String(tour.version)) + Forms.hidden("status", ContentStatus.published.rawValue)
                                + Forms.hidden("confirmFarStops", "1") + Forms.submit("Publish anyway", class: "danger"))
                : .empty
            return "<div class=\"notice error\" role=\"alert\"><p><strong>Not published.</strong> \(message)</p>\(anyway)</div>"
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
                <tr><td>\(index + 1)</td>
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
            <a href="\(tourPath)/history">History</a></p>
            <div class="actions">\(statusActions)</div>
            \(refusal)
            \(drafts)
            \(model.problem.map(CommonPages.unavailableBox))
            \(conflict)
            \(Forms.errorSummary(model.errors, fields: TourForm.fields))
            \(details)
            <h2>Points of Interest</h2>
            <p><a class="button primary" href="\(tourPath)/pois/new">Add New POI</a></p>
            \(stops)
            \(addExisting)
            <h2>Map</h2>
            \(TourMap.map(stops: model.stops, map: model.map))
            \(editorsSection)
            \(delete)
            """
    }
}
