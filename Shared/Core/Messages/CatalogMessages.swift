import Foundation

// The catalog's public messages: commands (admin → catalog), their results (catalog → admin) and
// the event-carried state of tours and POIs (catalog → feed, admin, analytics).

public enum ContentStatus: String, Codable, Sendable, CaseIterable {
    case draft, published, archived
}

public enum MediaType: String, Codable, Sendable, CaseIterable {
    case page, video, audio, image
}

public struct MediaLink: Codable, Sendable, Equatable, Hashable {
    public var name: String
    public var type: MediaType
    public var url: String

    public init(name: String, type: MediaType, url: String) {
        self.name = name
        self.type = type
        self.url = url
    }
}

/// The editable fields of a tour.
public struct TourContent: Codable, Sendable, Equatable {
    public var name: String
    public var summary: String
    public var purpose: String
    /// The numeric id of the original iTour, for the legacy XML feeds.
    public var legacyId: Int?
    /// DESIGN.md, "A tour's look and route": a picture's address and what it shows.
    public var coverImage: String?
    public var coverImageAlt: String?
    /// How long the walk takes, in whole minutes.
    public var estimatedMinutes: Int?
    /// `#rrggbb`.
    public var color: String?
    /// The path walked; the straight lines between stops when nil.
    public var route: LineString?
    /// Its texts in other languages (DESIGN.md "Languages"); nil when none.
    public var translations: Translations?

    public static let estimatedMinutesRange = 1...1_440

    public init(name: String, summary: String = "", purpose: String = "", legacyId: Int? = nil, coverImage: String? = nil,
                coverImageAlt: String? = nil, estimatedMinutes: Int? = nil, color: String? = nil, route: LineString? = nil,
                translations: Translations? = nil) {
        self.name = name
        self.summary = summary
        self.purpose = purpose
        self.legacyId = legacyId
        self.coverImage = coverImage
        self.coverImageAlt = coverImageAlt
        self.estimatedMinutes = estimatedMinutes
        self.color = color
        self.route = route
        self.translations = Self.tidy(translations)
    }

    private enum CodingKeys: String, CodingKey {
        case name, summary, purpose, legacyId, coverImage, coverImageAlt, estimatedMinutes, color, route, translations
    }

    /// Through `init`, as the codec's reader: translations are tidied the same way whichever reads them.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(name: try container.decode(String.self, forKey: .name), summary: try container.decode(String.self, forKey: .summary),
                  purpose: try container.decode(String.self, forKey: .purpose), legacyId: try container.decodeIfPresent(Int.self, forKey: .legacyId),
                  coverImage: try container.decodeIfPresent(String.self, forKey: .coverImage),
                  coverImageAlt: try container.decodeIfPresent(String.self, forKey: .coverImageAlt),
                  estimatedMinutes: try container.decodeIfPresent(Int.self, forKey: .estimatedMinutes),
                  color: try container.decodeIfPresent(String.self, forKey: .color), route: try container.decodeIfPresent(LineString.self, forKey: .route),
                  translations: try container.decodeIfPresent(Translations.self, forKey: .translations))
    }

    /// The walking distance phones are told: along the route, else along the stops in order.
    public func walkingDistanceMeters(stops: [Coordinate]) -> Double {
        route?.lengthMeters ?? Geo.pathLengthMeters(stops)
    }
}

/// The editable fields of a point of interest.
public struct PoiContent: Codable, Sendable, Equatable {
    public var name: String
    public var summary: String
    public var description: String
    public var latitude: Double
    public var longitude: Double
    /// Category paths, e.g. ["Eat/Cafés", "See/Museums"]: the first is the POI's main category.
    public var categories: [String]
    public var buildings: [String]
    public var pictures: [String]
    public var links: [MediaLink]
    public var address: String?
    public var phone: String?
    public var website: String?
    /// OpenStreetMap `opening_hours` syntax (`OpeningHours`).
    public var openingHours: String?
    public var legacyId: Int?
    /// 0 (free) to 4 (very expensive).
    public var priceLevel: Int?
    /// Free-text access notes: step-free entrances, lifts, accessible toilets.
    public var accessibility: String?
    /// What each picture shows, parallel to `pictures` ("" for none: a library picture's own alt text then serves).
    public var pictureAlts: [String]
    /// The geofence phones use for `poi.arrived`, in metres; nil means `PoiContent.defaultTriggerRadiusMeters`.
    public var triggerRadiusMeters: Int?
    /// The sha256 of a library audio item phones play on `poi.arrived`.
    public var narration: String?
    /// Its texts in other languages (DESIGN.md "Languages"); nil when none.
    public var translations: Translations?

