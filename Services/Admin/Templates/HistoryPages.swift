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
        var fields: [(label: String, value: String)]
        /// The state after this change had unpublished changes (its fields show them).
        var isDraft = false
    }

    static func tourVersions(_ entries: [CatalogHistoryEntry], poiNames: (UUID) -> String) -> [Version] {
        entries.map { entry in
            Version(number: entry.tour?.version, at: entry.at, actor: entry.actor, action: entry.action, fields: entry.tour.map { tour in
                fields(TourForm(tour)) + [("Status", CommonPages.statusLabel(tour.status)),
                                          ("Stops", tour.working.stops.enumerated().map { "\($0.offset + 1). \(poiNames($0.element))" }.joined(separator: "\n"))]
            } ?? [], isDraft: entry.tour?.draft != nil)
        }
    }

    static func poiVersions(_ entries: [CatalogHistoryEntry]) -> [Version] {
        entries.map { entry in
            Version(number: entry.poi?.version, at: entry.at, actor: entry.actor, action: entry.action,
                    fields: entry.poi.map { fields(PoiForm($0)) + [("Links", $0.working.links.map { "\($0.name): \($0.url)" }.joined(separator: "\n"))] } ?? [],
                    isDraft: entry.poi?.draft != nil)
        }
    }

    private static func fields<Form: MergeableForm>(_ form: Form) -> [(label: String, value: String)] {
        Form.mergeFields.map { ($0.label, form[keyPath: $0.value]) }
    }

    static func actionLabel(_ action: CatalogAction) -> String {
        switch action {
        case .createTour, .createPoi: "Created"
        case .updateTour, .updatePoi: "Edited"
        case .setTourStops: "Stops changed"
        case .setTourStatus: "Status changed"
        case .deleteTour: "Deleted"
        case .deletePoi: "A stop was deleted"
        case .revertTour, .revertPoi: "Reverted"
        case .importBatch: "Imported"
        case .renameCategory: "Category renamed"
        default: action.rawValue
        }
    }

    static func page(title: String, versions: [Version], current: Int, revertAction: String, csrf: String) -> HTML {
        let rows: [HTML] = versions.enumerated().map { index, version in
            let older = versions.dropFirst(index + 1).first
            var changes: [HTML] = []
            for (position, field) in version.fields.enumerated() {
                let before = older?.fields.indices.contains(position) == true ? older!.fields[position].value : nil
                guard before != field.value, !(before == nil && field.value.isEmpty) else { continue }
                let was: HTML = before.map { "<del>\($0.isEmpty ? "(empty)" : $0)</del> → " } ?? .empty
                changes.append("<dt>\(field.label)</dt><dd>\(was)<ins>\(field.value.isEmpty ? "(empty)" : field.value)</ins></dd>")
            }
            let change: HTML = version.fields.isEmpty ? "<p>Deleted.</p>" : changes.isEmpty ? "<p class=\"muted\">No field changed.</p>" : "<dl class=\"changes\">\(changes)</dl>"
            var revert: HTML = .empty
            if let number = version.number, number != current, !version.fields.isEmpty {
                revert = Forms.post(revertAction, csrf: csrf, class: "inline",
                                    Forms.hidden("version", String(current)) + Forms.hidden("revertTo", String(number))
                                        + Forms.submit("Revert to version \(number)", class: ""))
            } else if version.number == current {
                revert = "<span class=\"muted\">Current</span>"
            }
            return """
                <tr><td>\(version.number.map(String.init) ?? "–")</td><td>\(timestamp(version.at))</td><td>\(version.actor)</td>
                <td><strong>\(actionLabel(version.action))</strong>\(version.isDraft ? " <span class=\"muted\">(unpublished changes)</span>" as HTML : .empty)\(change)</td>
                <td>\(revert)</td></tr>
                """
        }
        return """
            <h1>History of \(title)</h1>
            <p>Every change, newest first, with what each field was before and after. Reverting brings a version's content back as a \
            new version: nothing is lost, and the revert shows here too.</p>
            \(rows.isEmpty ? "<p class=\"muted\">No changes recorded.</p>" : """
                <table class="history"><thead><tr><th scope="col">Version</th><th scope="col">When (UTC)</th><th scope="col">Who</th>
                <th scope="col">Change</th><th scope="col"><span class="visually-hidden">Revert</span></th></tr></thead><tbody>\(rows)</tbody></table>
                """ as HTML)
            """
    }

    static func timestamp(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return formatter.string(from: date)
    }
}
