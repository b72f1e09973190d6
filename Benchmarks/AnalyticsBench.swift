import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import Shared

/// `itour-bench analytics STEP`: the analytics benchmarks (scripts/bench-analytics.sh runs them in order).
///
///     produce --events N --days D [--csv FILE]   N events over the last D days to tracking.events, and the same
///                                                 events as CSV for a Postgres COPY
///     ingest --events N                           waits until analytics counted N events; events/s
///     queries --runs R --days D                   report latency over the last D days
///     lag --runs R                                POST /v1/events on the feed until the summary counts it
///
/// Settings from the environment: KAFKA_BROKERS, KAFKA_TOPIC_PREFIX, ANALYTICS_URL, FEED_URL, REPORTS_TOKEN.
enum AnalyticsBench {
    struct Settings {
        let environment = Environment()
        var kafka: KafkaConfiguration {
            var kafka = KafkaConfiguration(brokers: environment.string(.kafkaBrokers), clientId: "itour-bench")
            kafka.topicPrefix = environment.string(.kafkaTopicPrefix)
            kafka.lingerMilliseconds = 20
            kafka.deliveryTimeoutMilliseconds = 60_000
            return kafka
        }
        var analyticsURL: String { environment.string(.analyticsURL) }
        var feedURL: String { environment.string(.feedURL) }
        var token: String { environment.string(.benchReportsToken) }
    }

    // MARK: produce

