import Foundation
import Shared

/// The feed's benchmark steps (scripts/bench-feed.sh runs them with wrk, nginx and pgbench around them):
///
///     generate-city --pois N --tours T [--seed S] [--window W]   the synthetic city, through catalog commands
///     feed-queries --count N [--paths DIR]                       near and search: in-process (Server-Timing) and
///                                                                HTTP latency, one request at a time; DIR gets
///                                                                request lists for wrk (near.txt, search.txt)
///     feed-event-bodies --batches B --batch-size N --out FILE [--envelopes FILE]
///                                                                POST /v1/events bodies, one per line, and the same
///                                                                events as tracking.events messages (key TAB value)
///
/// Settings from the environment: FEED_URL, KAFKA_BROKERS, KAFKA_TOPIC_PREFIX.
/// (BenchMain.swift parses the options.)
enum FeedBench {
    /// `feed-queries`: against the feed at FEED_URL.
    static func queries(count: Int, pathsDirectory: String?) throws {
        let feed = URL(string: Environment().string(.feedURL))
        guard let host = feed?.host, let port = feed?.port else { throw BenchError("FEED_URL must be http://HOST:PORT") }
        try FeedQueryBench.run(host: host, port: port, count: count, pathsDirectory: pathsDirectory)
    }
}

/// Near and search requests as a phone makes them, against a feed loaded with the generated city.
enum FeedQueryBench {
    struct Samples {
        var inProcess: [Double] = []
        var http: [Double] = []
        var results = 0
    }

    static func nearPaths(count: Int, seed: UInt64) -> [String] {
        var random = CityRandom(seed: seed)
        return (0..<count).map { _ in
            let distance = abs(random.normal()) * 3_000, direction = random.unit() * 2 * .pi
            let point = FeedCityGenerator.City.offset(FeedCityGenerator.center, northMeters: distance * cos(direction), eastMeters: distance * sin(direction))
            let radius = [250, 500, 1_000, 2_000][random.index(4)]
            var path = String(format: "/v1/pois?near=%.6f,%.6f&radius=%d&limit=20", point.latitude, point.longitude, radius)
            if random.index(5) == 0 {
                let category = FeedCityGenerator.Words.categories[random.index(FeedCityGenerator.Words.categories.count)]
                path += "&category=" + (category.split(separator: "/").first.map(String.init) ?? "See")
            }
            return path
        }
    }

    /// What visitors type: whole words, word starts, names without their accents, a place's number.
    static func searchPaths(count: Int, seed: UInt64) -> [String] {
        var random = CityRandom(seed: seed)
        let words = FeedCityGenerator.Words.self
        let vocabulary = words.adjectives + words.nouns.values.flatMap { $0 } + words.streets + words.buildings
        return (0..<count).map { _ in
            let query: String
            switch random.index(4) {
            case 0: query = vocabulary[random.index(vocabulary.count)]
            case 1:
                let word = vocabulary[random.index(vocabulary.count)]
                query = String(word.prefix(3 + random.index(4)))
            case 2: query = vocabulary[random.index(vocabulary.count)].folding(options: [.diacriticInsensitive, .caseInsensitive], locale: nil)
            default: query = "\(words.nouns["Eat"]?[random.index(4)] ?? "Cafe") \(random.index(100_000))"
            }
            let encoded = query.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "hall"
            return "/v1/search?q=\(encoded)&limit=20"
        }
    }

    static func run(host: String, port: Int, count: Int, pathsDirectory: String?) throws {
        let near = nearPaths(count: count, seed: 11), search = searchPaths(count: count, seed: 12)
        if let directory = pathsDirectory {
            try (near.joined(separator: "\n") + "\n").write(toFile: directory + "/near.txt", atomically: true, encoding: .utf8)
            try (search.joined(separator: "\n") + "\n").write(toFile: directory + "/search.txt", atomically: true, encoding: .utf8)
        }
        let client = try KeepAliveClient(host: host, port: port)
        for (label, paths) in [("near", near), ("search", search)] {
            // Warm up the connection and caches, then measure one request at a time.
            for path in paths.prefix(100) { _ = try client.get(path) }
            var samples = Samples()
            var slowest: [(milliseconds: Double, path: String)] = []
            for path in paths {
                let started = ContinuousClock.now
                let response = try client.get(path)
                samples.http.append((ContinuousClock.now - started).benchSeconds * 1_000)
                guard response.status == 200 else { throw BenchError("\(path): HTTP \(response.status)") }
                if let timing = response.headers["server-timing"], let range = timing.range(of: "dur=") {
                    let milliseconds = Double(timing[range.upperBound...].prefix { $0 != ";" && $0 != "," }) ?? .nan
                    samples.inProcess.append(milliseconds)
                    slowest.append((milliseconds, path))
                }
                samples.results += response.body.split(separator: UInt8(ascii: "{")).count - 1
            }
            print(String(format: "%@ on the city: %d queries, in-process p50 %.3f ms p99 %.3f ms max %.3f ms; over HTTP p50 %.3f ms p99 %.3f ms; %.1f results/query",
                         label, paths.count, Statistics.percentile(samples.inProcess, 50), Statistics.percentile(samples.inProcess, 99),
                         samples.inProcess.max() ?? .nan, Statistics.percentile(samples.http, 50), Statistics.percentile(samples.http, 99),
                         Double(samples.results) / Double(paths.count)))
            // Where the tail comes from, for whoever tunes the index next (stderr: the summary stays as it is).
            let tail = slowest.sorted { $0.milliseconds > $1.milliseconds }.prefix(5).map { String(format: "%.3f ms %@", $0.milliseconds, $0.path) }
            FileHandle.standardError.write(Data("\(label) slowest in-process: \(tail.joined(separator: " | "))\n".utf8))
        }
    }
}

