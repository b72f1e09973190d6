import Foundation
import Shared

/// The History page of a tour or POI (catalog's audit log, through `catalog.history`): each change newest first,
/// who made it and when, each field's value before and after, and a revert to any earlier version.
enum HistoryPages {
    /// One version as the page shows it: the fields by label, as text.
    struct Version {
        var number: Int?
        var at: Date
        var actor: String
        var action: CatalogAction
        /// What happened, in words (the action, and for a status change or schedule, which).
        var summary: String
        var fields: [(label: String, value: String)]
        /// The state after this change had unpublished changes (its fields show them).
        var isDraft = false
    }

    static func tourVersions(_ entries: [CatalogHistoryEntry], clock: SiteClock, poiNames: (UUID) -> String) -> [Version] {
        entries.enumerated().map { index, entry in
            Version(number: entry.tour?.version, at: entry.at, actor: entry.actor, action: entry.action,
                    summary: summary(entry.action, after: entry.tour, before: entries.dropFirst(index + 1).first?.tour, clock: clock), fields: entry.tour.map { tour in
                // A route is shown by its size, not its GeoJSON: thousands of points in every version would swamp the page.
                fields(TourForm(tour)).map { $0.label == "Route" ? ($0.label, routeSummary(tour.working.content.route)) : $0 }
                    + [("Status", CommonPages.statusLabel(tour.status)),
                                          ("Stops", tour.working.stops.enumerated().map { "\($0.offset + 1). \(poiNames($0.element))" }.joined(separator: "\n"))]
            } ?? [], isDraft: entry.tour?.draft != nil)
        }
    }

    /// "3 points, 412 m", or empty for none.
    static func routeSummary(_ route: LineString?) -> String {
        guard let route else { return "" }
        return "\(route.coordinates.count) points, \(TourMap.distance(route.lengthMeters))"
    }

    static func poiVersions(_ entries: [CatalogHistoryEntry]) -> [Version] {
        entries.map { entry in
            Version(number: entry.poi?.version, at: entry.at, actor: entry.actor, action: entry.action,
                    summary: poiSummary(entry),
                    fields: entry.poi.map { fields(PoiForm($0)) + [("Links", $0.working.links.map { "\($0.name): \($0.url)" }.joined(separator: "\n"))] } ?? [],
                    isDraft: entry.poi?.draft != nil)
        }
    }

    private static func fields<Form: MergeableForm>(_ form: Form) -> [(label: String, value: String)] {
        Form.mergeFields.map { ($0.label, form[keyPath: $0.value]) }
    }

    /// A POI's change in words: its own status, or its changes published by its tour's publish (by hand or schedule).
    static func poiSummary(_ entry: CatalogHistoryEntry) -> String {
        switch entry.action {
        case .setPoiStatus: entry.poi?.status == .published ? "Published as a place" : "Unpublished as a place"
        case .setTourStatus, .applyTourSchedule: "Changes published with its tour"
        default: actionLabel(entry.action)
        }
    }

    /// A tour's change in words: a status change says which, a schedule says what and when.
    static func summary(_ action: CatalogAction, after: TourState?, before: TourState?, clock: SiteClock) -> String {
        guard let after else { return actionLabel(action) }
        switch action {
        case .setTourStatus, .applyTourSchedule:
            let scheduled = action == .applyTourSchedule ? " (as scheduled)" : ""
            if action == .applyTourSchedule, let failure = after.schedule?.failure { return "Scheduled change not made: \(failure)" }
            switch after.status {
            case .published: return (before?.status == .published ? "Changes published" : "Published") + scheduled
            case .draft: return (before?.status == .archived ? "Restored as draft" : "Unpublished") + scheduled
            case .archived: return "Archived"
            }
        case .scheduleTour:
            guard let schedule = after.schedule else { return "Schedule cancelled" }
            let what = schedule.status == .published ? (after.status == .published ? "Publishing the changes" : "Publishing") : "Unpublishing"
            return "\(what) scheduled for \(clock.text(schedule.at))"
        default:
            return actionLabel(action)
        }
    }

    static func actionLabel(_ action: CatalogAction) -> String {
        switch action {
        case .createTour, .createPoi: "Created"
        case .updateTour, .updatePoi: "Edited"
        case .setTourStops: "Stops changed"
        case .setTourStatus, .setPoiStatus: "Status changed"
        case .deleteTour: "Deleted"
        case .deletePoi: "A stop was deleted"
        case .revertTour, .revertPoi: "Reverted"
        case .importBatch: "Imported"
        case .renameCategory: "Category renamed"
        case .discardTourDraft, .discardPoiDraft: "Unpublished changes discarded"
        case .publishPoi: "Changes published"
        case .scheduleTour: "Schedule changed"
        case .applyTourSchedule: "Scheduled change made"
        default: action.rawValue
        }
    }

    static func page(title: String, versions: [Version], current: Int, revertAction: String, csrf: String, clock: SiteClock) -> HTML {
        let rows: [HTML] = versions.enumerated().map { index, version in
            let older = versions.dropFirst(index + 1).first
            var changes: [HTML] = []
            for (position, field) in version.fields.enumerated() {
                let before = older?.fields.indices.contains(position) == true ? older!.fields[position].value : nil
                guard before != field.value, !(before == nil && field.value.isEmpty) else { continue }
                let was: HTML = before.map { "<del>\($0.isEmpty ? "(empty)" : $0)</del> → " } ?? .empty
                changes.append("<dt>\(field.label)</dt><dd>\(was)<ins>\(field.value.isEmpty ? "(empty)" : field.value)</ins></dd>")
            }
            // A status change or schedule changes no text: its summary says all.
            let textual: Set<CatalogAction> = [.updateTour, .updatePoi, .revertTour, .revertPoi, .importBatch, .setTourStops]
            let change: HTML = version.fields.isEmpty ? "<p>Deleted.</p>"
                : !changes.isEmpty ? "<dl class=\"changes\">\(changes)</dl>"
                : textual.contains(version.action) ? "<p class=\"muted\">No field changed.</p>" : .empty
            var revert: HTML = .empty
            if let number = version.number, number != current, !version.fields.isEmpty {
                revert = Forms.post(revertAction, csrf: csrf, class: "inline",
                                    Forms.hidden("version", String(current)) + Forms.hidden("revertTo", String(number))
                                        + Forms.submit("Revert to version \(number)", class: ""))
            } else if version.number == current {
                revert = "<span class=\"muted\">Current</span>"
            }
            return """
                <tr><td>\(version.number.map(String.init) ?? "–")</td><td>\(clock.text(version.at, seconds: true))</td><td>\(version.actor)</td>
                <td><strong>\(version.summary)</strong>\(version.isDraft ? " <span class=\"muted\">(unpublished changes)</span>" as HTML : .empty)\(change)</td>
                <td>\(revert)</td></tr>
                """
        }
        return """
            <h1>History of \(title)</h1>
            <p>Every change, newest first, with what each field was before and after. Reverting brings a version's content back as a \
            new version: nothing is lost, and the revert shows here too.</p>
            \(rows.isEmpty ? "<p class=\"muted\">No changes recorded.</p>" : """
                <table class="history"><thead><tr><th scope="col">Version</th><th scope="col">When</th><th scope="col">Who</th>
                <th scope="col">Change</th><th scope="col"><span class="visually-hidden">Revert</span></th></tr></thead><tbody>\(rows)</tbody></table>
                """ as HTML)
            """
    }
}
