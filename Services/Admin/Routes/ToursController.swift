import Foundation
import Hummingbird
import Shared

/// "Tours Administration" and "Manage Tour": the tour list, create, edit, publish, stops, editors, delete.
/// Reads from the projection; every change is a catalog command.
struct ToursController {
    let projection: AdminCatalogProjection
    let writer: any CatalogWriter
    let editors: any TourEditorRepository
    let users: any UserRepository
    let map: AdminMap
    /// `FEED_PUBLIC_URL`, for the QR codes' links.
    let feedPublicURL: String
    /// `SITE_TIME_ZONE`: schedules are typed and shown in it, history too.
    let clock: SiteClock
    /// `SITE_LANGUAGES`: what the form translates into.
    let languages: SiteLanguages

    func register(on router: RouterGroup<AdminRequestContext>) {
        router.get("/tours", use: list)
        router.get("/tours/new", use: newForm)
        router.post("/tours", use: create)
        router.post("/tours/bulk", use: bulk)
        router.get("/tours/:id", use: manage)
        router.post("/tours/:id", use: save)
        router.post("/tours/:id/status", use: setStatus)
        router.post("/tours/:id/discard", use: discardDraft)
        router.post("/tours/:id/schedule", use: schedule)
        router.post("/tours/:id/stops", use: changeStops)
        router.post("/tours/:id/editors", use: changeEditors)
        router.get("/tours/:id/history", use: history)
        router.get("/tours/:id/preview", use: preview)
        router.get("/tours/:id/qr", use: qrCodes)
        router.get("/tours/:id/preview/stops/:poi", use: previewStop)
        router.post("/tours/:id/revert", use: revert)
        router.get("/tours/:id/delete", use: confirmDelete)
        router.post("/tours/:id/delete", use: delete)
    }

    static func path(_ id: UUID) -> String { "/tours/\(id.uuidString.lowercased())" }

    func tour(_ context: AdminRequestContext) throws -> TourState {
        guard let tour = projection.tour(try context.id("id")) else { throw AdminError.notFound("There is no such tour (it may have been deleted).") }
        return tour
    }

    @Sendable func list(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let access = try await context.access(editors)
        try access.requireContentRole()
        let search = ListSearch(request)
        let tours = projection.content.sortedTours.filter {
            // The list shows the published name; the draft's is found too.
            access.canEdit(tour: $0.id) && search.matches($0.content.name, $0.content.summary, $0.content.purpose, $0.working.content.name,
                                                          $0.working.content.summary, $0.working.content.purpose)
        }
        return AdminPage(title: "Tours Administration", context: context, notice: Notice.from(request),
                         body: TourPages.list(tours: tours, search: search, access: access, csrf: context.csrfToken, languages: languages)).response()
    }

