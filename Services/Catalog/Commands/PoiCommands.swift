import Foundation
import Logging
import Shared

/// POI commands (DESIGN.md, "Topics", "Places on their own", "Accessibility and stops"): create, update, drafts, status,
/// revert and delete, each inside the command's transaction (`Work`).
extension Work {
    /// A POI's content as it was, checked by today's rules (its category may have gone since).
    mutating func revertPoi() async throws -> CatalogCommandResult {
        let stored = try await poiForChange(allowingDeleted: true)
        let id = stored.state.id
        var content: PoiContent
        switch try await revertedState(PoiState.self, id: id) {
        // Undo of a delete brings back what staff last saw (its draft, if it had one); a revert, the version's content.
        case .state(let state): content = stored.isDeleted ? state.working : state.content
        case .refused(let result): return result
        }
        let errors = try await validate(&content)
        guard errors.isEmpty else { return rejected(errors) }
        if stored.isDeleted {
            // Undo of a delete: not a place on its own, and a stop of no tour (its tours let it go when it was deleted).
            var poi = stored.state
            poi.content = content
            poi.draft = nil
            poi.status = .draft
            poi.version += 1
            poi.updatedAt = now
            return try await commit(poi, before: nil)
        }
        var poi = stored.state
        try await apply(content, to: &poi)
        return try await commit(poi, before: stored.state)
    }

    /// `poi.publish` (the draft becomes the content, checked by today's rules) and `poi.discard-draft`.
    mutating func changePoiDraft() async throws -> CatalogCommandResult {
        let stored = try await poiForChange()
        guard var draft = stored.state.draft else { return missing("draft", "the point of interest has no unpublished changes") }
        var poi = stored.state
        if command.action == .publishPoi {
            var errors = try await validate(&draft)
            if errors.isEmpty { errors = try await accessibilityErrors([draft]) }
            guard errors.isEmpty else { return rejected(errors) }
            poi.content = draft
        }
        poi.draft = nil
        poi.version += 1
        poi.updatedAt = now
        return try await commit(poi, before: stored.state)
    }

    /// `poi.set-status` (DESIGN.md, "Places on their own"): publishing makes the draft the content; unpublishing
    /// folds the draft into the content unless a published tour still shows the POI.
    mutating func setPoiStatus() async throws -> CatalogCommandResult {
        guard let id = command.entityId else { return missing("entityId", "entityId is required") }
        guard let status = command.status, status != .archived else { return missing("status", "status must be published or draft") }
        guard let stored = try await transaction.poi(id), !stored.isDeleted else { return missing("entityId", "POI \(id) does not exist") }
        if let conflict = conflict(current: stored.state.version, poi: stored.state) { return conflict }
        guard stored.state.status != status else {
            return missing("status", status == .published ? "the point of interest is already published" : "the point of interest is not published")
        }
        var poi = stored.state
        poi.status = status
        if status == .published {
            if var draft = poi.draft {
                let errors = try await validate(&draft)
                guard errors.isEmpty else { return rejected(errors) }
                poi.content = draft
                poi.draft = nil
            }
            if !isImportRow {
                let accessibility = try await accessibilityErrors([poi.content])
                guard accessibility.isEmpty else { return rejected(accessibility) }
            }
        } else if let draft = poi.draft, try await !isStopOfPublishedTour(id) {
            poi.content = draft
            poi.draft = nil
        }
        poi.version += 1
        poi.updatedAt = now
        return try await commit(poi, before: stored.state)
    }

    /// Whether a POI is on the feed: published itself, or a stop of a published tour.
    func isOnFeed(_ poi: PoiState) async throws -> Bool {
        if poi.status == .published { return true }
        return try await isStopOfPublishedTour(poi.id)
    }

    func isStopOfPublishedTour(_ id: UUID) async throws -> Bool {
        for tourId in try await transaction.toursWithStop(id) {
            if let tour = try await transaction.tour(tourId), tour.state.status == .published, tour.state.stops.contains(id) { return true }
        }
        return false
    }

    mutating func createPoi() async throws -> CatalogCommandResult {
        guard var content = command.poi else { return missing("poi", "poi content is required") }
        let errors = try await validate(&content)
        guard errors.isEmpty else { return rejected(errors) }
        if command.status == .archived { return missing("status", "status must be published or draft") }
        let id = command.entityId ?? UUID.random()
        if try await transaction.poi(id) != nil { return missing("entityId", "a POI with id \(id) already exists") }
        return try await commit(PoiState(id: id, version: 1, status: command.status ?? .draft, content: content, updatedAt: now), before: nil)
    }

    mutating func updatePoi() async throws -> CatalogCommandResult {
        guard let id = command.entityId else { return missing("entityId", "entityId is required") }
        guard var content = command.poi else { return missing("poi", "poi content is required") }
        guard let stored = try await transaction.poi(id), !stored.isDeleted else { return missing("entityId", "POI \(id) does not exist") }
        if let conflict = conflict(current: stored.state.version, poi: stored.state) { return conflict }
        let errors = try await validate(&content)
        guard errors.isEmpty else { return rejected(errors) }
        var poi = stored.state
        try await apply(content, to: &poi)
        return try await commit(poi, before: stored.state)
    }

