import Foundation
import Glibc
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Shared
import Synchronization
import Testing
import TestSupport
@testable import Feed

/// `POST /v1/events` against the real broker.
@Suite("Tracking events over HTTP", .serialized, .stopsIfHung)
struct EventHTTPTests {
    static func event(type: String = "poi.viewed", deviceId: String, occurredAt: Date = Date(), extra: String = "") -> String {
        let poi = DemoContent.poiId(1011).uuidString
        return """
            {"id": "\(UUID().uuidString)", "type": "\(type)", "deviceId": "\(deviceId)", "occurredAt": "\(RFC3339.format(occurredAt))",
             "poiId": "\(poi)", "via": "map"\(extra)}
            """
    }

    static func post(_ client: any TestClientProtocol, _ body: String, contentType: String = "application/json") async throws -> TestResponse {
        try await client.execute(uri: "/v1/events", method: .post, headers: [.contentType: contentType], body: ByteBuffer(string: body))
    }

    /// Reads `count` messages from `tracking.events`.
    static func trackingMessages(_ kafka: KafkaConfiguration, count: Int) async throws -> [KafkaMessage] {
        let consumer = try await KafkaConsumer.open(configuration: kafka, subscription: .allPartitions(topics: [kafka.topic(Topic.trackingEvents)], from: .beginning),
                                                    logger: TestServices.logger)
        var messages: [KafkaMessage] = []
        let deadline = ContinuousClock.now + .seconds(20)
        while messages.count < count, ContinuousClock.now < deadline {
            messages += try await consumer.poll(maxMessages: count, timeout: .milliseconds(500))
        }
        await consumer.close()
        return messages
    }

    @Test("events naming a tour, POI or record the catalog does not have are rejected one by one; one client address brings at most its cap of new device ids an hour (issue 43)",
          arguments: [false, true])
    func unknownContentAndNewDevices(live: Bool) async throws {
        try await FeedHTTPTests.withFeed(testing: live ? .live : .router, configure: { $0.newDevicesPerHourPerClient = 3 }) { _, client in
            let tour = ", \"tourId\": \"\(DemoContent.tourId)\""
            let body = """
                {"events": [\(Self.event(deviceId: "known-1", extra: tour)),
                            \(Self.event(type: "tour.started", deviceId: "known-1", extra: ", \"tourId\": \"\(UUID())\"")),
                            {"id": "\(UUID())", "type": "poi.arrived", "deviceId": "known-1", "occurredAt": "\(RFC3339.format(Date()))", "poiId": "\(UUID())"},
                            {"id": "\(UUID())", "type": "page.viewed", "deviceId": "known-1", "occurredAt": "\(RFC3339.format(Date()))", "pageId": "\(UUID())"},
                            {"id": "\(UUID())", "type": "person.viewed", "deviceId": "known-1", "occurredAt": "\(RFC3339.format(Date()))", "personId": "\(UUID())"},
                            {"id": "\(UUID())", "type": "event.viewed", "deviceId": "known-1", "occurredAt": "\(RFC3339.format(Date()))", "eventId": "\(UUID())"}]}
                """
            let outcome = try FeedHTTPTests.json(try await Self.post(client, body))
            #expect(outcome["accepted"] as? Int == 1)
            #expect((outcome["rejected"] as? [[String: Any]])?.compactMap { $0["reason"] as? String } == [
                "tourId names no tour of this site", "poiId names no place of this site", "pageId names no page of this site",
                "personId names no person of this site", "eventId names no calendar event of this site",
            ])