    public static let defaultTriggerRadiusMeters = 30
    public static let triggerRadiusRange = 5...500

    public init(name: String, summary: String = "", description: String = "", latitude: Double, longitude: Double,
                category: String? = nil, categories: [String]? = nil, buildings: [String] = [], pictures: [String] = [],
                links: [MediaLink] = [], address: String? = nil, phone: String? = nil, website: String? = nil, openingHours: String? = nil,
                legacyId: Int? = nil, priceLevel: Int? = nil, accessibility: String? = nil, pictureAlts: [String] = [],
                triggerRadiusMeters: Int? = nil, narration: String? = nil, translations: Translations? = nil) {
        self.name = name
        self.summary = summary
        self.description = description
        self.latitude = latitude
        self.longitude = longitude
        self.categories = categories ?? category.map { [$0] } ?? []
        self.buildings = buildings
        self.pictures = pictures
        self.links = links
        self.address = address
        self.phone = phone
        self.website = website
        self.openingHours = openingHours
        self.legacyId = legacyId
        self.priceLevel = priceLevel
        self.accessibility = accessibility
        // Trailing empty alt texts say nothing: dropped, so the stored form (written only when one is given) reads back equal.
        self.pictureAlts = Array(pictureAlts[..<(pictureAlts.lastIndex { !$0.isEmpty }.map { $0 + 1 } ?? 0)])
        self.triggerRadiusMeters = triggerRadiusMeters
        self.narration = narration
        self.translations = Self.tidy(translations)
    }

    /// The alt text the POI gives picture `index` itself, if any.
    public func ownAlt(ofPicture index: Int) -> String? {
        guard pictureAlts.indices.contains(index) else { return nil }
        let alt = pictureAlts[index]
        return alt.isEmpty ? nil : alt
    }

    /// The main category: the first. Setting it replaces the first and keeps the others.
    public var category: String? {
        get { categories.first }
        set {
            if let newValue {
                if categories.isEmpty { categories = [newValue] } else { categories[0] = newValue }
            } else {
                categories = []
            }
        }
    }