    /// Publish, unpublish or delete the ticked tours (`tour` = `id:version` each, as the list showed them). Each is its
    /// own command with the version the list showed, refused as it would be on its own page; the list comes back saying
    /// what was done and what was not, and why.
    @Sendable func bulk(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let access = try await context.access(editors)
        try access.requireContentRole()
        let action = context.form["bulk"]
        guard ["publish", "unpublish", "delete"].contains(action) else { throw AdminError.badRequest("Choose Publish, Unpublish or Delete.") }
        if action == "delete" { try access.requireOwner("delete tours") }
        var chosen: [(tour: TourState, version: Int)] = []
        for value in context.form.all("tour") {
            let parts = value.split(separator: ":")
            guard parts.count == 2, let id = UUID(uuidString: String(parts[0])), let version = Int(parts[1]) else {
                throw AdminError.badRequest("A ticked tour could not be read; reload the list and try again.")
            }
            // A tour deleted since the list was shown is gone already: nothing to do for it.
            guard let tour = projection.tour(id), !chosen.contains(where: { $0.tour.id == id }) else { continue }
            try access.requireEdit(tour: tour.id)
            chosen.append((tour, version))
        }
        guard !chosen.isEmpty else {
            return listPage(context: context, access: access, notice: .warning("Tick the tours to act on first."))
        }
        if action == "delete", context.form["confirm"] != "1" {
            return AdminPage(title: "Delete tours", context: context, breadcrumbs: [("Tours Administration", "/tours"), ("Delete tours", nil)],
                             body: TourPages.confirmBulkDelete(chosen.map(\.tour), csrf: context.csrfToken)).response()
        }
        var done: [String] = [], refused: [String] = []
        for (tour, version) in chosen {
            let name = tour.working.content.name
            var command = CatalogCommand(action: action == "delete" ? .deleteTour : .setTourStatus, actor: access.user.email, entityId: tour.id,
                                         expectedVersion: version)
            if action != "delete" { command.status = action == "publish" ? .published : .draft }
            let result: CatalogCommandResult
            do {
                result = try await writer.execute(command, for: context)
            } catch {
                refused.append("\(name) (\(error.description))")
                continue
            }
            switch result.outcome {
            case .applied:
                if action == "delete" { try await editors.removeTour(tour.id) }
                done.append(name)
            case .conflict:
                refused.append("\(name) (changed by someone else since the list was shown: reload and check it)")
            case .rejected:
                let reason = result.errors.first?.message ?? result.message ?? "refused"
                refused.append("\(name) (\(reason); see its page)")
            }
        }
        let verb = ["publish": "Published", "unpublish": "Unpublished", "delete": "Deleted"][action] ?? action
        var text = done.isEmpty ? "" : "\(verb): \(done.joined(separator: ", "))."
        if !refused.isEmpty { text += (text.isEmpty ? "" : " ") + "Not \(verb.lowercased()): \(refused.joined(separator: "; "))." }
        return listPage(context: context, access: access, notice: refused.isEmpty ? .success(text) : .warning(text))
    }

    private func listPage(context: AdminRequestContext, access: Access, notice: Notice) -> Response {
        let tours = projection.content.sortedTours.filter { access.canEdit(tour: $0.id) }
        return AdminPage(title: "Tours Administration", context: context, notice: notice,
                         body: TourPages.list(tours: tours, search: ListSearch(query: ""), access: access, csrf: context.csrfToken, languages: languages)).response()
    }

    @Sendable func newForm(_ request: Request, context: AdminRequestContext) async throws -> Response {
        try await context.access(editors).requireOwner("create tours")
        return newPage(TourForm(), errors: [:], problem: nil, context: context)
    }

    func newPage(_ form: TourForm, errors: [String: String], problem: String?, context: AdminRequestContext,
                 status: HTTPResponse.Status = .ok) -> Response {
        AdminPage(title: "Create New Tour", context: context, breadcrumbs: [("Tours Administration", "/tours"), ("Create New Tour", nil)],
                  body: TourPages.new(form, errors: errors, problem: problem, csrf: context.csrfToken, languages: languages), status: status).response()
    }

    @Sendable func create(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let access = try await context.access(editors)
        try access.requireOwner("create tours")
        let form = TourForm(context.form)
        let content: TourContent
        switch form.content(legacyId: nil) {
        case .success(let value): content = value
        case .failure(let errors): return newPage(form, errors: errors.byField, problem: nil, context: context, status: .unprocessableContent)
        }
        let command = CatalogCommand(action: .createTour, actor: access.user.email, entityId: UUID.random(), tour: content)
        let result: CatalogCommandResult
        do {
            result = try await writer.execute(command, for: context)
        } catch {
            return newPage(form, errors: [:], problem: error.description, context: context, status: .serviceUnavailable)
        }
        guard result.outcome == .applied, let id = result.entityId else {
            return newPage(form, errors: fieldErrors(result.errors), problem: nil, context: context, status: .unprocessableContent)
        }
        return .redirect(to: "\(Self.path(id))?notice=\(Notice.key("created", for: result))")
    }

    @Sendable func manage(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let tour = try tour(context)
        let access = try await context.access(editors)
        try access.requireEdit(tour: tour.id)
        return try await managePage(tour: tour, form: TourForm(tour), access: access, context: context, notice: Notice.from(request))
    }