            // known-1 was the first device of this address; two more fit, the fourth and fifth do not, known ones still do.
            let devices = (2...5).map { "known-\($0)" } + ["known-1", "known-2"]
            let many = "{\"events\": [" + devices.map { Self.event(deviceId: $0) }.joined(separator: ",") + "]}"
            let capped = try FeedHTTPTests.json(try await Self.post(client, many))
            #expect(capped["accepted"] as? Int == 4)
            let refused = try #require(capped["rejected"] as? [[String: Any]])
            #expect(refused.compactMap { $0["index"] as? Int } == [2, 3])
            #expect(refused.allSatisfy { $0["reason"] as? String == "this client address brought more than 3 device ids this hour" })
        }
    }

    /// Live (a real socket), batches are answered by `PipelineResponder` ahead of the router; through the
    /// router otherwise. Both must answer the same.
    @Test("good events are produced keyed by deviceId before the 202; bad ones are rejected one by one with their reason",
          arguments: [false, true])
    func acceptedAndRejected(live: Bool) async throws {
        let kafka = TestServices.kafka()
        try await FeedHTTPTests.withFeed(eventsPerMinute: 20, kafka: kafka, testing: live ? .live : .router) { _, client in
            let old = Date().addingTimeInterval(-40 * 86_400)
            let body = """
                {"events": [\(Self.event(deviceId: "phone-1")), \(Self.event(deviceId: "phone-1", occurredAt: old)),
                            {"id": "\(UUID())", "type": "tour.started", "deviceId": "phone-2", "occurredAt": "\(RFC3339.format(Date()))"},
                            "not an event", \(Self.event(type: "tour.started", deviceId: "phone-2", extra: ", \"tourId\": \"\(DemoContent.tourId)\""))]}
                """
            let response = try await Self.post(client, body)
            #expect(response.status == .accepted)
            let outcome = try FeedHTTPTests.json(response)
            #expect(outcome["accepted"] as? Int == 2)
            let rejected = try #require(outcome["rejected"] as? [[String: Any]])
            #expect(rejected.compactMap { $0["index"] as? Int } == [1, 2, 3])
            #expect(rejected.compactMap { $0["reason"] as? String } == [
                "occurredAt is more than 30 days old", "missing field tourId for tour.started", "an event must be a JSON object",
            ])

            // The broker already has them: keyed by deviceId, in the suite's envelope.
            let messages = try await Self.trackingMessages(kafka, count: 2)
            #expect(messages.count == 2)
            let decoded = try messages.map { try EnvelopeDecoder.decode(TrackingEvent.self, from: $0.value) }
            #expect(Set(messages.compactMap(\.keyString)) == ["phone-1", "phone-2"])
            for (message, envelope) in zip(messages, decoded) {
                #expect(message.keyString == envelope.data.deviceId)
                #expect(envelope.id == envelope.data.id)
            }
            #expect(Set(decoded.map(\.data.type)) == [.poiViewed, .tourStarted])

            // An empty batch is fine; a bad body is a 400, a wrong content type 415, too many events 400, too many bytes 413.
            #expect(try await Self.post(client, #"{"events": []}"#).status == .accepted)
            for bad in ["{", "[]", #"{"events": 5}"#, #"{"other": []}"#, "", "null"] {
                try FeedHTTPTests.expectProblem(try await Self.post(client, bad), .badRequest)
            }
            try FeedHTTPTests.expectProblem(try await Self.post(client, #"{"events": []}"#, contentType: "text/plain"), .unsupportedMediaType)
            let tooMany = "{\"events\": [" + Array(repeating: "{}", count: 501).joined(separator: ",") + "]}"
            try FeedHTTPTests.expectProblem(try await Self.post(client, tooMany), .badRequest)
            let huge = "{\"events\": [\"" + String(repeating: "x", count: 1 << 20) + "\"]}"
            try FeedHTTPTests.expectProblem(try await Self.post(client, huge), .contentTooLarge)

            // phone-3 may send 20 per minute: 15 pass, 10 more are refused whole with Retry-After.
            let fifteen = "{\"events\": [" + (0..<15).map { _ in Self.event(deviceId: "phone-3") }.joined(separator: ",") + "]}"
            #expect(try FeedHTTPTests.json(try await Self.post(client, fifteen))["accepted"] as? Int == 15)
            let ten = "{\"events\": [" + (0..<10).map { _ in Self.event(deviceId: "phone-3") }.joined(separator: ",") + "]}"
            let limited = try await Self.post(client, ten)
            try FeedHTTPTests.expectProblem(limited, .tooManyRequests)
            #expect(Int(limited.headers[.retryAfter] ?? "") ?? 0 >= 1)
            // Another device is not affected.
            #expect(try await Self.post(client, "{\"events\": [\(Self.event(deviceId: "phone-4"))]}").status == .accepted)

            let metrics = FeedHTTPTests.text(try await client.execute(uri: "/metrics", method: .get))
            #expect(metrics.contains("itour_feed_events_accepted_total"))
            #expect(metrics.contains("itour_feed_events_rejected_total"))
            #expect(metrics.contains("itour_feed_projection_entities"))
            #expect(metrics.contains("http_route=\"/v1/events\""))
        }
    }

    @Test("a gzip batch (an app's offline backlog) is read as the plain one; broken gzip is 400, another coding 415, one inflating past 1 MiB 413",
          arguments: [false, true])
    func gzipBatches(live: Bool) async throws {
        let kafka = TestServices.kafka()
        try await FeedHTTPTests.withFeed(kafka: kafka, testing: live ? .live : .router) { _, client in
            func post(_ bytes: [UInt8], encoding: String) async throws -> TestResponse {
                try await client.execute(uri: "/v1/events", method: .post, headers: [.contentType: "application/json", .contentEncoding: encoding],
                                         body: ByteBuffer(bytes: bytes))
            }
            let plain = "{\"events\": [" + (0..<30).map { _ in Self.event(deviceId: "backlog-phone") }.joined(separator: ",") + ", 7]}"
            let compressed = try #require(GzipCompressor().compress(Array(plain.utf8)))
            #expect(compressed.count < plain.utf8.count)
            let response = try await post(compressed, encoding: "gzip")
            #expect(response.status == .accepted)
            let outcome = try FeedHTTPTests.json(response)
            #expect(outcome["accepted"] as? Int == 30)
            #expect((outcome["rejected"] as? [[String: Any]])?.compactMap { $0["index"] as? Int } == [30])
            #expect(try await Self.trackingMessages(kafka, count: 30).count == 30, "on the broker before the 202, as a plain batch's")
            // Two members one after another (RFC 1952) read as one body; x-gzip and identity as their names say.
            let half = plain.utf8.count / 2
            let members = try #require(GzipCompressor().compress(Array(plain.utf8.prefix(half))))
                + (try #require(GzipCompressor().compress(Array(plain.utf8.dropFirst(half)))))
            #expect(try await post(members, encoding: "x-gzip").status == .accepted)
            #expect(try await post(Array(#"{"events": []}"#.utf8), encoding: "identity").status == .accepted)

            try FeedHTTPTests.expectProblem(try await post(Array(plain.utf8), encoding: "gzip"), .badRequest)
            try FeedHTTPTests.expectProblem(try await post(Array(compressed.dropLast(12)), encoding: "gzip"), .badRequest)
            try FeedHTTPTests.expectProblem(try await post(compressed, encoding: "br"), .unsupportedMediaType)
            // 2 MiB of spaces inside a batch compress to about 2 KiB: refused once reading passes 1 MiB.
            let bomb = try #require(GzipCompressor().compress(Array(("{\"events\": [" + String(repeating: " ", count: 2 << 20) + "]}").utf8)))
            #expect(bomb.count < 16 * 1024)
            try FeedHTTPTests.expectProblem(try await post(bomb, encoding: "gzip"), .contentTooLarge)
        }
    }

    /// HTTP/1.1 pipelining on one connection: a batch waiting for the broker holds back the requests
    /// behind it, so the answers come in the order of the requests, whoever answers each.
    @Test("pipelined requests behind a batch are answered in order")
    func pipelinedInOrder() async throws {
        let kafka = TestServices.kafka()
        try await FeedHTTPTests.withFeed(kafka: kafka, testing: .live) { _, client in
            let port = try #require(client.port)
            func post(_ body: String, chunked: Bool = false) -> String {
                if chunked {
                    let hex = String(body.utf8.count, radix: 16)
                    return "POST /v1/events HTTP/1.1\r\nHost: feed\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n\(hex)\r\n\(body)\r\n0\r\n\r\n"
                }
                return "POST /v1/events HTTP/1.1\r\nHost: feed\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
            }
            let one = "{\"events\": [\(Self.event(deviceId: "pipe-1"))]}"
            let two = "{\"events\": [\(Self.event(deviceId: "pipe-2")), \(Self.event(deviceId: "pipe-2"))]}"
            let requests = post(one) + "GET /v1/tours HTTP/1.1\r\nHost: feed\r\n\r\n" + post("{") + post(two, chunked: true)
                + "GET /health HTTP/1.1\r\nHost: feed\r\nConnection: close\r\n\r\n"
            let answer = try await RawHTTP.exchange(port: port, send: requests)
            // Each answer starts with its status line (right after the previous body, which has no line end).
            let statuses = answer.components(separatedBy: "HTTP/1.1 ").dropFirst().map { String($0.prefix(3)) }
            #expect(statuses == ["202", "200", "400", "202", "200"], "\(answer.prefix(2_000))")
            let accepted = answer.components(separatedBy: "{\"accepted\":").dropFirst().map { $0.prefix(1) }
            #expect(accepted == ["1", "2"])
            #expect(try await Self.trackingMessages(kafka, count: 3).count == 3)
        }
    }

    @Test("503 with Retry-After, and nothing reported accepted, while the broker does not answer", arguments: [false, true])
    func brokerUnavailable(live: Bool) async throws {
        let broker = try await PrivateBroker.start()
        defer { broker.stop() }
        var kafka = TestServices.kafka(deliveryTimeoutMilliseconds: 3_000)
        kafka.brokers = broker.address
        try await FeedHTTPTests.withFeed(kafka: kafka, testing: live ? .live : .router) { _, client in
            #expect(try await Self.post(client, "{\"events\": [\(Self.event(deviceId: "phone-1"))]}").status == .accepted)
            broker.pause()
            defer { broker.resume() }
            let started = ContinuousClock.now
            let response = try await Self.post(client, "{\"events\": [\(Self.event(deviceId: "phone-1"))]}")
            try FeedHTTPTests.expectProblem(response, .serviceUnavailable)
            #expect(response.headers[.retryAfter] == String(EventIngest.brokerRetryAfterSeconds))
            #expect(ContinuousClock.now - started < .seconds(15))
        }
    }
}