    /// The benchmark's content: a few tours and POIs, fixed so every step names the same ids.
    static let tours = (0..<8).map { UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", $0 + 1))! }
    static let pois = (0..<60).map { UUID(uuidString: String(format: "00000000-0000-4000-9000-%012d", $0 + 1))! }

    /// Visits: a device spends a session on one day walking a tour (register sometimes, start, view,
    /// arrive, play, leave at each stop, complete usually), about 20 events each; in time order.
    static func events(count: Int, days: Int, now: Date, seed: UInt64 = 42) -> [TrackingEvent] {
        var random = BenchRandom(seed: seed)
        let devices = max(1, count / 40)
        let today = (now.timeIntervalSince1970 / 86_400).rounded(.down)
        var events: [TrackingEvent] = []
        events.reserveCapacity(count)
        while events.count < count {
            let device = "bench-device-\(random.next(devices))"
            let tourist = random.next(2) == 0 ? "bench-tourist-\(random.next(devices / 2 + 1))" : nil
            let day = today - Double(random.next(days))
            var time = day * 86_400 + Double(random.next(80_000))
            // Today's sessions end before now: nothing from the future.
            if time > now.timeIntervalSince1970 - 7_200 { time = now.timeIntervalSince1970 - 7_200 - Double(random.next(3_600)) }
            func at() -> Date {
                time += Double(random.next(120_000)) / 1_000
                return Date(timeIntervalSince1970: (time * 1_000).rounded() / 1_000)
            }
            let tour = tours[random.next(tours.count)]
            if random.next(4) == 0 {
                events.append(TrackingEvent(id: random.uuid(), type: .deviceRegistered, deviceId: device, touristId: tourist, occurredAt: at(),
                                            platform: random.next(2) == 0 ? "ios" : "android", osVersion: ["17.4", "18.0", "14"][random.next(3)],
                                            model: ["iPhone 15", "Pixel 8", "Galaxy S24"][random.next(3)], appVersion: ["2.0.0", "2.1.0"][random.next(2)]))
            }
            events.append(TrackingEvent(id: random.uuid(), type: .tourStarted, deviceId: device, touristId: tourist, occurredAt: at(), tourId: tour))
            if random.next(2) == 0 {
                let query = ["library", "Library ", "dining hall", "parking", "café", "brooks field", "zzz"][random.next(7)]
                events.append(TrackingEvent(id: random.uuid(), type: .searchPerformed, deviceId: device, touristId: tourist, occurredAt: at(),
                                            query: query, resultCount: query == "zzz" ? 0 : random.next(6)))
            }
            let start = time
            for _ in 0..<4 {
                let poi = pois[random.next(pois.count)]
                events.append(TrackingEvent(id: random.uuid(), type: .poiViewed, deviceId: device, touristId: tourist, occurredAt: at(),
                                            tourId: tour, poiId: poi, via: .map))
                events.append(TrackingEvent(id: random.uuid(), type: .poiArrived, deviceId: device, touristId: tourist, occurredAt: at(),
                                            tourId: tour, poiId: poi))
                if random.next(2) == 0 {
                    events.append(TrackingEvent(id: random.uuid(), type: .mediaPlayed, deviceId: device, touristId: tourist, occurredAt: at(),
                                                poiId: poi, url: "https://example.edu/audio/\(random.next(60)).mp3", mediaType: .audio))
                }
                events.append(TrackingEvent(id: random.uuid(), type: .poiLeft, deviceId: device, touristId: tourist, occurredAt: at(),
                                            poiId: poi, dwellSeconds: Double(random.next(600_000)) / 1_000))
            }
            if random.next(10) < 7 {
                let end = at()
                events.append(TrackingEvent(id: random.uuid(), type: .tourCompleted, deviceId: device, touristId: tourist, occurredAt: end,
                                            tourId: tour, durationSeconds: end.timeIntervalSince1970 - start))
            }
        }
        // Phones report as things happen, so the topic holds events roughly in time order.
        return Array(events.prefix(count)).sorted { $0.occurredAt < $1.occurredAt }
    }

    static func produce(count: Int, days: Int, csv: String?, settings: Settings) async throws {
        let logger = Logger(label: "bench")
        let events = events(count: count, days: days, now: Date())
        if let csv { try writeCSV(events, to: csv) }
        let producer = try KafkaProducer(configuration: settings.kafka, logger: logger)
        try await producer.createTopics(Topic.all)
        let topic = settings.kafka.topic(Topic.trackingEvents)
        let started = ContinuousClock.now
        // A few batches in flight at once, each awaited: the broker acknowledges every message.
        let chunks = stride(from: 0, to: events.count, by: 5_000).map { events[$0..<min($0 + 5_000, events.count)] }
        try await withThrowingTaskGroup(of: Void.self) { group in
            var inFlight = 0
            for chunk in chunks {
                if inFlight == 4 { try await group.next(); inFlight -= 1 }
                let messages = chunk.map { KafkaOutgoingMessage(topic: topic, key: $0.deviceId, value: TrackingCodec.writeMessage($0)) }
                group.addTask { _ = try await producer.send(messages) }
                inFlight += 1
            }
            try await group.waitForAll()
        }
        let seconds = (ContinuousClock.now - started).seconds
        print(String(format: "produced %d events over %d days to %@ in %.1f s (%.0f events/s)", count, days, topic, seconds, Double(count) / seconds))
        await producer.shutdown()
    }

    /// The same events as CSV rows for `COPY ... (FORMAT csv)` into a table of the same columns.
    static func writeCSV(_ events: [TrackingEvent], to path: String) throws {
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        guard let handle = FileHandle(forWritingAtPath: path) else { throw BenchError("cannot write \(path)") }
        defer { try? handle.close() }
        var text = ""
        func field(_ value: String?) -> String { value.map { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"" } ?? "" }
        for (index, event) in events.enumerated() {
            let columns: [String] = [
                event.id.uuidString.lowercased(), event.type.rawValue, field(event.deviceId), field(event.touristId), RFC3339.format(event.occurredAt),
                field(event.platform), field(event.osVersion), field(event.model), field(event.appVersion),
                event.tourId?.uuidString.lowercased() ?? "", event.poiId?.uuidString.lowercased() ?? "",
                event.durationSeconds.map { String($0) } ?? "", event.dwellSeconds.map { String($0) } ?? "",
                event.via?.rawValue ?? "", field(event.url), event.mediaType?.rawValue ?? "",
            ]
            text += columns.joined(separator: ",") + "\n"
            if index % 50_000 == 49_999 {
                handle.write(Data(text.utf8))
                text = ""
            }
        }
        handle.write(Data(text.utf8))
    }

    // MARK: ingest

    /// Polls analytics' counter of counted events; the rate runs from the first counted event to the last.
    static func ingest(count: Int, settings: Settings) async throws {
        let deadline = ContinuousClock.now + .seconds(1_800)
        var first: (ContinuousClock.Instant, Int)?
        var last = 0
        while ContinuousClock.now < deadline {
            let counted = try await countedEvents(settings)
            let now = ContinuousClock.now
            if first == nil, counted > 0 { first = (now, counted) }
            if counted / (count / 10 + 1) != last / (count / 10 + 1) { FileHandle.standardError.write(Data("counted \(counted) of \(count)\n".utf8)) }
            last = counted
            if counted >= count, let (start, startCount) = first {
                let seconds = (now - start).seconds
                print(String(format: "ingest: %d events from tracking.events into aggregates in %.2f s: %.0f events/s",
                             counted - startCount, seconds, Double(counted - startCount) / seconds))
                return
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw BenchError("analytics counted \(last) of \(count) events within 30 minutes")
    }

    /// 0 until analytics answers.
    static func countedEvents(_ settings: Settings) async throws -> Int {
        guard let (data, _) = try? await URLSession.shared.data(from: URL(string: "\(settings.analyticsURL)/metrics")!) else { return 0 }
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") where line.hasPrefix("itour_analytics_events_counted_total ") {
            return Int(Double(line.split(separator: " ").last ?? "0") ?? 0)
        }
        return 0
    }

    // MARK: queries

    static func queries(runs: Int, days: Int, settings: Settings) async throws {
        let today = Date()
        func day(_ offset: Int) -> String { String(RFC3339.format(today.addingTimeInterval(Double(-offset) * 86_400)).prefix(10)) }
        let reports = ["summary", "pois", "tours", "devices", "daily", "funnel", "hours", "searches", "views", "languages"]
        var random = BenchRandom(seed: 9)
        var full: [String: [Double]] = [:]
        var mixed: [Double] = []
        // Warm-up: the first query of each kind plans and faults pages in. The funnel is always a tour's.
        let firstTour = "&tourId=\(tours[0].uuidString.lowercased())"
        for report in reports {
            _ = try await timedGet(settings, "/v1/reports/\(report)?from=\(day(days - 1))&to=\(day(0))\(report == "funnel" ? firstTour : "")")
        }
        for run in 0..<runs {
            // By pairs of runs: each report gets a whole-span query and a random range in turn.
            let report = reports[(run / 2) % reports.count]
            let tour = report == "funnel" || random.next(3) == 0 ? "&tourId=\(tours[random.next(tours.count)].uuidString.lowercased())" : ""
            // Every other query covers the whole span (the worst case); the rest a random range inside it.
            if run % 2 == 0 {
                full[report, default: []].append(try await timedGet(settings, "/v1/reports/\(report)?from=\(day(days - 1))&to=\(day(0))\(tour)"))
            } else {
                let a = random.next(days), b = random.next(days)
                mixed.append(try await timedGet(settings, "/v1/reports/\(report)?from=\(day(max(a, b)))&to=\(day(min(a, b)))\(tour)"))
            }
        }
        let all = full.values.flatMap { $0 }
        print(Statistics.summary("report queries over all \(days) days (\(reports.joined(separator: ", ")), a third filtered by tour)", milliseconds: all))
        for report in reports { print(Statistics.summary("  \(report) over \(days) days", milliseconds: full[report] ?? [])) }
        print(Statistics.summary("report queries over random ranges within the \(days) days", milliseconds: mixed))
    }

    static func timedGet(_ settings: Settings, _ path: String) async throws -> Double {
        var request = URLRequest(url: URL(string: settings.analyticsURL + path)!)
        request.setValue("Bearer \(settings.token)", forHTTPHeaderField: "Authorization")
        let start = ContinuousClock.now
        let (_, response) = try await URLSession.shared.data(for: request)
        let elapsed = (ContinuousClock.now - start).seconds * 1_000
        guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw BenchError("\(path): \(response)") }
        return elapsed
    }

    // MARK: lag

    /// One event at a time, each with a tour of its own, from POST /v1/events until the summary filtered
    /// by that tour counts it. Without a feed answering POST /v1/events, produces to tracking.events
    /// directly (and says so).
    static func lag(runs: Int, background: Int = 0, settings: Settings) async throws {
        let logger = Logger(label: "bench")
        let load = background > 0 ? try await SteadyLoad.start(rate: background, settings: settings) : nil
        var producer: KafkaProducer?
        let probe = try await post(TrackingEvent(type: .tourStarted, deviceId: "bench-lag-probe", occurredAt: Date(), tourId: UUID.random()), settings)
        if !probe {
            print("lag: the feed does not accept POST /v1/events at \(settings.feedURL); producing to tracking.events directly")
            producer = try KafkaProducer(configuration: settings.kafka, logger: logger)
        }
        var samples: [Double] = []
        for run in 1...runs {
            let tour = UUID.random()
            let now = Date()
            let event = TrackingEvent(type: .tourStarted, deviceId: "bench-lag-\(run % 50)", occurredAt: now, tourId: tour)
            let day = String(RFC3339.format(now).prefix(10))
            let start = ContinuousClock.now
            if let producer {
                try await producer.send(KafkaOutgoingMessage(topic: settings.kafka.topic(Topic.trackingEvents), key: event.deviceId,
                                                             value: TrackingCodec.writeMessage(event, source: "bench")))
            } else if try await !post(event, settings) {
                throw BenchError("POST /v1/events failed")
            }
            while true {
                var request = URLRequest(url: URL(string: "\(settings.analyticsURL)/v1/reports/summary?from=\(day)&to=\(day)&tourId=\(tour.uuidString.lowercased())")!)
                request.setValue("Bearer \(settings.token)", forHTTPHeaderField: "Authorization")
                let (data, _) = try await URLSession.shared.data(for: request)
                if let summary = try? JSONSerialization.jsonObject(with: data) as? [String: Any], summary["toursStarted"] as? Int == 1 { break }
                if ContinuousClock.now - start > .seconds(30) { throw BenchError("event of run \(run) not counted within 30 s") }
                try await Task.sleep(for: .milliseconds(5))
            }
            samples.append((ContinuousClock.now - start).seconds * 1_000)
        }
        let via = producer == nil ? "POST /v1/events on the feed" : "a direct produce to tracking.events"
        var under = ""
        if let load {
            let (sent, seconds) = try await load.stop()
            under = String(format: ", under a steady %.0f events/s (%d sent in %.1f s)", Double(sent) / seconds, sent, seconds)
            if Double(sent) / seconds < 0.95 * Double(background) {
                print("lag: the steady load reached \(Int(Double(sent) / seconds)) of the \(background) events/s asked: not the load the goal is for")
            }
        }
        print(Statistics.summary("lag from \(via) to counted in the summary report\(under)", milliseconds: samples))
        await producer?.shutdown()
    }

    /// Events produced to tracking.events at a steady rate (a slice every 100 ms), each new (ids never repeat), dated now,
    /// until stopped: the load the lag is measured under.
    final class SteadyLoad: Sendable {
        let task: Task<(Int, Double), any Error>

        private init(rate: Int, settings: Settings) throws {
            let producer = try KafkaProducer(configuration: settings.kafka, logger: Logger(label: "bench"))
            let topic = settings.kafka.topic(Topic.trackingEvents)
            task = Task {
                let slice = max(1, rate / 10)
                let started = ContinuousClock.now
                var sent = 0
                var round = 0
                while !Task.isCancelled {
                    // Fresh events each second: sessions of the last hours, new ids, re-dated to now.
                    if round % 10 == 0 {
                        FileHandle.standardError.write(Data("steady load: \(sent) sent\n".utf8))
                    }
                    let now = Date()
                    // Each slice's sessions on phones of their own (cycling over 3 000 slices: some 36 000 phones, each a few
                    // events a minute), as a city's visitors send them; a dozen phones sending hundreds of events a second
                    // each would make every tour mark decide again thousands of stored events.
                    let batch = AnalyticsBench.events(count: slice, days: 1, now: now, seed: UInt64(round) &+ 1_000).map { event in
                        var event = event
                        event.deviceId = "live-\(round % 3_000)-\(event.deviceId)"
                        event.occurredAt = now.addingTimeInterval(-Double(abs(event.id.hashValue % 600)))
                        return event
                    }
                    _ = try await producer.send(batch.map { KafkaOutgoingMessage(topic: topic, key: $0.deviceId, value: TrackingCodec.writeMessage($0)) })
                    sent += batch.count
                    round += 1
                    let due = started + .milliseconds(100 * round)
                    if due > ContinuousClock.now { try? await Task.sleep(until: due) }
                }
                await producer.shutdown()
                return (sent, (ContinuousClock.now - started).seconds)
            }
        }

        /// Starts the load and lets it run a few seconds before anything is measured.
        static func start(rate: Int, settings: Settings) async throws -> SteadyLoad {
            let load = try SteadyLoad(rate: rate, settings: settings)
            try await Task.sleep(for: .seconds(5))
            return load
        }

        func stop() async throws -> (Int, Double) {
            task.cancel()
            return try await task.value
        }
    }

    /// True when the feed accepted the event (202, and not rejected in its answer: a feed that has catalog's snapshot
    /// refuses a tour it does not know, and the bench's tours are made up).
    static func post(_ event: TrackingEvent, _ settings: Settings) async throws -> Bool {
        struct Batch: Encodable { let events: [TrackingEvent] }
        var request = URLRequest(url: URL(string: "\(settings.feedURL)/v1/events")!)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONCoding.encoder.encode(Batch(events: [event]))
        guard let (data, response) = try? await URLSession.shared.data(for: request) else { return false }
        struct Answer: Decodable { let accepted: Int }
        return (response as? HTTPURLResponse)?.statusCode == 202 && (try? JSONDecoder().decode(Answer.self, from: data))?.accepted == 1
    }
}

/// SplitMix64: the same events on every run.
struct BenchRandom {
    private var base: SplitMix64

    init(seed: UInt64) { base = SplitMix64(seed: seed) }

    mutating func next() -> UInt64 { base.next() }

    mutating func next(_ bound: Int) -> Int { Int(next() % UInt64(max(1, bound))) }

    mutating func uuid() -> UUID {
        let high = next(), low = next()
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in 0..<8 {
            bytes[index] = UInt8(truncatingIfNeeded: high >> (8 * index))
            bytes[8 + index] = UInt8(truncatingIfNeeded: low >> (8 * index))
        }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