    /// What a change that lost a race shows: the details' fields merged (`FormConflict`), or why a stop or status change was not made.
    enum Conflict {
        case details(FormConflict<TourForm>)
        case stale(HTML)
    }

    func managePage(tour: TourState, form: TourForm, errors: [String: String] = [:], conflict: Conflict? = nil, problem: String? = nil,
                    publishRefusal: TourPages.PublishRefusal? = nil, scheduleTyped: String = "",
                    access: Access, context: AdminRequestContext, notice: Notice? = nil, status: HTTPResponse.Status = .ok) async throws -> Response {
        let content = projection.content
        let stops = content.stops(of: tour)
        // Editors may add POIs that their tours already stop at (and no one else's does); owners any POI.
        let addable = content.sortedPois.filter { poi in
            !tour.working.stops.contains(poi.id) && access.canAttach(poi: poi.id, in: content)
        }
        var model = TourPages.ManageModel(tour: tour, stops: stops, form: form, errors: errors, problem: problem,
                                          addable: addable, access: access, csrf: context.csrfToken, map: map, clock: clock, languages: languages)
        model.publishRefusal = publishRefusal
        model.scheduleTyped = scheduleTyped
        switch conflict {
        case .details(let merge):
            model.conflict = merge.box(entity: "tour")
            model.fieldNotes = merge.fieldNotes
        case .stale(let box):
            model.conflict = box
        case nil:
            break
        }
        model.deletablePois = Set(stops.filter { access.canDelete(poi: $0.id, in: content) }.map(\.id))
        if access.isOwner {
            model.editors = try await editors.editors(of: tour.id)
            let assigned = Set(model.editors.map(\.id))
            model.assignable = try await users.users().filter { $0.role == .editor && !assigned.contains($0.id) }
        }
        return AdminPage(title: "Manage Tour", context: context, breadcrumbs: [("Tours Administration", "/tours"), ("Manage Tour", nil)],
                         notice: notice, body: TourPages.manage(model), status: status).response()
    }

    /// Runs a command for this tour's page: a redirect with a notice when applied, else the page again with
    /// the typed values and what went wrong.
    func run(_ command: CatalogCommand, tour: TourState, form: TourForm, access: Access, context: AdminRequestContext,
             notice: String, fragment: String = "") async throws -> Response {
        let viewer = access.user.email
        let result: CatalogCommandResult
        do {
            result = try await writer.execute(command, for: context)
        } catch {
            return try await managePage(tour: tour, form: form, problem: error.description, access: access, context: context,
                                        status: .serviceUnavailable)
        }
        switch result.outcome {
        case .applied:
            return .redirect(to: "\(Self.path(tour.id))?notice=\(Notice.key(notice, for: result))\(fragment)")
        case .rejected:
            var errors = fieldErrors(result.errors)
            let typedAt = command.action == .scheduleTour ? context.form["at"] : ""
            if command.action == .setTourStatus || command.action == .scheduleTour, let message = errors.removeValue(forKey: "stops") {
                let route = command.action == .scheduleTour ? "schedule" : "status"
                let resent = ["status", "scheduleStatus", "at"].compactMap { name in
                    context.form.has(name) ? (name: name, value: context.form[name]) : nil
                }
                let refusal = TourPages.PublishRefusal(message: message, route: route, fields: resent,
                                                       canConfirm: message.contains("confirm to publish anyway"))
                return try await managePage(tour: projection.tour(tour.id) ?? tour, form: form, publishRefusal: refusal, scheduleTyped: typedAt,
                                            access: access, context: context, status: .unprocessableContent)
            }
            if errors.isEmpty, let message = result.message { errors["general"] = message }
            return try await managePage(tour: projection.tour(tour.id) ?? tour, form: form, errors: errors, scheduleTyped: typedAt,
                                        access: access, context: context, status: .unprocessableContent)
        case .conflict:
            let current = result.tour ?? projection.tour(tour.id) ?? tour
            let author = projection.authors.author(of: tour.id, version: current.version, viewer: viewer)
            guard command.action == .updateTour else {
                return try await managePage(tour: current, form: TourForm(current), conflict: .stale(Self.staleBox(command.action, author: author, version: current.version)),
                                            access: access, context: context, status: .conflict)
            }
            // Their changes go into the fields left alone; the fields changed on both sides are marked. The form
            // now carries the newer version as its base, so Save replaces it knowingly.
            var merge = FormConflict(typed: form, base: TourForm.base(in: context.form), current: TourForm(current), author: author,
                                     version: current.version)
            merge.form.version = current.version
            return try await managePage(tour: current, form: merge.form, conflict: .details(merge), access: access, context: context, status: .conflict)
        }
    }

