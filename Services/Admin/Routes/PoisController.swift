import Foundation
import Hummingbird
import Shared

/// "Manage Point of Interest", "Manage Multimedia Links", "Preview POI", the list of all POIs, and adding a
/// new POI to a tour. Reads from the projection; every change is a catalog command.
struct PoisController {
    let projection: AdminCatalogProjection
    let writer: any CatalogWriter
    let editors: any TourEditorRepository
    let map: AdminMap
    /// `FEED_PUBLIC_URL`: the library pictures' addresses, for the picture picker.
    let feedPublicURL: String
    /// `SITE_TIME_ZONE`, for the history's times.
    let clock: SiteClock
    /// `SITE_LANGUAGES`: what the form translates into.
    let languages: SiteLanguages

    func register(on router: RouterGroup<AdminRequestContext>) {
        router.get("/pois", use: list)
        router.get("/pois/new") { request, context in try await newForm(request, context: context, inTour: false) }
        router.post("/pois") { request, context in try await create(request, context: context, inTour: false) }
        // A new POI as the next stop of the tour `:id`.
        router.get("/tours/:id/pois/new") { request, context in try await newForm(request, context: context, inTour: true) }
        router.post("/tours/:id/pois") { request, context in try await create(request, context: context, inTour: true) }
        router.get("/pois/:id", use: manage)
        router.post("/pois/:id", use: save)
        router.get("/pois/:id/delete", use: confirmDelete)
        router.post("/pois/:id/delete", use: delete)
        router.get("/pois/:id/preview", use: preview)
        router.get("/pois/:id/history", use: history)
        router.post("/pois/:id/revert", use: revert)
        router.post("/pois/:id/draft", use: changeDraft)
        router.get("/pois/:id/links", use: links)
        router.post("/pois/:id/links", use: addLink)
        router.get("/pois/:id/links/:index/edit", use: editLinkForm)
        router.post("/pois/:id/links/:index", use: editLink)
        router.get("/pois/:id/links/:index/delete", use: confirmDeleteLink)
        router.post("/pois/:id/links/:index/delete", use: deleteLink)
    }

    static func path(_ id: UUID) -> String { "/pois/\(id.uuidString.lowercased())" }

    func poi(_ context: AdminRequestContext) throws -> PoiState {
        guard let poi = projection.poi(try context.id("id")) else { throw AdminError.notFound("There is no such point of interest (it may have been deleted).") }
        return poi
    }

    /// The tour the user came from (`?tour=`), if it exists and stops at `poi`.
    func tourContext(_ request: Request, _ context: AdminRequestContext, poi: UUID) -> TourState? {
        guard let text = request.uri.queryParameters.get("tour").map({ String($0) }), let id = UUID(uuidString: text),
              let tour = projection.tour(id), tour.working.stops.contains(poi) else { return nil }
        return tour
    }

    // MARK: list and create

    @Sendable func list(_ request: Request, context: AdminRequestContext) async throws -> Response {
        try await context.access(editors).requireOwner("see every POI")
        let content = projection.content
        let filter = PoiPages.ListFilter(search: ListSearch(request), category: ListSearch.formValue("category", of: request))
        return AdminPage(title: "Points of Interest", context: context, notice: Notice.from(request),
                         body: PoiPages.list(pois: content.sortedPois.filter(filter.matches), content: content, filter: filter, languages: languages)).response()
    }

    /// A new POI, on its own (owners) or as the next stop of a tour (whoever edits the tour).
    func newForm(_ request: Request, context: AdminRequestContext, inTour: Bool) async throws -> Response {
        let access = try await context.access(editors)
        let tour = try newPoiTour(context, access: access, inTour: inTour)
        // No coordinates filled in: the map opens over the tour's stops, and the pin goes where the user clicks.
        return managePage(poi: nil, tour: tour, form: PoiForm(), access: access, context: context)
    }

