import Foundation
import Shared

/// `tracking.events` messages as they were written before the codec moved to Shared (issue 16), kept
/// so every later writer is held to the same bytes and every later reader to reading them: analytics reads
/// what an older feed wrote, and what `itour-bench`/replay files hold (JSONEncoder's envelopes).
public enum TrackingWireSamples {
    /// The events the samples encode, each with a millisecond-exact time.
    public static let events: [TrackingEvent] = [
        TrackingEvent(id: UUID(uuidString: "0B5F3C2E-6D1A-4F7E-9C3B-2A1D5E8F7A90")!, type: .mediaPlayed, deviceId: "device \"7\" \\ / é😀", touristId: "t1",
              occurredAt: Date(timeIntervalSince1970: 1_746_109_800.123), tourId: UUID(uuidString: "0b5f3c2e-6d1a-4f7e-9c3b-2a1d5e8f7a91")!,
              poiId: UUID(uuidString: "0B5F3C2E-6D1A-4F7E-9C3B-2A1D5E8F7A92")!, durationSeconds: 12.5, url: "https://example.edu/a.mp3?x=1&y=<2>", mediaType: .audio),
        TrackingEvent(id: UUID(uuidString: "00000000-0000-4000-8000-000000000001")!, type: .deviceRegistered, deviceId: "d\n\t\r\u{1}\u{1F}\u{7F}", touristId: "tourist-9",
              occurredAt: Date(timeIntervalSince1970: 0), platform: "ios", osVersion: "17.4", model: "iPhone15,2", appVersion: "2.0.1"),
        TrackingEvent(id: UUID(uuidString: "00000000-0000-4000-8000-000000000002")!, type: .poiViewed, deviceId: "d",
              occurredAt: Date(timeIntervalSince1970: -1.5), poiId: UUID(uuidString: "00000000-0000-4000-8000-0000000000AB")!, via: .nearby),
        TrackingEvent(id: UUID(uuidString: "00000000-0000-4000-8000-000000000003")!, type: .poiLeft, deviceId: "d", occurredAt: Date(timeIntervalSince1970: 1_700_000_000),
              poiId: UUID(uuidString: "00000000-0000-4000-8000-0000000000AC")!, dwellSeconds: 3.0e-05),
        TrackingEvent(id: UUID(uuidString: "00000000-0000-4000-8000-000000000004")!, type: .tourCompleted, deviceId: "d", occurredAt: Date(timeIntervalSince1970: 253_402_300_799.999),
              tourId: UUID(uuidString: "00000000-0000-4000-8000-0000000000AD")!, durationSeconds: 604_800),
        TrackingEvent(id: UUID(uuidString: "00000000-0000-4000-8000-000000000005")!, type: .tourStarted, deviceId: "d", occurredAt: Date(timeIntervalSince1970: 1_735_689_600.5),
              tourId: UUID(uuidString: "00000000-0000-4000-8000-0000000000AE")!, dwellSeconds: 86399.25),
        TrackingEvent(id: UUID(uuidString: "00000000-0000-4000-8000-000000000006")!, type: .poiArrived, deviceId: "d", occurredAt: Date(timeIntervalSince1970: 1_735_689_600),
              tourId: UUID(uuidString: "00000000-0000-4000-8000-0000000000AF")!, poiId: UUID(uuidString: "00000000-0000-4000-8000-0000000000B0")!),
    ]

    /// `events`, as the feed wrote them to the topic (source "feed").
    public static let feed: [String] = [
        #"{"data":{"deviceId":"device \"7\" \\ / é😀","durationSeconds":12.5,"id":"0B5F3C2E-6D1A-4F7E-9C3B-2A1D5E8F7A90","mediaType":"audio","occurredAt":"2025-05-01T14:30:00.123Z","poiId":"0B5F3C2E-6D1A-4F7E-9C3B-2A1D5E8F7A92","tourId":"0B5F3C2E-6D1A-4F7E-9C3B-2A1D5E8F7A91","touristId":"t1","type":"media.played","url":"https://example.edu/a.mp3?x=1&y=<2>"},"id":"0B5F3C2E-6D1A-4F7E-9C3B-2A1D5E8F7A90","occurredAt":"2025-05-01T14:30:00.123Z","schemaVersion":1,"source":"feed","type":"media.played"}"#,
        #"{"data":{"appVersion":"2.0.1","deviceId":"d\n\t\r\u0001\u001f\#u{7F}","id":"00000000-0000-4000-8000-000000000001","model":"iPhone15,2","occurredAt":"1970-01-01T00:00:00.000Z","osVersion":"17.4","platform":"ios","touristId":"tourist-9","type":"device.registered"},"id":"00000000-0000-4000-8000-000000000001","occurredAt":"1970-01-01T00:00:00.000Z","schemaVersion":1,"source":"feed","type":"device.registered"}"#,
        #"{"data":{"deviceId":"d","id":"00000000-0000-4000-8000-000000000002","occurredAt":"1969-12-31T23:59:58.500Z","poiId":"00000000-0000-4000-8000-0000000000AB","type":"poi.viewed","via":"nearby"},"id":"00000000-0000-4000-8000-000000000002","occurredAt":"1969-12-31T23:59:58.500Z","schemaVersion":1,"source":"feed","type":"poi.viewed"}"#,
        #"{"data":{"deviceId":"d","dwellSeconds":3e-05,"id":"00000000-0000-4000-8000-000000000003","occurredAt":"2023-11-14T22:13:20.000Z","poiId":"00000000-0000-4000-8000-0000000000AC","type":"poi.left"},"id":"00000000-0000-4000-8000-000000000003","occurredAt":"2023-11-14T22:13:20.000Z","schemaVersion":1,"source":"feed","type":"poi.left"}"#,
        #"{"data":{"deviceId":"d","durationSeconds":604800.0,"id":"00000000-0000-4000-8000-000000000004","occurredAt":"9999-12-31T23:59:59.999Z","tourId":"00000000-0000-4000-8000-0000000000AD","type":"tour.completed"},"id":"00000000-0000-4000-8000-000000000004","occurredAt":"9999-12-31T23:59:59.999Z","schemaVersion":1,"source":"feed","type":"tour.completed"}"#,
        #"{"data":{"deviceId":"d","dwellSeconds":86399.25,"id":"00000000-0000-4000-8000-000000000005","occurredAt":"2025-01-01T00:00:00.500Z","tourId":"00000000-0000-4000-8000-0000000000AE","type":"tour.started"},"id":"00000000-0000-4000-8000-000000000005","occurredAt":"2025-01-01T00:00:00.500Z","schemaVersion":1,"source":"feed","type":"tour.started"}"#,
        #"{"data":{"deviceId":"d","id":"00000000-0000-4000-8000-000000000006","occurredAt":"2025-01-01T00:00:00.000Z","poiId":"00000000-0000-4000-8000-0000000000B0","tourId":"00000000-0000-4000-8000-0000000000AF","type":"poi.arrived"},"id":"00000000-0000-4000-8000-000000000006","occurredAt":"2025-01-01T00:00:00.000Z","schemaVersion":1,"source":"feed","type":"poi.arrived"}"#,
    ]