    /// An edit of a POI: into its draft when the command asks for one and the POI is on the feed, else into the
    /// content (dropping a draft). A new version either way.
    func apply(_ content: PoiContent, to poi: inout PoiState) async throws {
        if command.asDraft == true, try await isOnFeed(poi) {
            poi.draft = content == poi.content ? nil : content
        } else {
            poi.content = content
            poi.draft = nil
        }
        poi.version += 1
        poi.updatedAt = now
    }

    /// The content rules, plus: each category must be a path of the category tree. An empty category is none,
    /// a path that differs only in case takes the tree's spelling, and a category listed twice counts once.
    func validate(_ content: inout PoiContent) async throws -> [FieldError] {
        content.categories.removeAll { CommandValidation.isBlank($0, newlinesAreBlank: false) }
        CommandValidation.encodeURLs(&content)
        var errors = CommandValidation.validate(content)
        if !errors.contains(where: { $0.field == "category" || $0.field == "categories" }) {
            var known: [String] = []
            for (index, category) in content.categories.enumerated() {
                if let path = try await transaction.category(path: category)?.path {
                    if !known.contains(path) { known.append(path) }
                } else {
                    errors.append(FieldError(field: index == 0 ? "category" : "categories",
                                             message: "Category must be one of the category tree's paths, e.g. Shop/Fashion; \"\(category)\" is not one"))
                }
            }
            content.categories = known
        }
        for (field, narration) in MediaHash.narrations(of: content) where MediaHash.isValid(narration) {
            let item = try await transaction.liveMedia(sha256s: [narration])[narration]
            if item?.content.format.kind != .audio || item?.status != .published {
                errors.append(FieldError(field: field, message: item == nil
                    ? "Narration must be a file of the media library; \(narration.prefix(12))… is not (deleted?)"
                    : item?.content.format.kind != .audio ? "Narration must be audio; \(item?.content.title ?? "") is \(item?.content.format.label ?? "")"
                    : "Narration must be a published file of the media library; \(item?.content.title ?? "") is not published"))
            }
        }
        return errors
    }

    /// What publishing these POIs would leave a visitor who cannot see or hear without (DESIGN.md, "Accessibility and
    /// stops"): a picture with no alt text, library audio with neither captions nor a transcript, library video
    /// without captions. Media hot-linked from elsewhere cannot be checked and passes.
    func accessibilityErrors(_ pois: [PoiContent]) async throws -> [FieldError] {
        let library = try await transaction.liveMedia(sha256s: Array(Set(pois.flatMap(MediaHash.named(in:)))))
        var errors: [FieldError] = []
        for poi in pois {
            for (index, picture) in poi.pictures.enumerated() {
                let hash = MediaHash.named(inURL: picture)
                if let hash, library[hash]?.status != .published {
                    errors.append(FieldError(field: "pictures", message: "Picture \(index + 1) of \(poi.name) names a library file that is not published (or was deleted): publish it, or choose another"))
                    continue
                }
                let libraryAlt = hash.flatMap { library[$0]?.content.altText }
                if poi.ownAlt(ofPicture: index) == nil, (libraryAlt ?? "").isEmpty {
                    errors.append(FieldError(field: "pictures", message: "Picture \(index + 1) of \(poi.name) has no alt text: say what it shows, after its address or in the media library"))
                }
            }
            for link in poi.links {
                guard let hash = MediaHash.named(inURL: link.url) else { continue }
                guard let item = library[hash], item.status == .published else {
                    errors.append(FieldError(field: "links", message: "The link \u{201C}\(link.name)\u{201D} of \(poi.name) names a library file that is not published (or was deleted)"))
                    continue
                }
                if let gap = item.content.accessibilityGap {
                    errors.append(FieldError(field: "links", message: "\(item.content.format.label) \u{201C}\(item.content.title)\u{201D} linked from \(poi.name) \(gap): add them in the media library"))
                }
            }
            if let item = poi.narration.flatMap({ library[$0] }), let gap = item.content.accessibilityGap {
                errors.append(FieldError(field: "narration", message: "The narration of \(poi.name), \u{201C}\(item.content.title)\u{201D}, \(gap): add them in the media library"))
            }
        }
        return errors
    }

    /// Deleting a POI also removes it from the tours that stop there (each such tour gets a new version).
    mutating func deletePoi() async throws -> CatalogCommandResult {
        let stored = try await poiForChange()
        let id = stored.state.id
        for tourId in try await transaction.toursWithStop(id) {
            guard let tour = try await transaction.tour(tourId) else { continue }
            var changed = tour.state
            changed.stops.removeAll { $0 == id }
            changed.draft?.stops.removeAll { $0 == id }
            changed.version += 1
            changed.updatedAt = now
            try await transaction.saveTour(changed, deleted: false)
            publish(.changed(changed))
            try await transaction.audit(commandId: command.commandId, actor: command.actor, action: command.action, entityId: tourId,
                                        before: tour.state.auditText(), after: changed.auditText())
        }
        var poi = stored.state
        poi.version += 1
        poi.updatedAt = now
        try await transaction.savePoi(poi, deleted: true)
        publish(CatalogEvent(kind: .poiDeleted, entityId: id, version: poi.version))
        return try await applied(id, version: poi.version, before: stored.state, after: nil as PoiState?)
    }

    mutating func commit(_ poi: PoiState, before: PoiState?) async throws -> CatalogCommandResult {
        try await transaction.savePoi(poi, deleted: false)
        publish(.changed(poi))
        var result = try await applied(poi.id, version: poi.version, before: before, after: poi)
        result.poi = poi
        return result
    }
}
