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
    }

    public enum Via: String, Codable, Sendable, CaseIterable {
        case map, list, search, nearby
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

    public init(id: UUID = UUID(), type: Kind, deviceId: String, touristId: String? = nil, occurredAt: Date,
                platform: String? = nil, osVersion: String? = nil, model: String? = nil, appVersion: String? = nil,
                tourId: UUID? = nil, poiId: UUID? = nil, durationSeconds: Double? = nil, dwellSeconds: Double? = nil,
                via: Via? = nil, url: String? = nil, mediaType: MediaType? = nil) {
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
    }

    /// The fields each type must carry, beyond id, type, deviceId and occurredAt.
    public static func requiredFields(of kind: Kind) -> [String] {
        switch kind {
        case .deviceRegistered: ["platform", "osVersion", "model", "appVersion"]
        case .tourStarted: ["tourId"]
        case .tourCompleted: ["tourId", "durationSeconds"]
        case .poiViewed: ["poiId", "via"]
        case .poiArrived: ["poiId"]
        case .poiLeft: ["poiId", "dwellSeconds"]
        case .mediaPlayed: ["poiId", "url", "mediaType"]
        }
    }

    /// Nil when the event is acceptable at `now`, else the reason it is rejected.
    public func validationError(now: Date = Date()) -> String? {
        if deviceId.isEmpty || deviceId.count > 128 { return "deviceId must be 1 to 128 characters" }
        if let touristId, touristId.isEmpty || touristId.count > 128 { return "touristId must be 1 to 128 characters" }
        if occurredAt < now.addingTimeInterval(-30 * 86_400) { return "occurredAt is more than 30 days old" }
        if occurredAt > now.addingTimeInterval(5 * 60) { return "occurredAt is more than 5 minutes in the future" }
        let present: [String: Bool] = [
            "platform": platform != nil, "osVersion": osVersion != nil, "model": model != nil, "appVersion": appVersion != nil,
            "tourId": tourId != nil, "poiId": poiId != nil, "durationSeconds": durationSeconds != nil,
            "dwellSeconds": dwellSeconds != nil, "via": via != nil, "url": url != nil, "mediaType": mediaType != nil,
        ]
        for field in Self.requiredFields(of: type) where present[field] != true {
            return "missing field \(field) for \(type.rawValue)"
        }
        for (name, value) in [("durationSeconds", durationSeconds), ("dwellSeconds", dwellSeconds)] {
            if let value, !(value.isFinite && value >= 0 && value <= 7 * 86_400) {
                return "\(name) must be between 0 and 604800"
            }
        }
        for (name, value) in [("platform", platform), ("osVersion", osVersion), ("model", model), ("appVersion", appVersion), ("url", url)] {
            if let value, value.isEmpty || value.count > 2_048 { return "\(name) must be 1 to 2048 characters" }
        }
        return nil
    }
}