    /// Why a change to the stops, the status or the whole tour was not made: the tour changed since the page was opened.
    static func staleBox(_ action: CatalogAction, author: ChangeAuthors.Author?, version: Int?) -> HTML {
        let consequence = switch action {
        case .setTourStops: "Your change to the stops was not made. The list below is the tour's order now: make the change again if it is still needed."
        case .setTourStatus: "Its status was not changed. Check the tour below, then publish or unpublish again."
        case .scheduleTour: "The schedule was not changed. Check the tour below, then schedule again."
        case .deleteTour: "It was not deleted. Check it below, then delete again."
        case .revertTour: "It was not reverted. Check the tour and its History, then revert again."
        default: "Your change was not made. Check the tour below and make it again."
        }
        return CommonPages.staleBox(entity: "tour", author: author, version: version, consequence: consequence)
    }

    @Sendable func save(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let tour = try tour(context)
        let access = try await context.access(editors)
        try access.requireEdit(tour: tour.id)
        let form = TourForm(context.form)
        let content: TourContent
        switch form.content(legacyId: tour.content.legacyId, translated: tour.working.content.translations) {
        case .success(let value): content = value
        case .failure(let errors):
            return try await managePage(tour: tour, form: form, errors: errors.byField, access: access, context: context, status: .unprocessableContent)
        }
        let command = CatalogCommand(action: .updateTour, actor: access.user.email, entityId: tour.id, expectedVersion: form.version ?? tour.version,
                                     tour: content, asDraft: true)
        return try await run(command, tour: tour, form: form, access: access, context: context, notice: "saved")
    }

    @Sendable func setStatus(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let tour = try tour(context)
        let access = try await context.access(editors)
        try access.requireEdit(tour: tour.id)
        guard let status = ContentStatus(rawValue: context.form["status"]) else { throw AdminError.badRequest("Unknown status.") }
        let command = CatalogCommand(action: .setTourStatus, actor: access.user.email, entityId: tour.id,
                                     expectedVersion: context.form.int("version") ?? tour.version, status: status,
                                     confirmFarStops: context.form["confirmFarStops"] == "1" ? true : nil)
        let notice = switch status {
        case .published: "published"
        case .draft: "unpublished"
        case .archived: "archived"
        }
        return try await run(command, tour: tour, form: TourForm(tour), access: access, context: context, notice: notice)
    }

    /// Set the tour's scheduled publish or unpublish (`at` typed in the site's zone), or cancel it.
    @Sendable func schedule(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let tour = try tour(context)
        let access = try await context.access(editors)
        try access.requireEdit(tour: tour.id)
        var command = CatalogCommand(action: .scheduleTour, actor: access.user.email, entityId: tour.id,
                                     expectedVersion: context.form.int("version") ?? tour.version)
        if context.form["cancel"] != "1" {
            guard let status = ContentStatus(rawValue: context.form["scheduleStatus"]), status != .archived else {
                throw AdminError.badRequest("Choose Publish or Unpublish.")
            }
            guard let at = clock.date(fromLocal: context.form["at"]) else {
                return try await managePage(tour: tour, form: TourForm(tour), errors: ["scheduleAt": "Choose a date and time, e.g. 2026-12-01 09:00."],
                                            scheduleTyped: context.form["at"], access: access, context: context, status: .unprocessableContent)
            }
            command.status = status
            command.scheduleAt = at
            command.confirmFarStops = context.form["confirmFarStops"] == "1" ? true : nil
        }
        return try await run(command, tour: tour, form: TourForm(tour), access: access, context: context,
                             notice: command.scheduleAt == nil ? "unscheduled" : "scheduled")
    }

