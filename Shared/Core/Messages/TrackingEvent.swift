import Foundation

/// A tourist, device or visit event sent by a phone (DESIGN.md "Tracking events"). The feed validates it
/// and produces it to `tracking.events`; analytics folds it into reports.
public struct TrackingEvent: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable, CaseIterable {
        case deviceRegistered = "device.registered"
        case tourStarted = "tour.started"
        case tourCompleted = "tour.completed"
        case poiViewed = "poi.viewed"
        case poiArrived = "poi.arrived"
        case poiLeft = "poi.left"
        case mediaPlayed = "media.played"
        /// A search in the app: what was typed and how many results it found (issue 17).
        case searchPerformed = "search.performed"
        /// A calendar event, a content page or a directory entry opened in the app (issue 18).
        case eventViewed = "event.viewed"
        case pageViewed = "page.viewed"
        case personViewed = "person.viewed"
    }

    public enum Via: String, Codable, Sendable, CaseIterable {
        case map, list, search, nearby, qr
    }

    public var id: UUID
    public var type: Kind
    public var deviceId: String
    public var touristId: String?
    public var occurredAt: Date
    // device.registered
    public var platform: String?
    public var osVersion: String?
    public var model: String?
    public var appVersion: String?
    // tour and POI events
    public var tourId: UUID?
    public var poiId: UUID?
    public var durationSeconds: Double?
    public var dwellSeconds: Double?
    public var via: Via?
    public var url: String?
    public var mediaType: MediaType?
    // search.performed
    public var query: String?
    public var resultCount: Int?
    // event.viewed, page.viewed, person.viewed
    public var eventId: UUID?
    public var pageId: UUID?
    public var personId: UUID?
    /// The app's language, a BCP 47 tag (DESIGN.md "Languages"), on any type; nil when the phone did not say (issue 45).
    public var language: String?

    public init(id: UUID = UUID.random(), type: Kind, deviceId: String, touristId: String? = nil, occurredAt: Date,
                platform: String? = nil, osVersion: String? = nil, model: String? = nil, appVersion: String? = nil,
                tourId: UUID? = nil, poiId: UUID? = nil, durationSeconds: Double? = nil, dwellSeconds: Double? = nil,
                via: Via? = nil, url: String? = nil, mediaType: MediaType? = nil, query: String? = nil, resultCount: Int? = nil,
                eventId: UUID? = nil, pageId: UUID? = nil, personId: UUID? = nil, language: String? = nil) {
        self.id = id
        self.type = type
        self.deviceId = deviceId
        self.touristId = touristId
        self.occurredAt = occurredAt
        self.platform = platform
        self.osVersion = osVersion
        self.model = model
        self.appVersion = appVersion
        self.tourId = tourId
        self.poiId = poiId
        self.durationSeconds = durationSeconds
        self.dwellSeconds = dwellSeconds
        self.via = via
        self.url = url
        self.mediaType = mediaType
        self.query = query
        self.resultCount = resultCount
        self.eventId = eventId
        self.pageId = pageId
        self.personId = personId
        self.language = language
    }

    /// Every JSON key of a tracking event, and of the envelope it travels in on `tracking.events`: each
    /// spelled here once, for the codec's reader and writer and for the reasons that name a field.
    public enum Key: Int, CaseIterable, Sendable {
        case id, type, deviceId, touristId, occurredAt, platform, osVersion, model, appVersion
        case tourId, poiId, durationSeconds, dwellSeconds, via, url, mediaType, query, resultCount, eventId, pageId, personId
        case language
        /// The envelope's own (`id`, `type` and `occurredAt` it shares with the event).
        case data, schemaVersion, source

        public var name: StaticString {
            switch self {
            case .id: "id"
            case .type: "type"
            case .deviceId: "deviceId"
            case .touristId: "touristId"
            case .occurredAt: "occurredAt"
            case .platform: "platform"
            case .osVersion: "osVersion"
            case .model: "model"
            case .appVersion: "appVersion"
            case .tourId: "tourId"
            case .poiId: "poiId"
            case .durationSeconds: "durationSeconds"
            case .dwellSeconds: "dwellSeconds"
            case .via: "via"
            case .url: "url"
            case .mediaType: "mediaType"
            case .query: "query"
            case .resultCount: "resultCount"
            case .eventId: "eventId"
            case .pageId: "pageId"
            case .personId: "personId"
            case .language: "language"
            case .data: "data"
            case .schemaVersion: "schemaVersion"
            case .source: "source"
            }
        }

        /// The keys an event itself has (not the envelope's own).
        public static let eventKeys = allCases.filter { $0.rawValue < Key.data.rawValue }
    }

    /// The fields each type must carry, beyond id, type, deviceId and occurredAt.
    public static func requiredFields(of kind: Kind) -> [Key] {
        switch kind {
        case .deviceRegistered: [.platform, .osVersion, .model, .appVersion]
        case .tourStarted: [.tourId]
        case .tourCompleted: [.tourId, .durationSeconds]
        case .poiViewed: [.poiId, .via]
        case .poiArrived: [.poiId]
        case .poiLeft: [.poiId, .dwellSeconds]
        case .mediaPlayed: [.poiId, .url, .mediaType]
        case .searchPerformed: [.query, .resultCount]
        case .eventViewed: [.eventId]
        case .pageViewed: [.pageId]
        case .personViewed: [.personId]
        }
    }

    /// Nil when the event is acceptable at `now`, else the reason it is rejected.
    public func validationError(now: Date = Date()) -> String? {
        if let reason = Self.identifier(.deviceId, deviceId) ?? Self.identifier(.touristId, touristId) { return reason }
        if occurredAt < now.addingTimeInterval(-30 * 86_400) { return "\(Key.occurredAt.name) is more than 30 days old" }
        if occurredAt > now.addingTimeInterval(5 * 60) { return "\(Key.occurredAt.name) is more than 5 minutes in the future" }
        for field in Self.requiredFields(of: type) where !has(field) {
            return "missing field \(field.name) for \(type.rawValue)"
        }
        if let reason = Self.seconds(.durationSeconds, durationSeconds) ?? Self.seconds(.dwellSeconds, dwellSeconds) { return reason }
        if let query, query.isEmpty || query.utf8.count > Self.maxQueryBytes { return "\(Key.query.name) must be 1 to \(Self.maxQueryBytes) bytes (UTF-8)" }
        if let resultCount, resultCount < 0 || resultCount > 1_000_000_000 { return "\(Key.resultCount.name) must be between 0 and 1000000000" }
        if let language, !LanguageTag.isWellFormed(language) {
            return "\(Key.language.name) must be a BCP 47 language tag such as es or pt-BR, at most \(LanguageTag.maxBytes) bytes"
        }
        return Self.text(.platform, platform) ?? Self.text(.osVersion, osVersion) ?? Self.text(.model, model)
            ?? Self.text(.appVersion, appVersion) ?? Self.text(.url, url)
    }

    // Checked one field at a time, without collections: the feed validates tens of thousands a second.

    private func has(_ field: Key) -> Bool {
        switch field {
        case .platform: platform != nil
        case .osVersion: osVersion != nil
        case .model: model != nil
        case .appVersion: appVersion != nil
        case .tourId: tourId != nil
        case .poiId: poiId != nil
        case .durationSeconds: durationSeconds != nil
        case .dwellSeconds: dwellSeconds != nil
        case .via: via != nil
        case .url: url != nil
        case .mediaType: mediaType != nil
        case .query: query != nil
        case .resultCount: resultCount != nil
        case .eventId: eventId != nil
        case .pageId: pageId != nil
        case .personId: personId != nil
        case .language: language != nil
        default: false
        }
    }

    /// Limits in UTF-8 bytes (DESIGN.md "Tracking events"), well below what a Postgres index row holds (about
    /// 2 700 bytes): a "character" can be one letter and thousands of combining marks.
    public static let maxIdentifierBytes = 128
    public static let maxQueryBytes = 800
    public static let maxTextBytes = 2_048

    private static func identifier(_ key: Key, _ value: String?) -> String? {
        guard let value, value.isEmpty || value.utf8.count > maxIdentifierBytes else { return nil }
        return "\(key.name) must be 1 to \(maxIdentifierBytes) bytes (UTF-8)"
    }

    private static func seconds(_ key: Key, _ value: Double?) -> String? {
        guard let value, !(value.isFinite && value >= 0 && value <= 7 * 86_400) else { return nil }
        return "\(key.name) must be between 0 and 604800"
    }

    private static func text(_ key: Key, _ value: String?) -> String? {
        guard let value, value.isEmpty || value.utf8.count > maxTextBytes else { return nil }
        return "\(key.name) must be 1 to \(maxTextBytes) bytes (UTF-8)"
    }
}