extension EventHTTPTests {
    /// Device ids are the phone's to choose: the address the batches come from is held to its own allowance,
    /// in the pipeline (live) and in the route (router) alike.
    @Test("a client address over its allowance gets 429 with Retry-After, whatever device ids its batches carry", arguments: [false, true])
    func clientAddressLimit(live: Bool) async throws {
        try await FeedHTTPTests.withFeed(eventsPerMinute: 0, eventsPerMinutePerClient: 10, testing: live ? .live : .router) { _, client in
            func batch(_ count: Int) -> String {
                "{\"events\": [" + (0..<count).map { _ in Self.event(deviceId: "fresh-\(UUID())") }.joined(separator: ",") + "]}"
            }
            #expect(try FeedHTTPTests.json(try await Self.post(client, batch(6)))["accepted"] as? Int == 6)
            let limited = try await Self.post(client, batch(6))
            try FeedHTTPTests.expectProblem(limited, .tooManyRequests)
            #expect(Int(limited.headers[.retryAfter] ?? "") ?? 0 >= 1)
            #expect(FeedHTTPTests.text(limited).contains("client address"))
            // Refused whole: what is left of the allowance still takes a batch that fits.
            #expect(try await Self.post(client, batch(3)).status == .accepted)
            // Junk costs the allowance too (each element, each batch at least one).
            try FeedHTTPTests.expectProblem(try await Self.post(client, "{\"events\": [1, 2]}"), .tooManyRequests)
        }
    }