    @Sendable func discardDraft(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let tour = try tour(context)
        let access = try await context.access(editors)
        try access.requireEdit(tour: tour.id)
        let command = CatalogCommand(action: .discardTourDraft, actor: access.user.email, entityId: tour.id,
                                     expectedVersion: context.form.int("version") ?? tour.version)
        return try await run(command, tour: tour, form: TourForm(tour), access: access, context: context, notice: "discarded")
    }

    /// Move a stop up or down, take it out of the tour, or add an existing POI as the last stop.
    @Sendable func changeStops(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let tour = try tour(context)
        let access = try await context.access(editors)
        try access.requireEdit(tour: tour.id)
        guard let poiId = context.form.uuid("poi") else { throw AdminError.badRequest("Choose a POI.") }
        var stops = tour.working.stops
        switch context.form["move"] {
        case "add":
            guard let poi = projection.poi(poiId) else { throw AdminError.notFound("There is no such POI.") }
            let content = projection.content
            guard access.canAttach(poi: poi.id, in: content) else {
                throw AdminError.forbidden(content.tours(stoppingAt: poi.id).isEmpty
                    ? "That POI is in none of your tours; an owner can add it to this tour."
                    : "That POI belongs to tours you do not edit.")
            }
            if !stops.contains(poiId) { stops.append(poiId) }
        case let move:
            guard let index = stops.firstIndex(of: poiId) else {
                // The page was older than the tour: say so rather than guess.
                let author = projection.authors.author(of: tour.id, version: tour.version, viewer: access.user.email)
                return try await managePage(tour: tour, form: TourForm(tour), conflict: .stale(Self.staleBox(.setTourStops, author: author, version: tour.version)),
                                            access: access, context: context, status: .conflict)
            }
            switch move {
            case "up" where index > 0: stops.swapAt(index, index - 1)
            case "down" where index < stops.count - 1: stops.swapAt(index, index + 1)
            case "remove": stops.remove(at: index)
            case "up", "down": break
            default: throw AdminError.badRequest("Unknown change to the stops.")
            }
        }
        let command = CatalogCommand(action: .setTourStops, actor: access.user.email, entityId: tour.id,
                                     expectedVersion: context.form.int("version") ?? tour.version, stops: stops, asDraft: true)
        // Back where the person was: at the stop moved (or the list, for one added or removed), not the page's top.
        let fragment = stops.contains(poiId) && context.form["move"] != "add" ? "#stop-\(poiId.uuidString.lowercased())" : "#stops"
        return try await run(command, tour: tour, form: TourForm(tour), access: access, context: context, notice: "stops", fragment: fragment)
    }

    @Sendable func changeEditors(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let tour = try tour(context)
        try await context.access(editors).requireOwner("assign editors")
        guard let userId = context.form.uuid("user"), let user = try await users.user(id: userId) else {
            throw AdminError.badRequest("Choose an editor.")
        }
        switch context.form["action"] {
        case "add":
            guard user.role == .editor else { throw AdminError.badRequest("\(user.email) is not an editor; change their role on the Users page first.") }
            try await editors.assign(userId: userId, to: tour.id)
        case "remove":
            try await editors.unassign(userId: userId, from: tour.id)
        default:
            throw AdminError.badRequest("Unknown change to the editors.")
        }
        return .redirect(to: "\(Self.path(tour.id))?notice=editors")
    }