    func newPoiTour(_ context: AdminRequestContext, access: Access, inTour: Bool) throws -> TourState? {
        guard inTour else {
            try access.requireOwner("create a POI outside a tour")
            return nil
        }
        guard let tour = projection.tour(try context.id("id")) else { throw AdminError.notFound("There is no such tour.") }
        try access.requireEdit(tour: tour.id)
        return tour
    }

    func managePage(poi: PoiState?, tour: TourState?, form: PoiForm, errors: [String: String] = [:], conflict: HTML = .empty,
                    fieldNotes: [String: String] = [:],
                    problem: String? = nil, access: Access, context: AdminRequestContext, notice: Notice? = nil,
                    status: HTTPResponse.Status = .ok) -> Response {
        let content = projection.content
        let action = poi.map { "\(Self.path($0.id))\(PoiPages.query(tour))" }
            ?? tour.map { "/tours/\($0.id.uuidString.lowercased())/pois" } ?? "/pois"
        var model = PoiPages.ManageModel(poi: poi, tour: tour, form: form, errors: errors, conflict: conflict, fieldNotes: fieldNotes, problem: problem,
                                         categories: content.sortedCategories, canDelete: poi.map { access.canDelete(poi: $0.id, in: content) } ?? false,
                                         action: action, csrf: context.csrfToken, map: map)
        model.audio = content.sortedMedia.filter { $0.content.format.kind == .audio }
        // Only what phones can load: the feed serves a library file once it is published.
        model.pictures = content.sortedMedia.filter { $0.content.format.kind == .image && $0.status == .published }
        model.feedPublicURL = feedPublicURL
        model.languages = languages
        model.neighbours = tour.map { content.stops(of: $0).filter { $0.id != poi?.id } } ?? []
        let around = model.neighbours.isEmpty ? content.sortedPois : model.neighbours
        model.center = Geo.median(around.map(\.coordinate))
        return AdminPage(title: "Manage Point of Interest", context: context, breadcrumbs: PoiPages.breadcrumbs(tour: tour, poi: poi, owner: context.isOwner, last: nil),
                         notice: notice, body: PoiPages.manage(model), status: status).response()
    }

    func create(_ request: Request, context: AdminRequestContext, inTour: Bool) async throws -> Response {
        let access = try await context.access(editors)
        let tour = try newPoiTour(context, access: access, inTour: inTour)
        let form = PoiForm(context.form)
        let content: PoiContent
        switch form.content(base: nil) {
        case .success(let value): content = value
        case .failure(let errors):
            return managePage(poi: nil, tour: tour, form: form, errors: errors.byField, access: access, context: context, status: .unprocessableContent)
        }
        let requestId = RequestIdMiddleware.id(of: context)
        let result: CatalogCommandResult
        do {
            result = try await writer.execute(CatalogCommand(action: .createPoi, actor: access.user.email, entityId: UUID.random(), poi: content),
                                              for: context)
        } catch {
            return managePage(poi: nil, tour: tour, form: form, problem: error.description, access: access, context: context, status: .serviceUnavailable)
        }
        guard result.outcome == .applied, let poiId = result.entityId else {
            return managePage(poi: nil, tour: tour, form: form, errors: fieldErrors(result.errors), access: access, context: context,
                              status: .unprocessableContent)
        }
        let created = Notice.key("created", for: result)
        guard let tour else { return .redirect(to: "\(Self.path(poiId))?notice=\(created)") }
        let inTour = "\(Self.path(poiId))?tour=\(tour.id.uuidString.lowercased())&notice=\(created)"
        // The new POI becomes the tour's last stop. The stop list was not on the form, so take the latest
        // and retry if someone changed the tour meanwhile.
        for _ in 0..<3 {
            let current = projection.tour(tour.id) ?? tour
            // A repeated submission: the first one appended it.
            if current.working.stops.contains(poiId) { return .redirect(to: inTour) }
            let command = CatalogCommand(action: .setTourStops, actor: access.user.email, entityId: tour.id, expectedVersion: current.version,
                                         stops: current.working.stops + [poiId], asDraft: true)
            let appended: CatalogCommandResult
            do {
                appended = try await writer.execute(command, requestId: requestId)
            } catch {
                return .redirect(to: "\(Self.path(poiId))?notice=\(created)")
            }
            if appended.outcome == .applied { return .redirect(to: inTour) }
            if appended.outcome == .rejected { break }
        }
        return .redirect(to: "\(Self.path(poiId))?notice=\(created)")
    }

