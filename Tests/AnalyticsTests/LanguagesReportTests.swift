import Foundation
import HummingbirdTesting
import Shared
import Testing
import TestSupport
@testable import Analytics

/// "Languages" (DESIGN.md, issue 45): tour starts and POI views by the app's language, through the real broker,
/// Postgres and service.
@Suite("Languages report", .serialized, .stopsIfHung)
struct LanguagesReportTests {
    @Test("tour starts and POI views per language equal the events sent: es and ES one language, none as unknown, site-wide, each event once")
    func byLanguage() async throws {
        let harness = try await AnalyticsHarness.make()
        let tour = UUID(), poi = UUID(), today = Date(), longAgo = Date().addingTimeInterval(-20 * 86_400)
        var events: [TrackingEvent] = []
        func send(_ type: TrackingEvent.Kind, _ language: String?, times: Int, at: Date = today, tourId: UUID? = nil) {
            for index in 0..<times {
                let ofTour = type == .tourStarted || type == .tourCompleted
                events.append(TrackingEvent(type: type, deviceId: "device-\(index % 3)", occurredAt: at.addingTimeInterval(-Double(events.count)),
                                            tourId: ofTour ? tour : tourId, poiId: ofTour ? nil : poi, via: type == .poiViewed ? .map : nil,
                                            language: language))
            }
        }
        send(.tourStarted, "es", times: 2)
        send(.tourStarted, "ES", times: 1)
        send(.tourStarted, nil, times: 2)
        send(.tourStarted, "pt-br", times: 1)
        send(.poiViewed, "es", times: 3)
        send(.poiViewed, "eS", times: 1, tourId: tour)   // a view during a tour counts too: the report is site-wide
        send(.poiViewed, nil, times: 4)
        send(.poiViewed, "pt-BR", times: 5)
        send(.poiViewed, "zh-hant", times: 1)
        send(.poiViewed, "fr", times: 6, at: longAgo)   // before the range
        send(.poiArrived, "fr", times: 2)                // neither a start nor a view
        send(.tourCompleted, "fr", times: 1)
        events[events.count - 1].durationSeconds = 60
        let delivered = events + events.prefix(5), total = events.count
        // A malformed tag written to the topic by other means is set aside, not counted under any language.
        let malformed = TrackingEvent(type: .poiViewed, deviceId: "device-0", occurredAt: today, poiId: poi, via: .map, language: "es_MX")
        try await harness.app().test(.router) { client in
            try await harness.produceRaw([String(decoding: TrackingCodec.writeMessage(malformed), as: UTF8.self)], key: "device-0")
            try await harness.produce(delivered)
            try await harness.waitUntilCounted(total)
            let range = ReportQuery(from: Day(containing: today.addingTimeInterval(-86_400)), to: Day(containing: today))
            let expected = LanguageReport(languages: [
                LanguageRow(language: "es", tourStarts: 3, poiViews: 4),
                LanguageRow(language: "unknown", tourStarts: 2, poiViews: 4),
                LanguageRow(language: "pt-BR", tourStarts: 1, poiViews: 5),
                LanguageRow(language: "zh-Hant", tourStarts: 0, poiViews: 1),
            ])
            #expect(try await AnalyticsHarness.get(client, "languages", range, as: LanguageReport.self) == expected)
            // The tour filter is not looked at; the columns sum to the summary's figures.
            let filtered = ReportQuery(from: range.from, to: range.to, tourId: tour)
            #expect(try await AnalyticsHarness.get(client, "languages", filtered, as: LanguageReport.self) == expected)
            let summary = try await AnalyticsHarness.get(client, "summary", range, as: SummaryReport.self)
            #expect(summary.toursStarted == 6 && summary.poiViews == 14)
            let wide = ReportQuery(from: Day(containing: longAgo), to: Day(containing: today))
            #expect(try await AnalyticsHarness.get(client, "languages", wide, as: LanguageReport.self).languages.first { $0.language == "fr" }
                    == LanguageRow(language: "fr", tourStarts: 0, poiViews: 6))
            let csv = try await client.execute(uri: AnalyticsHarness.path("languages", range, extra: "&format=csv"), method: .get,
                                               headers: [.authorization: "Bearer \(AnalyticsHarness.token)"])
            #expect(csv.headers[.contentType] == "text/csv; charset=utf-8")
            #expect(String(buffer: csv.body) == "language,tourStarts,poiViews\r\n\"es\",3,4\r\n\"unknown\",2,4\r\n\"pt-BR\",1,5\r\n\"zh-Hant\",0,1\r\n")
            let empty = ReportQuery(from: Day(containing: longAgo).adding(days: -5), to: Day(containing: longAgo).adding(days: -1))
            #expect(try await AnalyticsHarness.get(client, "languages", empty, as: LanguageReport.self) == LanguageReport(languages: []))
            let unauthorized = try await client.execute(uri: AnalyticsHarness.path("languages", range), method: .get)
            #expect(unauthorized.status == .unauthorized)
        }
    }
}
