import Foundation
import Logging
import Shared

/// Tour commands (DESIGN.md, "Topics", "Drafts and publishing", "Scheduled publishing"): create, change (details, status,
/// stops), drafts, schedules, revert and delete, each inside the command's transaction (`Work`).
extension Work {
    /// Which far stops an editor confirmed: every one (Publish anyway), none, or those far when a schedule was set.
    enum FarStopConfirmation {
        case none, all
        case only(Set<UUID>)
    }

    /// A tour's content and stops as they were (stops deleted since are left out); its status stays.
    mutating func revertTour() async throws -> CatalogCommandResult {
        let stored = try await tourForChange(allowingDeleted: true)
        let id = stored.state.id
        let old: TourState
        switch try await revertedState(TourState.self, id: id) {
        case .state(let state): old = state
        case .refused(let result): return result
        }
        let errors = CommandValidation.validate(old.content)
        guard errors.isEmpty else { return rejected(errors) }
        let live = try await transaction.livePoiIds(old.stops + (old.draft?.stops ?? []))
        if stored.isDeleted {
            // Undo of a delete: the version back, unpublished (it left the phones when deleted), no schedule.
            // Its draft's content where it had one: the name staff last saw and chose to restore.
            let tour = TourState(id: id, version: stored.state.version + 1, status: .draft, content: old.working.content,
                                 stops: old.working.stops.filter(live.contains), updatedAt: now)
            return try await commit(tour, before: nil)
        }
        var tour = stored.state
        apply(TourDraft(content: old.content, stops: old.stops.filter(live.contains)), to: &tour)
        tour.version += 1
        tour.updatedAt = now
        return try await commit(tour, before: stored.state)
    }

    mutating func createTour() async throws -> CatalogCommandResult {
        guard let content = command.tour else { return missing("tour", "tour content is required") }
        let errors = CommandValidation.validate(content)
        guard errors.isEmpty else { return rejected(errors) }
        let id = command.entityId ?? UUID.random()
        if try await transaction.tour(id) != nil { return missing("entityId", "a tour with id \(id) already exists") }
        let tour = TourState(id: id, version: 1, status: command.status ?? .draft, content: content, stops: [], updatedAt: now)
        return try await commit(tour, before: nil)
    }

    mutating func changeTour() async throws -> CatalogCommandResult {
        let stored = try await tourForChange()
        var tour = stored.state
        var working = tour.working
        switch command.action {
        case .updateTour:
            guard let content = command.tour else { return missing("tour", "tour content is required") }
            let errors = CommandValidation.validate(content)
            guard errors.isEmpty else { return rejected(errors) }
            working.content = content
        case .setTourStatus:
            guard let status = command.status else { return missing("status", "status is required (draft, published or archived)") }
            if let refusal = try await setStatus(of: &tour, to: status, confirming: command.confirmFarStops == true ? .all : .none) { return refusal }
            // Done by hand, or archived: the schedule has nothing left to do.
            if tour.schedule?.status == status || status == .archived { tour.schedule = nil }
            tour.version += 1
            tour.updatedAt = now
            return try await commit(tour, before: stored.state)
        default:
            guard let stops = command.stops else { return missing("stops", "stops are required") }
            if stops.count > 500 { return missing("stops", "a tour can have at most 500 stops") }
            if Set(stops).count != stops.count { return missing("stops", "a POI can be a stop of a tour only once") }
            let live = try await transaction.livePoiIds(stops)
            if let unknown = stops.first(where: { !live.contains($0) }) {
                return missing("stops", "POI \(unknown) does not exist")
            }
            working.stops = stops
        }
        apply(working, to: &tour)
        tour.version += 1
        tour.updatedAt = now
        return try await commit(tour, before: stored.state)
    }

    /// An edit: into the draft when the command asks for one and the tour is published, else into the content.
    /// A draft equal to what is published is none.
    func apply(_ working: TourDraft, to tour: inout TourState) {
        if command.asDraft == true && tour.status == .published {
            tour.draft = working == TourDraft(content: tour.content, stops: tour.stops) ? nil : working
        } else {
            tour.content = working.content
            tour.stops = working.stops
            tour.draft = nil
        }
    }

    /// A status change (by hand or by schedule): publishing checks the tour and publishes its drafts and its stops'
    /// drafts; unpublishing or archiving folds its draft in (nothing of it is live). Returns the refusal, if any.
    mutating func setStatus(of tour: inout TourState, to status: ContentStatus, confirming: FarStopConfirmation) async throws -> CatalogCommandResult? {
        let working = tour.working
        if status == .published {
            if let refusal = try await publishRefusal(working.stops, cover: working.content.coverImage, confirming: confirming) { return refusal }
            try await publishDrafts(ofStops: working.stops)
        }
        tour.status = status
        tour.content = working.content
        tour.stops = working.stops
        tour.draft = nil
        return nil
    }

    /// Why a tour with `stops` and `cover` cannot be published (DESIGN.md, "Drafts and publishing"): no stops, a cover
    /// naming a library file that is not published (phones would get a broken picture), or a stop far from the others
    /// without the editor's confirmation. Each stop is checked where it will be: its draft's position.
    func publishRefusal(_ stops: [UUID], cover: String?, confirming: FarStopConfirmation) async throws -> CatalogCommandResult? {
        guard !stops.isEmpty else {
            return missing("stops", "A tour needs at least one stop before it is published")
        }
        if let hash = cover.flatMap(MediaHash.named(inURL:)), try await transaction.liveMedia(sha256s: [hash])[hash]?.status != .published {
            return missing("coverImage", "The cover picture names a library file that is not published (or was deleted): publish it, or choose another")
        }
        if !isImportRow {
            let stored = try await transaction.pois(stops)
            let accessibility = try await accessibilityErrors(stops.compactMap { id in stored[id].flatMap { $0.isDeleted ? nil : $0.state.working } })
            guard accessibility.isEmpty else { return rejected(accessibility) }
        }
        if case .all = confirming { return nil }
        var strays = try await farStops(stops)
        if case .only(let confirmed) = confirming { strays.removeAll { confirmed.contains($0.id) } }
        guard !strays.isEmpty else { return nil }
        let named = strays.map { "\($0.name) is \(String(format: "%.1f", $0.meters / 1_000)) km from the middle of the tour's stops" }
        return missing("stops", named.joined(separator: "; ") + ": check the coordinates, or confirm to publish anyway")
    }