    // MARK: edit

    @Sendable func manage(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let poi = try poi(context)
        let access = try await context.access(editors)
        try access.requireEdit(poi: poi.id, in: projection.content)
        return managePage(poi: poi, tour: tourContext(request, context, poi: poi.id), form: PoiForm(poi), access: access, context: context,
                          notice: Notice.from(request))
    }

    @Sendable func save(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let poi = try poi(context)
        let access = try await context.access(editors)
        try access.requireEdit(poi: poi.id, in: projection.content)
        let tour = tourContext(request, context, poi: poi.id)
        let form = PoiForm(context.form)
        let content: PoiContent
        switch form.content(base: poi.working) {
        case .success(let value): content = value
        case .failure(let errors):
            return managePage(poi: poi, tour: tour, form: form, errors: errors.byField, access: access, context: context, status: .unprocessableContent)
        }
        let command = CatalogCommand(action: .updatePoi, actor: access.user.email, entityId: poi.id, expectedVersion: form.version ?? poi.version,
                                     poi: content, asDraft: true)
        let result: CatalogCommandResult
        do {
            result = try await writer.execute(command, for: context)
        } catch {
            return managePage(poi: poi, tour: tour, form: form, problem: error.description, access: access, context: context, status: .serviceUnavailable)
        }
        switch result.outcome {
        case .applied:
            return .redirect(to: "\(Self.path(poi.id))\(PoiPages.query(tour).isEmpty ? "?" : PoiPages.query(tour) + "&")notice=\(Notice.key("saved", for: result))")
        case .rejected:
            return managePage(poi: poi, tour: tour, form: form, errors: fieldErrors(result.errors), access: access, context: context,
                              status: .unprocessableContent)
        case .conflict:
            // Their changes go into the fields left alone; the fields changed on both sides are marked.
            let current = result.poi ?? projection.poi(poi.id) ?? poi
            var merge = FormConflict(typed: form, base: PoiForm.base(in: context.form), current: PoiForm(current),
                                     author: projection.authors.author(of: poi.id, version: current.version, viewer: access.user.email),
                                     version: current.version)
            merge.form.version = current.version
            return managePage(poi: current, tour: tour, form: merge.form, conflict: merge.box(entity: "point of interest"), fieldNotes: merge.fieldNotes,
                              access: access, context: context, status: .conflict)
        }
    }

    // MARK: delete

    @Sendable func confirmDelete(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let poi = try poi(context)
        let access = try await context.access(editors)
        let content = projection.content
        guard access.canDelete(poi: poi.id, in: content) else { throw AdminError.forbidden("You may delete only POIs whose every tour you edit.") }
        let tour = tourContext(request, context, poi: poi.id)
        let tours = content.tours(stoppingAt: poi.id).map(\.content.name)
        let detail: HTML = tours.isEmpty ? "<p>The point of interest <strong>\(poi.content.name)</strong> will be deleted.</p>"
            : "<p>The point of interest <strong>\(poi.content.name)</strong> will be deleted and taken out of the tours that stop there: \(tours.joined(separator: ", ")).</p>"
        let back = tour.map { "/tours/\($0.id.uuidString.lowercased())" } ?? Self.path(poi.id)
        return AdminPage(title: "Delete point of interest", context: context, breadcrumbs: PoiPages.breadcrumbs(tour: tour, poi: poi, owner: context.isOwner, last: "Delete"),
                         body: CommonPages.confirmDelete(what: "point of interest", detail: detail,
                                                         action: "\(Self.path(poi.id))/delete\(PoiPages.query(tour))", cancel: back,
                                                         version: poi.version, csrf: context.csrfToken)).response()
    }