    /// The 500-event cap is checked while reading: a body of more elements is refused without reading past
    /// the 501st, so what follows it (here: not JSON at all) cannot make it a parse error.
    @Test("more than 500 elements is the cap's 400, whatever follows the 501st", arguments: [false, true])
    func capBeforeContent(live: Bool) async throws {
        try await FeedHTTPTests.withFeed(testing: live ? .live : .router) { _, client in
            let junk = Array(repeating: "1", count: 501).joined(separator: ",")
            for body in ["{\"events\": [\(junk)]}", "{\"events\": [\(junk), {\"id\": ]]]}", "{\"events\": [\(junk),\(junk), x"] {
                let response = try await Self.post(client, body)
                try FeedHTTPTests.expectProblem(response, .badRequest)
                let detail = try FeedHTTPTests.json(response)["detail"] as? String ?? ""
                #expect(detail.contains("at most \(EventBatch.maxEvents) events"), "\(detail)")
            }
        }
    }

    /// On graceful shutdown Hummingbird closes connections it thinks idle, which includes one whose batch
    /// `PipelineResponder` holds while the broker has not acknowledged it: the close must wait for the answer.
    @Test("a batch waiting for the broker when the feed shuts down still gets its 202 before the connection closes")
    func answeredThroughGracefulShutdown() async throws {
        let broker = try await PrivateBroker.start()
        defer { broker.stop() }
        var kafka = TestServices.kafka(deliveryTimeoutMilliseconds: 20_000)
        kafka.brokers = broker.address
        let body = "{\"events\": [\(Self.event(deviceId: "shutdown-1"))]}"
        let request = "POST /v1/events HTTP/1.1\r\nHost: feed\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
        let pending = Mutex<Task<String, any Error>?>(nil)
        try await FeedHTTPTests.withFeed(kafka: kafka, testing: .live) { _, client in
            // The producer is connected and working before the broker stops answering.
            #expect(try await Self.post(client, "{\"events\": [\(Self.event(deviceId: "shutdown-0"))]}").status == .accepted)
            let port = try #require(client.port)
            broker.pause()
            let exchange = Task.detached { try await RawHTTP.exchange(port: port, send: request) }
            pending.withLock { $0 = exchange }
            // Let the batch reach the producer, then return: that starts the feed's graceful shutdown. The broker
            // answers again a second into it.
            try await Task.sleep(for: .milliseconds(500))
            Task.detached {
                try await Task.sleep(for: .seconds(1))
                broker.resume()
            }
        }
        broker.resume()
        let answer = try await #require(pending.withLock { $0 }).value
        #expect(answer.hasPrefix("HTTP/1.1 202"), "\(answer.prefix(400))")
        #expect(answer.contains("{\"accepted\":1"), "\(answer.prefix(400))")
    }
}

/// One TCP connection to 127.0.0.1:`port`: sends `text` at once, reads until the server closes.
enum RawHTTP {
    /// Sends `text` on a new connection and returns all the server sends until it closes (or `timeoutSeconds`).
    static func exchange(port: Int, send text: String, timeoutSeconds: Int = 20) async throws -> String {
        let connection = try RawSocket(port: port)
        try connection.sendAll(Array(text.utf8))
        return try await connection.readUntilClosed(timeout: .seconds(timeoutSeconds))
    }
}