    /// The stops far from the tour's median position, where they will be (their drafts' positions).
    func farStops(_ stops: [UUID]) async throws -> [(id: UUID, name: String, meters: Double)] {
        // One read for all the stops: a city's tours have a hundred each.
        let places = try await transaction.stopPlaces(stops)
        let live = stops.compactMap { id in places[id].flatMap { $0.isDeleted ? nil : (id: id, place: $0) } }
        return Geo.strays(live.map { Coordinate(latitude: $0.place.latitude, longitude: $0.place.longitude) }).map {
            (live[$0.index].id, live[$0.index].place.name, $0.meters)
        }
    }

    /// Publishing a tour publishes its stops' drafts too, each as a new version.
    mutating func publishDrafts(ofStops stops: [UUID]) async throws {
        // Most stops have no draft: only those with one are read whole (and locked).
        let places = try await transaction.stopPlaces(stops)
        let drafted = stops.filter { places[$0].map { $0.hasDraft && !$0.isDeleted } == true }
        let storedStops = try await transaction.pois(drafted)
        for id in drafted {
            guard let stored = storedStops[id], !stored.isDeleted, let draft = stored.state.draft else { continue }
            var poi = stored.state
            poi.content = draft
            poi.draft = nil
            poi.version += 1
            poi.updatedAt = now
            try await transaction.savePoi(poi, deleted: false)
            publish(.changed(poi))
            try await transaction.audit(commandId: command.commandId, actor: command.actor, action: command.action, entityId: id,
                                        before: stored.state.auditText(), after: poi.auditText())
            publishedStops.append(poi)
        }
    }

    mutating func discardTourDraft() async throws -> CatalogCommandResult {
        let stored = try await tourForChange()
        guard stored.state.draft != nil else { return missing("draft", "the tour has no unpublished changes") }
        var tour = stored.state
        tour.draft = nil
        tour.version += 1
        tour.updatedAt = now
        return try await commit(tour, before: stored.state)
    }

    /// `tour.schedule`: set (checked as a publish would be now) or, without `scheduleAt`, cancel.
    mutating func scheduleTour() async throws -> CatalogCommandResult {
        let stored = try await tourForChange()
        var tour = stored.state
        if let at = command.scheduleAt {
            guard let status = command.status, status == .published || status == .draft else {
                return missing("status", "Choose what happens at that time: published or draft")
            }
            guard at > now else { return missing("scheduleAt", "Choose a time in the future") }
            guard at < now.addingTimeInterval(2 * 365 * 86_400) else { return missing("scheduleAt", "Choose a time within two years") }
            var confirmed: [UUID]?
            if status == .published {
                let confirming = command.confirmFarStops == true
                if let refusal = try await publishRefusal(tour.working.stops, cover: tour.working.content.coverImage,
                                                          confirming: confirming ? .all : .none) { return refusal }
                // What is confirmed is these stops being far, not any stop that is far when it is due.
                if confirming { confirmed = try await farStops(tour.working.stops).map(\.id) }
            }
            tour.schedule = TourSchedule(status: status, at: at, by: command.actor, confirmedFarStops: confirmed)
        } else {
            guard tour.schedule != nil else { return missing("scheduleAt", "the tour has no schedule to cancel") }
            tour.schedule = nil
        }
        tour.version += 1
        tour.updatedAt = now
        return try await commit(tour, before: stored.state)
    }

    /// `tour.apply-schedule`, sent by catalog's scheduler: the due status change, or, when the checks refuse it now,
    /// the reason kept on the schedule (which is then no longer due).
    mutating func applyTourSchedule() async throws -> CatalogCommandResult {
        let stored = try await tourForChange()
        guard let schedule = stored.state.schedule, schedule.isPending, schedule.at <= now else {
            return missing("scheduleAt", "nothing is due for this tour")
        }
        var tour = stored.state
        if let refusal = try await setStatus(of: &tour, to: schedule.status, confirming: .only(Set(schedule.confirmedFarStops ?? []))) {
            tour = stored.state
            tour.schedule?.failure = refusal.message ?? "refused"
        } else {
            tour.schedule = nil
        }
        tour.version += 1
        tour.updatedAt = now
        return try await commit(tour, before: stored.state)
    }

    mutating func deleteTour() async throws -> CatalogCommandResult {
        let stored = try await tourForChange()
        let id = stored.state.id
        var tour = stored.state
        tour.version += 1
        tour.updatedAt = now
        try await transaction.saveTour(tour, deleted: true)
        publish(CatalogEvent(kind: .tourDeleted, entityId: id, version: tour.version))
        return try await applied(id, version: tour.version, before: stored.state, after: nil as TourState?)
    }

    mutating func commit(_ tour: TourState, before: TourState?) async throws -> CatalogCommandResult {
        try await transaction.saveTour(tour, deleted: false)
        publish(.changed(tour))
        var result = try await applied(tour.id, version: tour.version, before: before, after: tour)
        result.tour = tour
        if !publishedStops.isEmpty { result.pois = publishedStops }
        return result
    }
}
