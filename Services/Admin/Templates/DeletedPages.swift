import Foundation
import Shared

/// "Recently deleted" (`/deleted`): tours and POIs deleted in the last 30 days (catalog's `catalog.recently-deleted`),
/// each with a Restore that brings its last version back, unpublished.
enum DeletedPages {
    static func page(_ entries: [CatalogHistoryEntry], days: Int, clock: SiteClock, csrf: String) -> HTML {
        let rows: [HTML] = entries.compactMap { entry in
            let (kind, path, name, version, detail): (String, String, String, Int, String)
            if let tour = entry.tour {
                (kind, path, name, version) = ("Tour", "/deleted/tours/\(tour.id.uuidString.lowercased())", tour.working.content.name, tour.version)
                detail = "\(tour.stops.count == 1 ? "1 stop" : "\(tour.stops.count) stops"); comes back unpublished, with the stops that still exist"
            } else if let poi = entry.poi {
                (kind, path, name, version) = ("Point of interest", "/deleted/pois/\(poi.id.uuidString.lowercased())", poi.working.name, poi.version)
                detail = "comes back unpublished and in no tour: add it back from each tour's page"
            } else {
                return nil
            }
            // The tombstone's version (the delete's): a second Restore, or one after it was restored and changed, is a conflict.
            let restore = Forms.post(path, csrf: csrf, class: "inline",
                                     Forms.hidden("revertTo", String(version)) + Forms.hidden("version", String(version + 1))
                                        + Forms.submit("Restore \(name)", class: ""))
            return """
                <tr><td>\(name)<br><span class="muted">\(detail)</span></td><td>\(kind)</td>\
                <td>\(CommonPages.time(entry.at, clock: clock))</td><td>\(entry.actor)</td><td>\(restore)</td></tr>
                """
        }
        return """
            <h1>Recently deleted</h1>
            <p>Tours and points of interest deleted in the last \(days) days. Restoring one brings back its last version as \
            an unpublished draft: check it, then publish it again.</p>
            \(rows.isEmpty ? "<p class=\"muted\">Nothing was deleted in the last \(days) days.</p>" : """
                <table id="deleted-table"><thead><tr><th scope="col">Name</th><th scope="col">Kind</th><th scope="col">Deleted</th>\
                <th scope="col">By</th><th scope="col"><span class="visually-hidden">Restore</span></th></tr></thead><tbody>\(rows)</tbody></table>
                """ as HTML)
            """
    }
}