    /// `events` as `Envelope(...).encoded()` (JSONEncoder) writes them, source "replay": whole numbers without ".0".
    public static let jsonEncoder: [String] = [
        #"{"data":{"deviceId":"device \"7\" \\ / é😀","durationSeconds":12.5,"id":"0B5F3C2E-6D1A-4F7E-9C3B-2A1D5E8F7A90","mediaType":"audio","occurredAt":"2025-05-01T14:30:00.123Z","poiId":"0B5F3C2E-6D1A-4F7E-9C3B-2A1D5E8F7A92","tourId":"0B5F3C2E-6D1A-4F7E-9C3B-2A1D5E8F7A91","touristId":"t1","type":"media.played","url":"https://example.edu/a.mp3?x=1&y=<2>"},"id":"0B5F3C2E-6D1A-4F7E-9C3B-2A1D5E8F7A90","occurredAt":"2025-05-01T14:30:00.123Z","schemaVersion":1,"source":"replay","type":"media.played"}"#,
        #"{"data":{"appVersion":"2.0.1","deviceId":"d\n\t\r\u0001\u001f\#u{7F}","id":"00000000-0000-4000-8000-000000000001","model":"iPhone15,2","occurredAt":"1970-01-01T00:00:00.000Z","osVersion":"17.4","platform":"ios","touristId":"tourist-9","type":"device.registered"},"id":"00000000-0000-4000-8000-000000000001","occurredAt":"1970-01-01T00:00:00.000Z","schemaVersion":1,"source":"replay","type":"device.registered"}"#,
        #"{"data":{"deviceId":"d","id":"00000000-0000-4000-8000-000000000002","occurredAt":"1969-12-31T23:59:58.500Z","poiId":"00000000-0000-4000-8000-0000000000AB","type":"poi.viewed","via":"nearby"},"id":"00000000-0000-4000-8000-000000000002","occurredAt":"1969-12-31T23:59:58.500Z","schemaVersion":1,"source":"replay","type":"poi.viewed"}"#,
        #"{"data":{"deviceId":"d","dwellSeconds":3e-05,"id":"00000000-0000-4000-8000-000000000003","occurredAt":"2023-11-14T22:13:20.000Z","poiId":"00000000-0000-4000-8000-0000000000AC","type":"poi.left"},"id":"00000000-0000-4000-8000-000000000003","occurredAt":"2023-11-14T22:13:20.000Z","schemaVersion":1,"source":"replay","type":"poi.left"}"#,
        #"{"data":{"deviceId":"d","durationSeconds":604800,"id":"00000000-0000-4000-8000-000000000004","occurredAt":"9999-12-31T23:59:59.999Z","tourId":"00000000-0000-4000-8000-0000000000AD","type":"tour.completed"},"id":"00000000-0000-4000-8000-000000000004","occurredAt":"9999-12-31T23:59:59.999Z","schemaVersion":1,"source":"replay","type":"tour.completed"}"#,
        #"{"data":{"deviceId":"d","dwellSeconds":86399.25,"id":"00000000-0000-4000-8000-000000000005","occurredAt":"2025-01-01T00:00:00.500Z","tourId":"00000000-0000-4000-8000-0000000000AE","type":"tour.started"},"id":"00000000-0000-4000-8000-000000000005","occurredAt":"2025-01-01T00:00:00.500Z","schemaVersion":1,"source":"replay","type":"tour.started"}"#,
        #"{"data":{"deviceId":"d","id":"00000000-0000-4000-8000-000000000006","occurredAt":"2025-01-01T00:00:00.000Z","poiId":"00000000-0000-4000-8000-0000000000B0","tourId":"00000000-0000-4000-8000-0000000000AF","type":"poi.arrived"},"id":"00000000-0000-4000-8000-000000000006","occurredAt":"2025-01-01T00:00:00.000Z","schemaVersion":1,"source":"replay","type":"poi.arrived"}"#,
    ]
}