    /// JSON keeps `category` (the main one) for readers that know one category; `categories` is written
    /// only when there are several, so a POI with one category reads and writes as it always did.
    private enum CodingKeys: String, CodingKey {
        case name, summary, description, latitude, longitude, category, categories, buildings, pictures, links, address, phone, website,
             openingHours, legacyId, priceLevel, accessibility, pictureAlts, triggerRadiusMeters, narration, translations
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(name: try container.decode(String.self, forKey: .name), summary: try container.decode(String.self, forKey: .summary),
                  description: try container.decode(String.self, forKey: .description), latitude: try container.decode(Double.self, forKey: .latitude),
                  longitude: try container.decode(Double.self, forKey: .longitude),
                  category: try container.decodeIfPresent(String.self, forKey: .category),
                  categories: try container.decodeIfPresent([String].self, forKey: .categories),
                  buildings: try container.decode([String].self, forKey: .buildings), pictures: try container.decode([String].self, forKey: .pictures),
                  links: try container.decode([MediaLink].self, forKey: .links), address: try container.decodeIfPresent(String.self, forKey: .address),
                  phone: try container.decodeIfPresent(String.self, forKey: .phone), website: try container.decodeIfPresent(String.self, forKey: .website),
                  openingHours: try container.decodeIfPresent(String.self, forKey: .openingHours),
                  legacyId: try container.decodeIfPresent(Int.self, forKey: .legacyId),
                  priceLevel: try container.decodeIfPresent(Int.self, forKey: .priceLevel),
                  accessibility: try container.decodeIfPresent(String.self, forKey: .accessibility),
                  pictureAlts: try container.decodeIfPresent([String].self, forKey: .pictureAlts) ?? [],
                  triggerRadiusMeters: try container.decodeIfPresent(Int.self, forKey: .triggerRadiusMeters),
                  narration: try container.decodeIfPresent(String.self, forKey: .narration),
                  translations: try container.decodeIfPresent(Translations.self, forKey: .translations))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(summary, forKey: .summary)
        try container.encode(description, forKey: .description)
        try container.encode(latitude, forKey: .latitude)
        try container.encode(longitude, forKey: .longitude)
        try container.encodeIfPresent(category, forKey: .category)
        if categories.count > 1 { try container.encode(categories, forKey: .categories) }
        try container.encode(buildings, forKey: .buildings)
        try container.encode(pictures, forKey: .pictures)
        try container.encode(links, forKey: .links)
        try container.encodeIfPresent(address, forKey: .address)
        try container.encodeIfPresent(phone, forKey: .phone)
        try container.encodeIfPresent(website, forKey: .website)
        try container.encodeIfPresent(openingHours, forKey: .openingHours)
        try container.encodeIfPresent(legacyId, forKey: .legacyId)
        try container.encodeIfPresent(priceLevel, forKey: .priceLevel)
        try container.encodeIfPresent(accessibility, forKey: .accessibility)
        if pictureAlts.contains(where: { !$0.isEmpty }) { try container.encode(pictureAlts, forKey: .pictureAlts) }
        try container.encodeIfPresent(triggerRadiusMeters, forKey: .triggerRadiusMeters)
        try container.encodeIfPresent(narration, forKey: .narration)
        try container.encodeIfPresent(translations, forKey: .translations)
    }
}

/// How long catalog lists a deleted tour or POI as recently deleted (`catalog.recently-deleted`); a revert restores it
/// after that too, since its tombstone and audit rows stay.
public enum CatalogRetention {
    public static let restorableDays = 30
}

/// What a command asks catalog to do; the envelope's `type`.
public enum CatalogAction: String, Codable, Sendable, CaseIterable {
    case createTour = "tour.create"
    case updateTour = "tour.update"
    case deleteTour = "tour.delete"
    case setTourStatus = "tour.set-status"
    case setTourStops = "tour.set-stops"
    case createPoi = "poi.create"
    case updatePoi = "poi.update"
    case deletePoi = "poi.delete"
    case snapshot = "catalog.snapshot"
    case createCategory = "category.create"
    case renameCategory = "category.rename"
    case deleteCategory = "category.delete"
    /// Many tour, POI and category commands applied together in one transaction (bulk import): all or
    /// nothing, or with `skipInvalidRows` every row that fails skipped whole.
    case importBatch = "catalog.import"
    /// A tour's or POI's history from the audit log (a read: nothing changes, nothing is recorded).
    case history = "catalog.history"
    /// Tours and POIs deleted in the last `CatalogRetention.restorableDays` days and not restored since, newest first,
    /// each as its last state before the delete (a read, like `catalog.history`). `tour.revert` / `poi.revert` of a
    /// deleted one restores it.
    case recentlyDeleted = "catalog.recently-deleted"
    /// A tour's content and stops, or a POI's content, as they were at `revertToVersion`, as a new version. Of a
    /// deleted tour or POI, it restores that version, unpublished (the tour with its stops that still exist).
    case revertTour = "tour.revert"
    case revertPoi = "poi.revert"
    /// Drafts (DESIGN.md, "Drafts and publishing").
    case discardTourDraft = "tour.discard-draft"
    case publishPoi = "poi.publish"
    /// A POI's own status (DESIGN.md, "Places on their own"): `published` or `draft`.
    case setPoiStatus = "poi.set-status"
    /// Calendar entries (DESIGN.md, "Calendar").
    case createCalendarEntry = "calendar.create"
    case updateCalendarEntry = "calendar.update"
    case setCalendarEntryStatus = "calendar.set-status"
    case deleteCalendarEntry = "calendar.delete"
    /// The people directory (DESIGN.md, "People").
    case createPerson = "person.create"
    case updatePerson = "person.update"
    case setPersonStatus = "person.set-status"
    case deletePerson = "person.delete"
    /// Content pages (DESIGN.md, "Pages").
    case createPage = "page.create"
    case updatePage = "page.update"
    case setPageStatus = "page.set-status"
    case deletePage = "page.delete"
    /// Featured items (DESIGN.md, "Featured").
    case createFeatured = "featured.create"
    case updateFeatured = "featured.update"
    case setFeaturedStatus = "featured.set-status"
    case deleteFeatured = "featured.delete"
    /// Media library items (DESIGN.md, "Media library").
    case createMedia = "media.create"
    case updateMedia = "media.update"
    case setMediaStatus = "media.set-status"
    case deleteMedia = "media.delete"
    case discardPoiDraft = "poi.discard-draft"
    /// Publish or unpublish a tour at a time (`status`, `scheduleAt`; without `scheduleAt`, cancel).
    case scheduleTour = "tour.schedule"
    /// Catalog's own: its scheduler applying a due schedule.
    case applyTourSchedule = "tour.apply-schedule"
}