    @Sendable func delete(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let poi = try poi(context)
        let access = try await context.access(editors)
        guard access.canDelete(poi: poi.id, in: projection.content) else { throw AdminError.forbidden("You may delete only POIs whose every tour you edit.") }
        let tour = tourContext(request, context, poi: poi.id)
        let command = CatalogCommand(action: .deletePoi, actor: access.user.email, entityId: poi.id, expectedVersion: context.form.int("version") ?? poi.version)
        let result: CatalogCommandResult
        do {
            result = try await writer.execute(command, for: context)
        } catch {
            return managePage(poi: poi, tour: tour, form: PoiForm(poi), problem: error.description, access: access, context: context,
                              status: .serviceUnavailable)
        }
        switch result.outcome {
        case .applied:
            return .redirect(to: tour.map { "/tours/\($0.id.uuidString.lowercased())?notice=deleted-restorable" } ?? "/pois?notice=deleted-restorable")
        case .conflict:
            let current = result.poi ?? poi
            let author = projection.authors.author(of: poi.id, version: current.version, viewer: access.user.email)
            return managePage(poi: current, tour: tour, form: PoiForm(current),
                              conflict: CommonPages.staleBox(entity: "point of interest", author: author, version: current.version,
                                                             consequence: "It was not deleted. Check it below, then delete again."),
                              access: access, context: context, status: .conflict)
        case .rejected:
            throw AdminError.badRequest(result.message ?? "Catalog refused to delete the point of interest.")
        }
    }

    // MARK: history

    @Sendable func history(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let poi = try poi(context)
        let access = try await context.access(editors)
        try access.requireEdit(poi: poi.id, in: projection.content)
        let tour = tourContext(request, context, poi: poi.id)
        let entries: [CatalogHistoryEntry]
        do {
            entries = try await writer.execute(CatalogCommand(action: .history, actor: access.user.email, entityId: poi.id),
                                               requestId: RequestIdMiddleware.id(of: context)).history ?? []
        } catch {
            return AdminPage(title: "History", context: context, notice: .error(error.description), body: "<h1>History</h1>",
                             status: .serviceUnavailable).response()
        }
        return AdminPage(title: "History", context: context, breadcrumbs: PoiPages.breadcrumbs(tour: tour, poi: poi, owner: context.isOwner, last: "History"),
                         body: HistoryPages.page(title: poi.working.name, versions: HistoryPages.poiVersions(entries), current: poi.version,
                                                 revertAction: "\(Self.path(poi.id))/revert\(PoiPages.query(tour))", csrf: context.csrfToken,
                                                 clock: clock)).response()
    }

    @Sendable func revert(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let poi = try poi(context)
        let access = try await context.access(editors)
        try access.requireEdit(poi: poi.id, in: projection.content)
        let tour = tourContext(request, context, poi: poi.id)
        guard let target = context.form.int("revertTo") else { throw AdminError.badRequest("Choose a version to revert to.") }
        let command = CatalogCommand(action: .revertPoi, actor: access.user.email, entityId: poi.id,
                                     expectedVersion: context.form.int("version") ?? poi.version, revertToVersion: target, asDraft: true)
        let result: CatalogCommandResult
        do {
            result = try await writer.execute(command, for: context)
        } catch {
            return managePage(poi: poi, tour: tour, form: PoiForm(poi), problem: error.description, access: access, context: context,
                              status: .serviceUnavailable)
        }
        switch result.outcome {
        case .applied:
            return .redirect(to: "\(Self.path(poi.id))\(PoiPages.query(tour).isEmpty ? "?" : PoiPages.query(tour) + "&")notice=\(Notice.key("reverted", for: result))")
        case .rejected:
            // Today's rules refuse that version's content (e.g. its category is gone): say which.
            let reasons = result.errors.map(\.message).joined(separator: "; ")
            return managePage(poi: poi, tour: tour, form: PoiForm(poi), problem: nil, access: access, context: context,
                              notice: .error("Not reverted: that version's content is not allowed now (\(reasons)). Edit the fields instead."),
                              status: .unprocessableContent)
        case .conflict:
            let current = result.poi ?? projection.poi(poi.id) ?? poi
            let author = projection.authors.author(of: poi.id, version: current.version, viewer: access.user.email)
            return managePage(poi: current, tour: tour, form: PoiForm(current),
                              conflict: CommonPages.staleBox(entity: "point of interest", author: author, version: current.version,
                                                             consequence: "It was not reverted. Check it and its History, then revert again."),
                              access: access, context: context, status: .conflict)
        }
    }

