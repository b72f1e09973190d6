import Foundation
import Glibc
import HTTPTypes
import HummingbirdTesting
import Shared
import Testing
import TestSupport
@testable import Feed

/// `FeedAPI.routes` is the feed's one route table: the OpenAPI document, the router and the pipeline must
/// all follow it.
@Suite("The feed's route table", .serialized, .stopsIfHung)
struct RouteTableTests {
    @Test("the OpenAPI document has exactly the table's paths and methods, each with its operation")
    func openAPIFollowsTheTable() throws {
        let document = try #require(try JSONSerialization.jsonObject(with: Data(OpenAPIDocument.json.utf8)) as? [String: Any])
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        var documented = Set<String>()
        for (path, operations) in paths {
            for method in operations.keys { documented.insert("\(method.uppercased()) \(path)") }
        }
        #expect(documented == Set(FeedAPI.routes.map { "\($0.method.rawValue) \($0.path)" }))
        #expect(documented.count == FeedAPI.routes.count, "a route declared twice")
        var operationIds = Set<String>()
        for route in FeedAPI.routes {
            let operation = try #require(try JSONSerialization.jsonObject(with: Data(route.operation.utf8)) as? [String: Any], "\(route.path)")
            let documentedOperation = try #require(paths[route.path]?[route.method.rawValue.lowercased()] as? [String: Any])
            #expect(NSDictionary(dictionary: operation).isEqual(to: documentedOperation), "\(route.path)")
            let id = try #require(operation["operationId"] as? String)
            #expect(operationIds.insert(id).inserted, "operationId \(id) twice")
            #expect(operation["responses"] is [String: Any], "\(route.path)")
            // A path parameter is declared in the operation.
            if route.path.contains("{") {
                #expect(route.operation.contains("\"in\": \"path\"") || route.operation.contains("#/components/parameters/"), "\(route.path)")
            }
        }
        // Every $ref points at a component the document has.
        let components = try #require(document["components"] as? [String: [String: Any]])
        for reference in OpenAPIDocument.json.components(separatedBy: "\"$ref\": \"#/components/").dropFirst() {
            let parts = reference.prefix { $0 != "\"" }.split(separator: "/")
            #expect(parts.count == 2 && components[String(parts[0])]?[String(parts[1])] != nil, "\(reference.prefix(40))")
        }
    }

    @Test("path templates match a parameter of one segment, without %, and only the whole path")
    func pathTemplates() {
        func match(_ template: String, _ path: String) -> String? {
            var path = path
            return path.withUTF8 { bytes in
                PathTemplate(template).match(bytes).map { String(decoding: UnsafeBufferPointer(rebasing: bytes[$0]), as: UTF8.self) }
            }
        }
        #expect(match("/v1/tours", "/v1/tours") == "")
        #expect(match("/v1/tours", "/v1/tours/x") == nil)
        #expect(match("/v1/tours", "/v1/tour") == nil)
        #expect(match("/v1/tours/{id}", "/v1/tours/abc") == "abc")
        #expect(match("/v1/tours/{id}", "/v1/tours/") == nil)
        #expect(match("/v1/tours/{id}", "/v1/tours/a/b") == nil)
        #expect(match("/v1/pois/{id}/page", "/v1/pois/abc/page") == "abc")
        #expect(match("/v1/pois/{id}/page", "/v1/pois/abc") == nil)
        #expect(match("/v1/legacy/tours/{id}/pois.xml", "/v1/legacy/tours/1%31/pois.xml") == nil)
        #expect(match("/v1/legacy/tours/{id}/pois.xml", "/v1/legacy/tours/11/pois.xml") == "11")
    }

    /// A path of each route, with the demo content's ids; a route added to the table needs one here.
    static func samplePath(_ route: FeedRoute) -> String {
        switch route.path {
        case "/v1/tours/{id}": "/v1/tours/\(DemoContent.tourId)"
        case "/v1/pois/{id}": "/v1/pois/\(DemoContent.poiId(1011))"
        case "/v1/pois/{id}/page": "/v1/pois/\(DemoContent.poiId(1011))/page"
        case "/v1/pois/{id}/qr.svg": "/v1/pois/\(DemoContent.poiId(1011))/qr.svg"
        case "/v1/tours/{id}/qr.svg": "/v1/tours/\(DemoContent.tourId)/qr.svg"
        case "/v1/tours/{id}/bundle": "/v1/tours/\(DemoContent.tourId)/bundle"
        case "/v1/legacy/tours/{id}/pois.xml": "/v1/legacy/tours/11/pois.xml"
        case "/v1/pois": "/v1/pois?near=34.2261,-77.8767"
        case "/v1/search": "/v1/search?q=hall"
        // No entry in the stand-in's content: an id that is not one is answered (400) rather than missed.
        case "/v1/calendar/{id}": "/v1/calendar/not-an-id"
        case "/v1/people/{id}": "/v1/people/not-an-id"
        case "/v1/featured/{id}": "/v1/featured/not-an-id"
        case "/v1/pages/{slug}": "/v1/pages/Not_A_Slug"
        case "/v1/pages/{slug}/page": "/v1/pages/Not_A_Slug/page"
        case "/v1/media/{sha256}": "/v1/media/not-a-hash"
        default: route.path
        }
    }

    /// One HTTP/1.1 answer read off a raw socket: its status line, its headers (lower-cased names) and body.
    struct RawResponse: Equatable {
        var status: String
        var headers: [String: String]
        var body: [UInt8]
    }