    /// A revert brings back the stops of that version: an editor may bring back only those they could add now
    /// (`Access.canAttach`), so a revert is no way around the rule for adding a stop.
    /// A version the history does not show (older than it goes back) is refused: its stops cannot be checked.
    private func requireAttachable(revertingTo target: Int, of tour: TourState, access: Access, context: AdminRequestContext) async throws {
        let entries: [CatalogHistoryEntry]
        do {
            entries = try await writer.execute(CatalogCommand(action: .history, actor: access.user.email, entityId: tour.id),
                                               requestId: RequestIdMiddleware.id(of: context)).history ?? []
        } catch {
            throw AdminError.unavailable("The tour's history could not be read, so it was not reverted: \(error). Try again in a moment.")
        }
        guard let restored = entries.first(where: { $0.tour?.version == target })?.tour else {
            throw AdminError.forbidden("Version \(target) is not in the history this page shows, so its stops cannot be checked; an owner can revert to it.")
        }
        let content = projection.content
        // Its published stops and its draft's: what a revert brings back is one of them.
        let restoredStops = restored.stops + restored.working.stops
        let taken = Array(Set(restoredStops.filter { !tour.working.stops.contains($0) && content.pois[$0] != nil && !access.canAttach(poi: $0, in: content) }))
        guard taken.isEmpty else {
            let names = taken.compactMap { content.pois[$0]?.content.name }.joined(separator: ", ")
            throw AdminError.forbidden("Version \(target) stops at \(names), which belongs to tours you do not edit (or to none); an owner can revert to it.")
        }
    }

    @Sendable func history(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let tour = try tour(context)
        let access = try await context.access(editors)
        try access.requireEdit(tour: tour.id)
        let entries: [CatalogHistoryEntry]
        do {
            entries = try await writer.execute(CatalogCommand(action: .history, actor: access.user.email, entityId: tour.id),
                                               requestId: RequestIdMiddleware.id(of: context)).history ?? []
        } catch {
            return AdminPage(title: "History", context: context, notice: .error(error.description), body: "<h1>History</h1>",
                             status: .serviceUnavailable).response()
        }
        let content = projection.content
        let versions = HistoryPages.tourVersions(entries, clock: clock) { content.pois[$0]?.content.name ?? "(a deleted POI)" }
        return AdminPage(title: "History", context: context,
                         breadcrumbs: [("Tours Administration", "/tours"), ("Manage Tour", Self.path(tour.id)), ("History", nil)],
                         body: HistoryPages.page(title: tour.working.content.name, versions: versions, current: tour.version,
                                                 revertAction: "\(Self.path(tour.id))/revert", csrf: context.csrfToken, clock: clock)).response()
    }

    /// The tour as phones will show it once published: its draft where there is one, each stop's draft too,
    /// stops' pages rendered by the feed's own `PoiPage`.
    @Sendable func preview(_ request: Request, context: AdminRequestContext) async throws -> Response {
        try await tourPage("Preview", context) { TourPages.preview(tour: $0, stops: projection.content.stops(of: $0)) }
    }

    /// "QR Codes": the tour's code and one per stop, to print (DESIGN.md, "QR codes").
    @Sendable func qrCodes(_ request: Request, context: AdminRequestContext) async throws -> Response {
        try await tourPage("QR Codes", context) { TourPages.qrSheet(tour: $0, stops: projection.content.stops(of: $0), feedPublicURL: feedPublicURL) }
    }

    /// A page about one tour for those who may edit it, titled `title` after Manage Tour in the breadcrumbs.
    private func tourPage(_ title: String, _ context: AdminRequestContext, body: (TourState) -> HTML) async throws -> Response {
        let tour = try tour(context)
        let access = try await context.access(editors)
        try access.requireEdit(tour: tour.id)
        return AdminPage(title: title, context: context,
                         breadcrumbs: [("Tours Administration", "/tours"), ("Manage Tour", Self.path(tour.id)), (title, nil)],
                         body: body(tour)).response()
    }