    // MARK: drafts

    /// Publish or discard the POI's unpublished changes.
    @Sendable func changeDraft(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let poi = try poi(context)
        let access = try await context.access(editors)
        try access.requireEdit(poi: poi.id, in: projection.content)
        let tour = tourContext(request, context, poi: poi.id)
        let action: CatalogAction
        var status: ContentStatus?
        switch context.form["draftAction"] {
        case "publish": action = .publishPoi
        case "discard": action = .discardPoiDraft
        case "list": (action, status) = (.setPoiStatus, .published)
        case "unlist": (action, status) = (.setPoiStatus, .draft)
        default: throw AdminError.badRequest("Choose Publish changes, Discard changes, Publish as a place or Unpublish place.")
        }
        let command = CatalogCommand(action: action, actor: access.user.email, entityId: poi.id, expectedVersion: context.form.int("version") ?? poi.version,
                                     status: status)
        let result: CatalogCommandResult
        do {
            result = try await writer.execute(command, for: context)
        } catch {
            return managePage(poi: poi, tour: tour, form: PoiForm(poi), problem: error.description, access: access, context: context,
                              status: .serviceUnavailable)
        }
        switch result.outcome {
        case .applied:
            let notice = Notice.key(action == .publishPoi ? "poipublished" : status == .published ? "placepublished"
                                    : status == .draft ? "placeunpublished" : "discarded", for: result)
            return .redirect(to: "\(Self.path(poi.id))\(PoiPages.query(tour).isEmpty ? "?" : PoiPages.query(tour) + "&")notice=\(notice)")
        case .rejected:
            let current = projection.poi(poi.id) ?? poi
            return managePage(poi: current, tour: tour, form: PoiForm(current), errors: fieldErrors(result.errors), access: access, context: context,
                              notice: .error("Not published: \(result.errors.map(\.message).joined(separator: "; "))."), status: .unprocessableContent)
        case .conflict:
            let current = result.poi ?? projection.poi(poi.id) ?? poi
            let author = projection.authors.author(of: poi.id, version: current.version, viewer: access.user.email)
            return managePage(poi: current, tour: tour, form: PoiForm(current),
                              conflict: CommonPages.staleBox(entity: "point of interest", author: author, version: current.version,
                                                             consequence: "Nothing was published or discarded. Check it, then try again."),
                              access: access, context: context, status: .conflict)
        }
    }

    // MARK: preview

    @Sendable func preview(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let poi = try poi(context)
        try await context.access(editors).requireEdit(poi: poi.id, in: projection.content)
        let tour = tourContext(request, context, poi: poi.id)
        return AdminPage(title: "Preview POI", context: context, breadcrumbs: PoiPages.breadcrumbs(tour: tour, poi: poi, owner: context.isOwner, last: "Preview POI"),
                         body: PoiPages.preview(poi: poi, tour: tour)).response()
    }

    // MARK: links