/// HTTP/1.1 GETs over one kept-alive connection, blocking: the least client overhead for latency samples.
final class KeepAliveClient {
    struct Response {
        let status: Int
        let headers: [String: String]
        let body: [UInt8]
    }

    private let socket: Int32
    private let host: String
    private var buffer: [UInt8] = []

    init(host: String, port: Int) throws {
        self.host = host
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr(host == "localhost" ? "127.0.0.1" : host)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else { throw BenchError("cannot connect to \(host):\(port)") }
        var one: Int32 = 1
        setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close(socket) }

    func get(_ path: String) throws -> Response {
        let request = Array("GET \(path) HTTP/1.1\r\nHost: \(host)\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(socket, $0.baseAddress, $0.count, 0) }) == request.count else { throw BenchError("send failed") }
        var headerEnd: Int?
        while headerEnd == nil {
            try fill()
            headerEnd = find([13, 10, 13, 10])
        }
        let headerBytes = buffer[..<(headerEnd ?? 0)]
        let lines = String(decoding: headerBytes, as: UTF8.self).components(separatedBy: "\r\n")
        let status = Int(lines.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        let bodyStart = (headerEnd ?? 0) + 4
        while buffer.count < bodyStart + length { try fill() }
        let body = Array(buffer[bodyStart..<(bodyStart + length)])
        buffer.removeFirst(bodyStart + length)
        return Response(status: status, headers: headers, body: body)
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { throw BenchError("connection closed") }
        buffer.append(contentsOf: chunk.prefix(count))
    }

    private func find(_ pattern: [UInt8]) -> Int? {
        guard buffer.count >= pattern.count else { return nil }
        for start in 0...(buffer.count - pattern.count) where buffer[start] == pattern[0] && Array(buffer[start..<(start + pattern.count)]) == pattern {
            return start
        }
        return nil
    }
}

/// Bodies for `POST /v1/events` (batches of realistic visit events from many devices) and the same
/// events as `tracking.events` messages for the raw producer it is compared with.
enum FeedEventBodies {
    static func write(batches: Int, batchSize: Int, pois: Int, tours: Int, to path: String, envelopes: String?) throws {
        var random = CityRandom(seed: 5)
        let now = Date()
        var bodies: [String] = []
        var messages: [String] = []
        for batch in 0..<batches {
            let device = "bench-device-\(batch)"
            var events: [String] = []
            for index in 0..<batchSize {
                let poi = FeedCityGenerator.poiId(random.index(max(1, pois))), tour = FeedCityGenerator.tourId(random.index(max(1, tours)))
                let event = TrackingEvent(type: [.poiViewed, .poiArrived, .poiLeft][index % 3], deviceId: device,
                                          occurredAt: now.addingTimeInterval(-Double(random.index(3_600))), tourId: tour, poiId: poi,
                                          dwellSeconds: index % 3 == 2 ? Double(30 + random.index(600)) : nil,
                                          via: index % 3 == 0 ? .map : nil)
                let json = String(decoding: try JSONCoding.encoder.encode(event), as: UTF8.self)
                events.append(json)
                messages.append(device + "\t" + String(decoding: TrackingCodec.writeMessage(event), as: UTF8.self))
            }
            bodies.append("{\"events\":[" + events.joined(separator: ",") + "]}")
        }
        try (bodies.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        if let envelopes {
            try (messages.joined(separator: "\n") + "\n").write(toFile: envelopes, atomically: true, encoding: .utf8)
        }
        print("wrote \(batches) bodies of \(batchSize) events to \(path)")
    }
}