/// A command on `catalog.commands`. Which fields matter depends on `action`; catalog validates them
/// and answers missing or wrong ones as field errors.
public struct CatalogCommand: Codable, Sendable, Equatable {
    public var commandId: UUID
    public var action: CatalogAction
    /// Who asked (an admin user's email, or a tool's name), for the audit log.
    public var actor: String
    /// The tour or POI acted on; for creates, the id to give it (so a retried create is the same create).
    public var entityId: UUID?
    /// The version the editor saw; a different current version is a conflict. Nil skips the check.
    public var expectedVersion: Int?
    public var tour: TourContent?
    public var poi: PoiContent?
    public var stops: [UUID]?
    public var status: ContentStatus?
    /// For `category.create` (name and parent) and `category.rename` (name).
    public var category: CategoryContent?
    /// For `catalog.import`: the rows, each one or more commands that stand or fall together.
    public var rows: [CatalogBatchRow]?
    /// For `catalog.import`: apply the good rows and report the bad ones, instead of applying nothing.
    public var skipInvalidRows: Bool?
    /// For `catalog.snapshot`: the asker reads `catalog.snapshot-chunk` events. Without it catalog republishes
    /// one event per entity, which every reader understands (a reader built before chunks asks that way).
    public var chunkedSnapshot: Bool?
    /// For `catalog.snapshot`: the asker takes a snapshot that answers other requests too, whose markers name its id in
    /// `answers` (DESIGN.md "One snapshot for many readers"). Without it catalog answers the request with a snapshot of its own.
    public var sharedSnapshot: Bool?
    /// For `tour.revert` and `poi.revert`: the version whose content comes back.
    public var revertToVersion: Int?
    /// For publishing a tour: publish although a stop is far from the others (the editor confirmed it).
    public var confirmFarStops: Bool?
    /// For `tour.update`, `tour.set-stops`, `poi.update` and the reverts: a change to published content stays a draft
    /// until published (the admin's edits; imports and tools change content directly).
    public var asDraft: Bool?
    /// For `tour.schedule`: when; nil cancels the schedule.
    public var scheduleAt: Date?
    /// For `calendar.create` and `calendar.update`.
    public var calendarEntry: CalendarEntryContent?
    /// For `person.create` and `person.update`.
    public var person: PersonContent?
    /// For `page.create` and `page.update`.
    public var page: PageContent?
    /// For `featured.create` and `featured.update`.
    public var featured: FeaturedContent?
    /// For `media.create` and `media.update`.
    public var media: MediaContent?