    @Sendable func links(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let poi = try poi(context)
        let access = try await context.access(editors)
        try access.requireEdit(poi: poi.id, in: projection.content)
        return linksPage(poi: poi, tour: tourContext(request, context, poi: poi.id), form: PoiPages.LinkForm(), context: context,
                         notice: Notice.from(request))
    }

    func linksPage(poi: PoiState, tour: TourState?, form: PoiPages.LinkForm, errors: [String: String] = [:], problem: String? = nil,
                   conflict: Bool = false, context: AdminRequestContext, notice: Notice? = nil, status: HTTPResponse.Status = .ok) -> Response {
        let model = PoiPages.LinksModel(poi: poi, tour: tour, form: form, errors: errors, problem: problem, conflict: conflict, canEdit: true,
                                        csrf: context.csrfToken)
        return AdminPage(title: "Manage Multimedia Links", context: context,
                         breadcrumbs: PoiPages.breadcrumbs(tour: tour, poi: poi, owner: context.isOwner, last: "Manage Multimedia Links"), notice: notice,
                         body: PoiPages.links(model), status: status).response()
    }

    /// A link as typed, or its errors (a media type that is not one of the four).
    func link(from form: PoiPages.LinkForm) -> Result<MediaLink, FieldErrors> {
        guard let type = MediaType(rawValue: form.type) else {
            return .failure(FieldErrors(byField: ["type": "Media Type must be page, video, audio or image"]))
        }
        return .success(MediaLink(name: form.name.trimmingCharacters(in: .whitespaces), type: type, url: form.url.trimmingCharacters(in: .whitespaces)))
    }

    /// The errors catalog gave for the link at `index`, by the link form's field names.
    func linkErrors(_ errors: [FieldError], index: Int) -> [String: String] {
        var byField: [String: String] = [:]
        for error in errors {
            if error.field.hasPrefix("links[\(index)].") {
                byField[String(error.field.dropFirst("links[\(index)].".count))] = error.message
            } else {
                byField["general"] = [byField["general"], error.message].compactMap { $0 }.joined(separator: " ")
            }
        }
        return byField
    }

    /// Saves `links` as the POI's links; on success redirects to the links page.
    func saveLinks(_ links: [MediaLink], poi: PoiState, index: Int, form: PoiPages.LinkForm, editing: Bool, request: Request,
                   context: AdminRequestContext) async throws -> Response {
        let access = try await context.access(editors)
        let tour = tourContext(request, context, poi: poi.id)
        var content = poi.working
        content.links = links
        let command = CatalogCommand(action: .updatePoi, actor: access.user.email, entityId: poi.id,
                                     expectedVersion: context.form.int("version") ?? poi.version, poi: content, asDraft: true)
        func again(_ poi: PoiState, errors: [String: String] = [:], problem: String? = nil, conflict: Bool = false, status: HTTPResponse.Status) -> Response {
            if editing {
                return AdminPage(title: "Edit Link", context: context, breadcrumbs: PoiPages.breadcrumbs(tour: tour, poi: poi, owner: context.isOwner, last: "Manage Multimedia Links"),
                                 body: PoiPages.editLink(poi: poi, tour: tour, index: index, form: form, errors: errors, problem: problem,
                                                         conflict: conflict, csrf: context.csrfToken), status: status).response()
            }
            return linksPage(poi: poi, tour: tour, form: form, errors: errors, problem: problem, conflict: conflict, context: context, status: status)
        }
        let result: CatalogCommandResult
        do {
            result = try await writer.execute(command, for: context)
        } catch {
            return again(poi, problem: error.description, status: .serviceUnavailable)
        }
        switch result.outcome {
        case .applied:
            return .redirect(to: "\(Self.path(poi.id))/links\(PoiPages.query(tour).isEmpty ? "?" : PoiPages.query(tour) + "&")notice=\(Notice.key("link", for: result))")
        case .rejected:
            return again(poi, errors: linkErrors(result.errors, index: index), status: .unprocessableContent)
        case .conflict:
            return again(result.poi ?? projection.poi(poi.id) ?? poi, conflict: true, status: .conflict)
        }
    }

