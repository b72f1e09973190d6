import Foundation
import HummingbirdTesting
import Shared
import Testing
import TestSupport
@testable import Analytics

/// "Most viewed" (DESIGN.md): event.viewed, page.viewed and person.viewed through the real broker, Postgres and service.
@Suite("Most viewed report", .serialized, .stopsIfHung)
struct ViewsReportTests {
    @Test("the most opened events, pages and people in the range, named as catalog names them, each event once however often delivered")
    func mostViewed() async throws {
        let harness = try await AnalyticsHarness.make()
        let openDay = UUID(), visit = UUID(), about = UUID(), dean = UUID()
        let today = Date(), yesterday = Date().addingTimeInterval(-86_400), longAgo = Date().addingTimeInterval(-20 * 86_400)
        var events: [TrackingEvent] = []
        func viewed(_ type: TrackingEvent.Kind, _ id: UUID, at: Date, times: Int) {
            for index in 0..<times {
                events.append(TrackingEvent(type: type, deviceId: "device-\(index % 3)", occurredAt: at.addingTimeInterval(-Double(index)),
                                            eventId: type == .eventViewed ? id : nil, pageId: type == .pageViewed ? id : nil,
                                            personId: type == .personViewed ? id : nil))
            }
        }
        viewed(.eventViewed, openDay, at: today, times: 3)
        viewed(.eventViewed, openDay, at: longAgo, times: 5)   // before the range
        viewed(.eventViewed, visit, at: yesterday, times: 4)
        viewed(.pageViewed, about, at: today, times: 2)
        viewed(.personViewed, dean, at: yesterday, times: 1)
        let delivered = events + events.prefix(4), total = events.count
        try await harness.withPostgres { client in
            try await AnalyticsMigrations.runner.run(on: client, logger: TestServices.logger)
            let store = PostgresIngestStore(client: client, schema: .live, logger: TestServices.logger)
            try await store.saveName(entityId: openDay, kind: "event", name: "Open Day", version: 1, stops: nil)
            try await store.saveName(entityId: visit, kind: "event", name: "Campus visit", version: 2, stops: nil)
        }
        try await harness.app().test(.router) { client in
            try await harness.produce(delivered)
            try await harness.waitUntilCounted(total)
            let range = ReportQuery(from: Day(containing: yesterday), to: Day(containing: today))
            let report = try await AnalyticsHarness.get(client, "views", range, as: ViewsReport.self)
            #expect(report.events == [ViewRow(id: visit, name: "Campus visit", views: 4), ViewRow(id: openDay, name: "Open Day", views: 3)])
            #expect(report.pages == [ViewRow(id: about, name: nil, views: 2)])
            #expect(report.people == [ViewRow(id: dean, name: nil, views: 1)])
            // Pages and people are named from their catalog events, as events are (sent again until the reader is positioned).
            let topic = harness.kafka.topic(Topic.catalogEvents)
            let page = PageEvent.changed(PageState(id: about, version: 1, status: .published, content: PageContent(slug: "about", title: "About us"),
                                                   updatedAt: today))
            let person = PersonEvent.changed(PersonState(id: dean, version: 1, status: .published, content: PersonContent(name: "Émile Durand"),
                                                         updatedAt: today))
            #expect(try await TestServices.eventually(timeout: .seconds(30), interval: .milliseconds(500)) {
                _ = try await harness.producer.send([
                    KafkaOutgoingMessage(topic: topic, key: about.uuidString, value: try Envelope(type: page.type, source: "catalog", data: page).encoded()),
                    KafkaOutgoingMessage(topic: topic, key: dean.uuidString, value: try Envelope(type: person.type, source: "catalog", data: person).encoded()),
                ])
                let named = try await AnalyticsHarness.get(client, "views", range, as: ViewsReport.self)
                return named.pages == [ViewRow(id: about, name: "About us", views: 2)] && named.people == [ViewRow(id: dean, name: "Émile Durand", views: 1)]
            })
            let wide = ReportQuery(from: Day(containing: longAgo), to: Day(containing: today))
            #expect(try await AnalyticsHarness.get(client, "views", wide, as: ViewsReport.self).events.first == ViewRow(id: openDay, name: "Open Day", views: 8))
            let csv = try await client.execute(uri: AnalyticsHarness.path("views", range, extra: "&format=csv"), method: .get,
                                               headers: [.authorization: "Bearer \(AnalyticsHarness.token)"])
            #expect(String(buffer: csv.body).contains("\"events\",\"\(visit.uuidString.lowercased())\",\"Campus visit\",4"))
        }
    }

    @Test("sources: POI views by where they were opened from (a QR code among them), site-wide, each event once however often delivered")
    func sources() async throws {
        let harness = try await AnalyticsHarness.make()
        let poi = UUID(), tour = UUID(), today = Date(), longAgo = Date().addingTimeInterval(-20 * 86_400)
        var events: [TrackingEvent] = []
        func viewed(_ via: TrackingEvent.Via, times: Int, at: Date = today, tourId: UUID? = nil) {
            for index in 0..<times {
                events.append(TrackingEvent(type: .poiViewed, deviceId: "device-\(index % 4)", occurredAt: at.addingTimeInterval(-Double(index)),
                                            tourId: tourId, poiId: poi, via: via))
            }
        }
        viewed(.qr, times: 5)
        viewed(.qr, times: 2, tourId: tour)
        viewed(.map, times: 3)
        viewed(.search, times: 9, at: longAgo)   // before the range
        events.append(TrackingEvent(type: .poiArrived, deviceId: "device-0", occurredAt: today, poiId: poi))  // not a view
        let delivered = events + events.prefix(3), total = events.count
        try await harness.app().test(.router) { client in
            try await harness.produce(delivered)
            try await harness.waitUntilCounted(total)
            let range = ReportQuery(from: Day(containing: today.addingTimeInterval(-86_400)), to: Day(containing: today))
            let report = try await AnalyticsHarness.get(client, "views", range, as: ViewsReport.self)
            #expect(report.sources == [SourceRow(via: "qr", views: 7), SourceRow(via: "map", views: 3)])
            let csv = try await client.execute(uri: AnalyticsHarness.path("views", range, extra: "&format=csv"), method: .get,
                                               headers: [.authorization: "Bearer \(AnalyticsHarness.token)"])
            #expect(String(buffer: csv.body).contains("\"sources\",\"\",\"qr\",7"))
        }
    }
}