    public init(commandId: UUID = UUID.random(), action: CatalogAction, actor: String, entityId: UUID? = nil,
                expectedVersion: Int? = nil, tour: TourContent? = nil, poi: PoiContent? = nil,
                stops: [UUID]? = nil, status: ContentStatus? = nil, category: CategoryContent? = nil,
                rows: [CatalogBatchRow]? = nil, skipInvalidRows: Bool? = nil, chunkedSnapshot: Bool? = nil, sharedSnapshot: Bool? = nil,
                revertToVersion: Int? = nil,
                confirmFarStops: Bool? = nil, asDraft: Bool? = nil, scheduleAt: Date? = nil, calendarEntry: CalendarEntryContent? = nil,
                person: PersonContent? = nil, page: PageContent? = nil, featured: FeaturedContent? = nil,
                media: MediaContent? = nil) {
        self.commandId = commandId
        self.action = action
        self.actor = actor
        self.entityId = entityId
        self.expectedVersion = expectedVersion
        self.tour = tour
        self.poi = poi
        self.stops = stops
        self.status = status
        self.category = category
        self.rows = rows
        self.skipInvalidRows = skipInvalidRows
        self.chunkedSnapshot = chunkedSnapshot
        self.sharedSnapshot = sharedSnapshot
        self.revertToVersion = revertToVersion
        self.confirmFarStops = confirmFarStops
        self.asDraft = asDraft
        self.scheduleAt = scheduleAt
        self.calendarEntry = calendarEntry
        self.person = person
        self.page = page
        self.featured = featured
        self.media = media
    }

    /// The Kafka key: the aggregate id, so one entity's commands stay in order.
    public var key: String { entityId?.uuidString.lowercased() ?? commandId.uuidString.lowercased() }
}

/// Also thrown, where one field's text is read on its own (e.g. `CalendarRecurrence(rrule:)`).
public struct FieldError: Codable, Sendable, Equatable, Error {
    public var field: String
    public var message: String

    public init(field: String, message: String) {
        self.field = field
        self.message = message
    }
}

/// The answer to a command on `catalog.command-results`, keyed by commandId.
public struct CatalogCommandResult: Codable, Sendable, Equatable {
    public enum Outcome: String, Codable, Sendable {
        case applied, rejected, conflict
    }

    public var commandId: UUID
    public var action: CatalogAction
    public var outcome: Outcome
    public var entityId: UUID?
    /// The entity's version after the command (applied) or its current version (conflict).
    public var version: Int?
    public var errors: [FieldError]
    public var message: String?
    /// The resulting (or, on conflict, the current) state of the entity.
    public var tour: TourState?
    public var poi: PoiState?
    public var category: CategoryState?
    /// For `catalog.import`: what became of each row, in order.
    public var rows: [CatalogBatchRowResult]?
    /// True when the command had been handled before and this is its stored result, answered again.
    public var repeated: Bool?
    /// For `catalog.history`: the entity's changes, newest first.
    public var history: [CatalogHistoryEntry]?
    /// POIs the command changed beside its entity: a tour's publish publishes its stops' drafts.
    public var pois: [PoiState]?
    /// The calendar entry's state after a calendar command (or, on conflict, its current state).
    public var calendarEntry: CalendarEntryState?
    /// The directory entry's state after a person command (or, on conflict, its current state).
    public var person: PersonState?
    /// The page's state after a page command (or, on conflict, its current state).
    public var page: PageState?
    /// The featured item's state after a featured command (or, on conflict, its current state).
    public var featured: FeaturedState?
    /// The media item's state after a media command (or, on conflict, its current state).
    public var media: MediaState?

    public init(commandId: UUID, action: CatalogAction, outcome: Outcome, entityId: UUID? = nil, version: Int? = nil,
                errors: [FieldError] = [], message: String? = nil, tour: TourState? = nil, poi: PoiState? = nil,
                category: CategoryState? = nil, rows: [CatalogBatchRowResult]? = nil) {
        self.commandId = commandId
        self.action = action
        self.outcome = outcome
        self.entityId = entityId
        self.version = version
        self.errors = errors
        self.message = message
        self.tour = tour
        self.poi = poi
        self.category = category
        self.rows = rows
    }
}