    @Sendable func addLink(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let poi = try poi(context)
        try await context.access(editors).requireEdit(poi: poi.id, in: projection.content)
        let form = PoiPages.LinkForm(context.form)
        switch link(from: form) {
        case .failure(let errors):
            return linksPage(poi: poi, tour: tourContext(request, context, poi: poi.id), form: form, errors: errors.byField, context: context,
                             status: .unprocessableContent)
        case .success(let link):
            return try await saveLinks(poi.working.links + [link], poi: poi, index: poi.working.links.count, form: form, editing: false,
                                       request: request, context: context)
        }
    }

    func linkIndex(_ context: AdminRequestContext, _ poi: PoiState) throws -> Int {
        guard let index = context.parameters.get("index").flatMap(Int.init), poi.working.links.indices.contains(index) else {
            throw AdminError.notFound("There is no such link (the links may have changed: go back to the list).")
        }
        return index
    }

    @Sendable func editLinkForm(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let poi = try poi(context)
        try await context.access(editors).requireEdit(poi: poi.id, in: projection.content)
        let index = try linkIndex(context, poi)
        let tour = tourContext(request, context, poi: poi.id)
        return AdminPage(title: "Edit Link", context: context, breadcrumbs: PoiPages.breadcrumbs(tour: tour, poi: poi, owner: context.isOwner, last: "Manage Multimedia Links"),
                         body: PoiPages.editLink(poi: poi, tour: tour, index: index, form: PoiPages.LinkForm(poi.working.links[index]), errors: [:],
                                                 problem: nil, conflict: false, csrf: context.csrfToken)).response()
    }

    @Sendable func editLink(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let poi = try poi(context)
        try await context.access(editors).requireEdit(poi: poi.id, in: projection.content)
        let index = try linkIndex(context, poi)
        let form = PoiPages.LinkForm(context.form)
        switch link(from: form) {
        case .failure(let errors):
            let tour = tourContext(request, context, poi: poi.id)
            return AdminPage(title: "Edit Link", context: context, body: PoiPages.editLink(poi: poi, tour: tour, index: index, form: form,
                                                                                          errors: errors.byField, problem: nil, conflict: false,
                                                                                          csrf: context.csrfToken), status: .unprocessableContent).response()
        case .success(let link):
            var links = poi.working.links
            links[index] = link
            return try await saveLinks(links, poi: poi, index: index, form: form, editing: true, request: request, context: context)
        }
    }

    @Sendable func confirmDeleteLink(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let poi = try poi(context)
        try await context.access(editors).requireEdit(poi: poi.id, in: projection.content)
        let index = try linkIndex(context, poi)
        let tour = tourContext(request, context, poi: poi.id)
        let link = poi.working.links[index]
        let path = "\(Self.path(poi.id))/links"
        return AdminPage(title: "Delete link", context: context, breadcrumbs: PoiPages.breadcrumbs(tour: tour, poi: poi, owner: context.isOwner, last: "Manage Multimedia Links"),
                         body: CommonPages.confirmDelete(what: "link", detail: "<p>The link <strong>\(link.name)</strong> (\(link.url)) will be deleted.</p>",
                                                         action: "\(path)/\(index)/delete\(PoiPages.query(tour))", cancel: "\(path)\(PoiPages.query(tour))",
                                                         version: poi.version, csrf: context.csrfToken)).response()
    }

    @Sendable func deleteLink(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let poi = try poi(context)
        try await context.access(editors).requireEdit(poi: poi.id, in: projection.content)
        let index = try linkIndex(context, poi)
        var links = poi.working.links
        let removed = links.remove(at: index)
        return try await saveLinks(links, poi: poi, index: index, form: PoiPages.LinkForm(removed), editing: false, request: request, context: context)
    }
}