    /// One stop's page for the preview's frame: the feed's page of the POI's working content, framable by the admin only.
    @Sendable func previewStop(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let tour = try tour(context)
        let access = try await context.access(editors)
        try access.requireEdit(tour: tour.id)
        let poiId = try context.id("poi")
        let content = projection.content
        guard tour.working.stops.contains(poiId), let poi = content.pois[poiId] else {
            throw AdminError.notFound("That POI is not a stop of this tour.")
        }
        let shown = PoiState(id: poi.id, version: poi.version, content: poi.working, updatedAt: poi.updatedAt)
        // The names of the tours phones would list it under: this one as it will be, and the other published ones.
        let others = content.tours(stoppingAt: poiId).filter { $0.id != tour.id && $0.status == .published }.map(\.content.name)
        var headers = PoiPage.headers
        headers[.contentSecurityPolicy] = PoiPage.contentSecurityPolicy + "; frame-ancestors 'self'"
        headers[.xFrameOptions] = "SAMEORIGIN"
        headers[.contentType] = "text/html; charset=utf-8"
        return Response(status: .ok, headers: headers,
                        body: .init(byteBuffer: ByteBuffer(bytes: PoiPage.render(shown, tourNames: [tour.working.content.name] + others,
                                                                                  media: PoiMedia.of(shown.content, feedPublicURL: feedPublicURL, lookup: content.publishedMedia),
                                                                                  language: languages.site, siteLanguage: languages.site))))
    }

    @Sendable func revert(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let tour = try tour(context)
        let access = try await context.access(editors)
        try access.requireEdit(tour: tour.id)
        guard let target = context.form.int("revertTo") else { throw AdminError.badRequest("Choose a version to revert to.") }
        if !access.isOwner { try await requireAttachable(revertingTo: target, of: tour, access: access, context: context) }
        let command = CatalogCommand(action: .revertTour, actor: access.user.email, entityId: tour.id,
                                     expectedVersion: context.form.int("version") ?? tour.version, revertToVersion: target, asDraft: true)
        return try await run(command, tour: tour, form: TourForm(tour), access: access, context: context, notice: "reverted")
    }

    @Sendable func confirmDelete(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let tour = try tour(context)
        try await context.access(editors).requireOwner("delete tours")
        let detail: HTML = "<p>The tour <strong>\(tour.content.name)</strong> will be deleted. Its POIs stay (they may be stops of other tours).</p>"
        return AdminPage(title: "Delete tour", context: context, breadcrumbs: [("Tours Administration", "/tours"), ("Delete", nil)],
                         body: CommonPages.confirmDelete(what: "tour", detail: detail, action: "\(Self.path(tour.id))/delete", cancel: "/tours",
                                                         version: tour.version, csrf: context.csrfToken)).response()
    }

    @Sendable func delete(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let tour = try tour(context)
        let access = try await context.access(editors)
        try access.requireOwner("delete tours")
        let command = CatalogCommand(action: .deleteTour, actor: access.user.email, entityId: tour.id,
                                     expectedVersion: context.form.int("version") ?? tour.version)
        let result: CatalogCommandResult
        do {
            result = try await writer.execute(command, for: context)
        } catch {
            return AdminPage(title: "Delete tour", context: context, notice: .error(error.description),
                             body: CommonPages.confirmDelete(what: "tour", action: "\(Self.path(tour.id))/delete", cancel: "/tours",
                                                             version: tour.version, csrf: context.csrfToken), status: .serviceUnavailable).response()
        }
        switch result.outcome {
        case .applied:
            try await editors.removeTour(tour.id)
            return .redirect(to: "/tours?notice=deleted-restorable")
        case .conflict:
            let current = result.tour ?? tour
            let author = projection.authors.author(of: tour.id, version: current.version, viewer: access.user.email)
            return try await managePage(tour: current, form: TourForm(current), conflict: .stale(Self.staleBox(.deleteTour, author: author, version: current.version)),
                                        access: access, context: context, status: .conflict)
        case .rejected:
            throw AdminError.badRequest(result.message ?? "Catalog refused to delete the tour.")
        }
    }
}