    /// Reads answers off `bytes`, each delimited by its Content-Length.
    static func parse(_ bytes: [UInt8]) -> [RawResponse] {
        var responses: [RawResponse] = [], at = 0
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        while bytes.count - at >= 4 {
            guard let end = (at...(bytes.count - 4)).first(where: { Array(bytes[$0..<($0 + 4)]) == separator }) else { break }
            let lines = String(decoding: bytes[at..<end], as: UTF8.self).components(separatedBy: "\r\n")
            var headers: [String: String] = [:]
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            let length = Int(headers["content-length"] ?? "0") ?? 0
            let bodyStart = end + 4
            responses.append(RawResponse(status: lines[0], headers: headers, body: Array(bytes[bodyStart..<min(bytes.count, bodyStart + length)])))
            at = bodyStart + length
        }
        return responses
    }

    /// Sends `request` twice on one connection, the second time with `Connection: close`, which the pipeline
    /// leaves to the router: the first answer is the pipeline's, the second the router's.
    static func bothWays(port: Int, _ request: String, body: String = "") async throws -> (pipeline: RawResponse, router: RawResponse) {
        let socket = try RawSocket(port: port)
        let length = body.isEmpty ? "" : "Content-Length: \(body.utf8.count)\r\n"
        try socket.sendAll(Array("\(request)\(length)\r\n\(body)".utf8))
        try socket.sendAll(Array("\(request)\(length)Connection: close\r\n\r\n\(body)".utf8))
        let received = try await socket.receiveUntilClosed(timeout: .seconds(20))
        let responses = parse(received)
        guard responses.count == 2 else {
            Issue.record("\(responses.count) answers to two requests: \(String(decoding: received.prefix(600), as: UTF8.self))")
            throw POSIXError(.EPROTO)
        }
        return (responses[0], responses[1])
    }

    /// What differs by design between two answers to the same request: its id, the time, and the close.
    static func comparable(_ response: RawResponse) -> RawResponse {
        var response = response
        for name in ["x-request-id", "date", "connection"] { response.headers[name] = nil }
        return response
    }

    @Test("every route the pipeline answers is answered the same by the router: status, headers and body")
    func pipelineAndRouterAgree() async throws {
        try await FeedHTTPTests.withFeed(testing: .live) { _, client in
            let port = try #require(client.port)
            let storedBefore = Self.storedAnswers(try await client.execute(uri: "/metrics", method: .get))
            var answeredInPipeline = 0
            for route in FeedAPI.routes {
                let path = Self.samplePath(route)
                switch route.handler {
                case .stored:
                    let plain = try await Self.bothWays(port: port, "GET \(path) HTTP/1.1\r\nHost: feed\r\n")
                    #expect(plain.pipeline.status == "HTTP/1.1 200 OK", "\(path)")
                    let etag = try #require(plain.pipeline.headers["etag"], "\(path)")
                    let zipped = try await Self.bothWays(port: port, "GET \(path) HTTP/1.1\r\nHost: feed\r\nAccept-Encoding: gzip\r\n")
                    let notModified = try await Self.bothWays(port: port, "GET \(path) HTTP/1.1\r\nHost: feed\r\nIf-None-Match: \(etag)\r\n")
                    #expect(notModified.pipeline.status == "HTTP/1.1 304 Not Modified", "\(path)")
                    let echoed = try await Self.bothWays(port: port, "GET \(path)/ HTTP/1.1\r\nHost: feed\r\nX-Request-Id: same-id-1\r\n")
                    #expect(echoed.pipeline.headers["x-request-id"] == "same-id-1")
                    #expect(echoed.router.headers["x-request-id"] == "same-id-1")
                    for answers in [plain, zipped, notModified, echoed] {
                        #expect(Self.comparable(answers.pipeline) == Self.comparable(answers.router), "\(path)")
                        #expect(answers.pipeline.headers["date"] != nil && answers.pipeline.headers["x-request-id"] != nil)
                    }
                    answeredInPipeline += 4
                case .events:
                    let batch = #"{"events": [\#(EventHTTPTests.event(deviceId: "route-table")), 1]}"#
                    let posted = try await Self.bothWays(port: port, "POST \(path) HTTP/1.1\r\nHost: feed\r\nContent-Type: application/json\r\n", body: batch)
                    #expect(posted.pipeline.status == "HTTP/1.1 202 Accepted")
                    #expect(Self.comparable(posted.pipeline) == Self.comparable(posted.router))
                    let wrongType = try await Self.bothWays(port: port, "POST \(path) HTTP/1.1\r\nHost: feed\r\nContent-Type: text/plain\r\n", body: batch)
                    #expect(wrongType.pipeline.status == "HTTP/1.1 415 Unsupported Media Type")
                    #expect(Self.comparable(wrongType.pipeline) == Self.comparable(wrongType.router))
                case .computed, .operational, .media, .bundle:
                    // The router answers these alone: answered at all (not 404 or 405) through the table's path.
                    let response = try await client.execute(uri: path, method: route.method)
                    #expect(response.status != .notFound && response.status != .methodNotAllowed, "\(path)")
                }
            }
            // A miss goes to the router either way, and answers its problem.
            let miss = try await Self.bothWays(port: port, "GET /v1/tours/\(UUID()) HTTP/1.1\r\nHost: feed\r\n")
            #expect(miss.pipeline.status == "HTTP/1.1 404 Not Found")
            #expect(Self.comparable(miss.pipeline) == Self.comparable(miss.router))
            // The first of each pair came from the pipeline's stored responses (at least: the counter is the
            // process's, and other suites' feeds may run meanwhile).
            let storedAfter = Self.storedAnswers(try await client.execute(uri: "/metrics", method: .get))
            #expect(storedAfter - storedBefore >= answeredInPipeline)
        }
    }

    static func storedAnswers(_ metrics: TestResponse) -> Int {
        FeedHTTPTests.text(metrics).split(separator: "\n").first { $0.hasPrefix("itour_feed_stored_responses_total ") }
            .flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
    }
}