/// One change of a tour or POI, from catalog's audit log: who, when, which command, and the state after it
/// (nil after a delete). The state before is the next older entry's.
public struct CatalogHistoryEntry: Codable, Sendable, Equatable {
    public var at: Date
    public var actor: String
    public var action: CatalogAction
    public var tour: TourState?
    public var poi: PoiState?

    public init(at: Date, actor: String, action: CatalogAction, tour: TourState? = nil, poi: PoiState? = nil) {
        self.at = at
        self.actor = actor
        self.action = action
        self.tour = tour
        self.poi = poi
    }
}

/// A tour's full state after a change (event-carried state).
public struct TourState: Codable, Sendable, Equatable {
    public var id: UUID
    public var version: Int
    public var status: ContentStatus
    public var content: TourContent
    /// POI ids in walking order.
    public var stops: [UUID]
    public var updatedAt: Date
    /// Changes to a published tour waiting for Publish (DESIGN.md, "Drafts and publishing"); `content` and
    /// `stops` stay what the feed shows.
    public var draft: TourDraft?
    /// A publish or unpublish waiting for its time.
    public var schedule: TourSchedule?

    public init(id: UUID, version: Int, status: ContentStatus, content: TourContent, stops: [UUID], updatedAt: Date, draft: TourDraft? = nil,
                schedule: TourSchedule? = nil) {
        self.schedule = schedule
        self.id = id
        self.version = version
        self.status = status
        self.content = content
        self.stops = stops
        self.updatedAt = updatedAt
        self.draft = draft
    }

    /// What editors work on: the draft when there is one, else the content itself.
    public var working: TourDraft { draft ?? TourDraft(content: content, stops: stops) }
}

/// When catalog is to publish or unpublish a tour, and who asked (DESIGN.md, "Scheduled publishing").
public struct TourSchedule: Codable, Sendable, Equatable {
    /// `published` or `draft`.
    public var status: ContentStatus
    public var at: Date
    /// Who set it.
    public var by: String
    /// The stops that were far from the others when it was set, and confirmed: when it is due, only these may be.
    public var confirmedFarStops: [UUID]?
    /// Why it could not be applied at its time; a schedule with a failure is no longer due.
    public var failure: String?

    public init(status: ContentStatus, at: Date, by: String, confirmedFarStops: [UUID]? = nil, failure: String? = nil) {
        self.status = status
        self.at = at
        self.by = by
        self.confirmedFarStops = confirmedFarStops
        self.failure = failure
    }

    /// Waiting to be applied at `at`.
    public var isPending: Bool { failure == nil }
}

/// A tour's content and stops as edited, not yet published.
public struct TourDraft: Codable, Sendable, Equatable {
    public var content: TourContent
    public var stops: [UUID]

    public init(content: TourContent, stops: [UUID]) {
        self.content = content
        self.stops = stops
    }
}

/// A POI's full state after a change.
public struct PoiState: Codable, Sendable, Equatable {
    public var id: UUID
    public var version: Int
    /// `published`: on the feed as a place of its own; `draft`: only through published tours that stop there
    /// (DESIGN.md, "Places on their own"). Absent in older states: `draft`.
    public var status: ContentStatus
    public var content: PoiContent
    public var updatedAt: Date
    /// Changes to a POI on the feed, waiting for Publish; `content` is what the feed shows.
    public var draft: PoiContent?

    public init(id: UUID, version: Int, status: ContentStatus = .draft, content: PoiContent, updatedAt: Date, draft: PoiContent? = nil) {
        self.id = id
        self.version = version
        self.status = status
        self.content = content
        self.updatedAt = updatedAt
        self.draft = draft
    }

    private enum CodingKeys: String, CodingKey {
        case id, version, status, content, updatedAt, draft
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(UUID.self, forKey: .id)
        version = try container.decode(Int.self, forKey: .version)
        status = try container.decodeIfPresent(ContentStatus.self, forKey: .status) ?? .draft
        content = try container.decode(PoiContent.self, forKey: .content)
        updatedAt = try container.decode(Date.self, forKey: .updatedAt)
        draft = try container.decodeIfPresent(PoiContent.self, forKey: .draft)
    }

    /// What editors work on: the draft when there is one, else the content itself.
    public var working: PoiContent { draft ?? content }
}

/// Payload of an event on `catalog.events`; the envelope type says which field is set.
public struct CatalogEvent: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable {
        case tourChanged = "tour.changed"
        case tourDeleted = "tour.deleted"
        case poiChanged = "poi.changed"
        case poiDeleted = "poi.deleted"
        /// Written to every partition after a snapshot's entities: once a consumer saw the marker on all
        /// partitions, it has the whole catalog.
        case snapshotMarker = "catalog.snapshot-marker"
        /// Many entities of one snapshot in one message (`pois`, `tours`): a snapshot of a city is a few
        /// hundred messages, not one per entity. Read as one `poi.changed` / `tour.changed` per entity.
        case snapshotChunk = "catalog.snapshot-chunk"
    }

    public var kind: Kind
    public var entityId: UUID?
    public var version: Int?
    public var tour: TourState?
    public var poi: PoiState?
    /// Set on events republished by a snapshot, and on its markers: the snapshot command's id.
    public var snapshotId: UUID?
    /// On a snapshot's markers, when the snapshot answers several requests: every request id it answers, `snapshotId`
    /// among them (DESIGN.md "One snapshot for many readers").
    public var answers: [UUID]?
    public var partition: Int32?
    public var partitionCount: Int?
    /// A snapshot chunk's entities.
    public var pois: [PoiState]?
    public var tours: [TourState]?

    public init(kind: Kind, entityId: UUID? = nil, version: Int? = nil, tour: TourState? = nil, poi: PoiState? = nil,
                snapshotId: UUID? = nil, partition: Int32? = nil, partitionCount: Int? = nil, pois: [PoiState]? = nil, tours: [TourState]? = nil,
                answers: [UUID]? = nil) {
        self.kind = kind
        self.entityId = entityId
        self.version = version
        self.tour = tour
        self.poi = poi
        self.snapshotId = snapshotId
        self.answers = answers
        self.partition = partition
        self.partitionCount = partitionCount
        self.pois = pois
        self.tours = tours
    }

    /// Whether this marker (or event) is of the snapshot that answers request `id`.
    public func answers(_ id: UUID) -> Bool { snapshotId == id || answers?.contains(id) == true }

    /// A chunk of a snapshot: POIs and tours together, the POIs first when read.
    public static func snapshotChunk(pois: [PoiState] = [], tours: [TourState] = [], snapshotId: UUID?) -> CatalogEvent {
        CatalogEvent(kind: .snapshotChunk, snapshotId: snapshotId, pois: pois.isEmpty ? nil : pois, tours: tours.isEmpty ? nil : tours)
    }

    /// The events a chunk stands for, one per entity, POIs first; any other event is itself.
    public var entityEvents: [CatalogEvent] {
        guard kind == .snapshotChunk else { return [self] }
        return (pois ?? []).map { .changed($0, snapshotId: snapshotId) } + (tours ?? []).map { .changed($0, snapshotId: snapshotId) }
    }

    public static func changed(_ tour: TourState, snapshotId: UUID? = nil) -> CatalogEvent {
        CatalogEvent(kind: .tourChanged, entityId: tour.id, version: tour.version, tour: tour, snapshotId: snapshotId)
    }

    public static func changed(_ poi: PoiState, snapshotId: UUID? = nil) -> CatalogEvent {
        CatalogEvent(kind: .poiChanged, entityId: poi.id, version: poi.version, poi: poi, snapshotId: snapshotId)
    }
}
