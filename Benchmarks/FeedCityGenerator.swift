import Foundation
import Logging
import Shared

/// `itour-bench generate-city --pois 100000 --tours 1000 [--seed 1] [--window 1000]`: a synthetic city
/// catalog loaded through catalog's own commands (the admin site's path), for the feed benchmarks.
///
/// The city is Leeds-shaped: tours start in neighbourhoods spread around a centre (denser in the
/// middle), each tour's POIs lie within a few hundred metres of its start and are walked
/// nearest-next. Names, categories, buildings, addresses and texts come from word lists, some with
/// accents, so search has something to fold. Ids and command ids derive from the indexes, so a second
/// run applies nothing twice and the other benchmark steps can name entities without asking.
///
/// The category tree is created first (one command per path). Commands are pipelined: up to `window` are in flight (sent, result not yet back) at a time.
/// Settings from the environment: KAFKA_BROKERS, KAFKA_TOPIC_PREFIX.
enum FeedCityGenerator {
    static let center = Coordinate(latitude: 53.7997, longitude: -1.5492)

    static func poiId(_ index: Int) -> UUID { numberedId(0xC17E_0000, index) }
    static func tourId(_ index: Int) -> UUID { numberedId(0xC17E_0001, index) }
    static func numberedId(_ prefix: UInt32, _ index: Int) -> UUID {
        UUID(uuidString: String(format: "%08x-0000-4000-8000-%012d", prefix, index)) ?? UUID()
    }

    static func run(pois poiCount: Int, tours: Int, seed: UInt64, window: Int) async throws {
        let tourCount = max(1, tours), window = max(1, window)
        LoggingSetup.bootstrap(format: .text, level: .warning)
        let logger = Logger(label: "generate-city")
        let environment = Environment()
        var kafka = KafkaConfiguration(brokers: environment.string(.kafkaBrokers), clientId: "itour-bench-city")
        kafka.topicPrefix = environment.string(.kafkaTopicPrefix)
        kafka.lingerMilliseconds = 5
        kafka.deliveryTimeoutMilliseconds = 60_000
        let producer = try KafkaProducer(configuration: kafka, logger: logger)
        try await producer.createTopics(Topic.all)
        let startup = StartupBarrier()
        let client = CatalogCommandClient(producer: producer, configuration: kafka, startup: startup, source: "itour-bench", logger: logger)
        startup.open()
        let listener = Task { try await client.run() }
        defer { listener.cancel() }

        let city = City(pois: poiCount, tours: tourCount, seed: seed)
        let started = ContinuousClock.now
        var failures: [String] = []
        // The category tree first: catalog accepts only POI categories that exist in it.
        failures += try await pipeline("categories", Words.categories.enumerated().map { index, path in
            CatalogCommand(commandId: numberedId(0xC17E_3000, index), action: .createCategory, actor: "itour-bench",
                           category: .ensuring(path: path))
        }, client: client, window: 1)
        failures += try await pipeline("POIs", city.poiCommands(), client: client, window: window)
        failures += try await pipeline("tours", city.tourCommands(.createTour), client: client, window: window)
        failures += try await pipeline("stops", city.tourCommands(.setTourStops), client: client, window: window)
        failures += try await pipeline("publish", city.tourCommands(.setTourStatus), client: client, window: window)
        let seconds = (ContinuousClock.now - started).benchSeconds
        await producer.shutdown()
        print(String(format: "generate-city: %d POIs in %d tours through catalog commands in %.1f s (%.0f commands/s)",
                     poiCount, tourCount, seconds, Double(poiCount + 3 * tourCount) / seconds))
        if !failures.isEmpty {
            FileHandle.standardError.write(Data((["\(failures.count) commands failed:"] + failures.prefix(20)).joined(separator: "\n").utf8))
            exit(1)
        }
    }

    /// Sends the commands with at most `window` awaiting their results; returns the failures.
    static func pipeline(_ label: String, _ commands: [CatalogCommand], client: CatalogCommandClient, window: Int) async throws -> [String] {
        let started = ContinuousClock.now
        var failures: [String] = []
        var done = 0, lastReport = ContinuousClock.now
        try await withThrowingTaskGroup(of: String?.self) { group in
            var next = 0
            func add() {
                guard next < commands.count else { return }
                let command = commands[next]
                next += 1
                group.addTask {
                    try await client.send(command)
                    let result = try await client.result(of: command.commandId, timeout: .seconds(300))
                    return result.outcome == .applied ? nil
                        : "\(command.action.rawValue) \(command.entityId?.uuidString ?? ""): \(result.outcome.rawValue) \(result.message ?? "")"
                }
            }
            for _ in 0..<min(window, commands.count) { add() }
            while let outcome = try await group.next() {
                if let outcome { failures.append(outcome) }
                done += 1
                add()
                if ContinuousClock.now - lastReport > .seconds(1) || done == commands.count {
                    lastReport = ContinuousClock.now
                    let rate = Double(done) / max(0.001, (ContinuousClock.now - started).benchSeconds)
                    FileHandle.standardError.write(Data(String(format: "\r%@: %d/%d applied (%.0f/s)   ", label, done, commands.count, rate).utf8))
                }
            }
        }
        FileHandle.standardError.write(Data("\n".utf8))
        return failures
    }

    /// The generated content: deterministic for a seed.
    struct City {
        let pois: [PoiContent]
        /// Stop indexes per tour, in walking order.
        let stops: [[Int]]
        let tours: [TourContent]

        init(pois poiCount: Int, tours tourCount: Int, seed: UInt64) {
            var random = CityRandom(seed: seed)
            var pois: [PoiContent] = []
            pois.reserveCapacity(poiCount)
            var stops: [[Int]] = []
            var tours: [TourContent] = []
            for tour in 0..<tourCount {
                // Neighbourhoods: distance from the centre ~ |normal| * 3 km, any direction.
                let distance = abs(random.normal()) * 3_000, direction = random.unit() * 2 * .pi
                let start = Self.offset(FeedCityGenerator.center, northMeters: distance * cos(direction), eastMeters: distance * sin(direction))
                let first = tour * poiCount / tourCount, end = (tour + 1) * poiCount / tourCount
                var places: [Int] = []
                for index in first..<end {
                    let point = Self.offset(start, northMeters: random.normal() * 350, eastMeters: random.normal() * 350)
                    pois.append(Words.poi(index: index, at: point, random: &random))
                    places.append(index)
                }
                stops.append(Self.walkingOrder(places, pois: pois))
                tours.append(Words.tour(index: tour, random: &random))
            }
            self.pois = pois
            self.stops = stops
            self.tours = tours
        }

        static func offset(_ point: Coordinate, northMeters: Double, eastMeters: Double) -> Coordinate {
            let latitude = point.latitude + northMeters / 111_195
            let longitude = point.longitude + eastMeters / (111_195 * cos(point.latitude * .pi / 180))
            return Coordinate(latitude: (latitude * 1e6).rounded() / 1e6, longitude: (longitude * 1e6).rounded() / 1e6)
        }

        /// Nearest-next from the first place: a plausible walk.
        static func walkingOrder(_ places: [Int], pois: [PoiContent]) -> [Int] {
            guard var current = places.first else { return [] }
            var remaining = Set(places.dropFirst())
            var order = [current]
            while !remaining.isEmpty {
                let here = Coordinate(latitude: pois[current].latitude, longitude: pois[current].longitude)
                let nearest = remaining.min { a, b in
                    let da = Geo.distanceMeters(here, Coordinate(latitude: pois[a].latitude, longitude: pois[a].longitude))
                    let db = Geo.distanceMeters(here, Coordinate(latitude: pois[b].latitude, longitude: pois[b].longitude))
                    return (da, a) < (db, b)
                } ?? current
                remaining.remove(nearest)
                order.append(nearest)
                current = nearest
            }
            return order
        }

        func poiCommands() -> [CatalogCommand] {
            pois.enumerated().map { index, content in
                CatalogCommand(commandId: FeedCityGenerator.numberedId(0xC17E_1000, index), action: .createPoi, actor: "itour-bench",
                               entityId: FeedCityGenerator.poiId(index), poi: content)
            }
        }

        func tourCommands(_ action: CatalogAction) -> [CatalogCommand] {
            tours.enumerated().map { index, content in
                let id = FeedCityGenerator.tourId(index)
                switch action {
                case .createTour:
                    return CatalogCommand(commandId: FeedCityGenerator.numberedId(0xC17E_2000, index), action: action, actor: "itour-bench",
                                          entityId: id, tour: content)
                case .setTourStops:
                    return CatalogCommand(commandId: FeedCityGenerator.numberedId(0xC17E_2001, index), action: action, actor: "itour-bench",
                                          entityId: id, stops: stops[index].map(FeedCityGenerator.poiId))
                default:
                    return CatalogCommand(commandId: FeedCityGenerator.numberedId(0xC17E_2002, index), action: .setTourStatus, actor: "itour-bench",
                                          entityId: id, status: .published)
                }
            }
        }
    }

    /// Word lists for names and texts, shared with the query benchmark (its searches use these words).
    enum Words {
        static let categories = ["Shop/Fashion", "Shop/Books", "Shop/Market", "Eat/Café", "Eat/Restaurant", "Eat/Pub", "See/Museum",
                                 "See/Gallery", "See/Church", "See/Park", "See/Monument", "Sleep/Hotel", "Campus/Library", "Campus/Hall"]
        static let nouns: [String: [String]] = [
            "Shop": ["Boutique", "Emporium", "Arcade", "Market", "Bookshop", "Atelier", "Galleria"],
            "Eat": ["Café", "Brasserie", "Kitchen", "Tavern", "Crêperie", "Bistro", "Tea Rooms", "Inn"],
            "See": ["Museum", "Gallery", "Chapel", "Gardens", "Monument", "Musée", "Abbey", "Theatre"],
            "Sleep": ["Hotel", "Lodge", "House", "Résidence"],
            "Campus": ["Library", "Hall", "Institute", "Laboratory", "Lecture Theatre", "Union"],
        ]
        static let adjectives = ["Old", "New", "Royal", "Little", "Grand", "Victoria", "Crown", "Golden", "Silver", "Corn Exchange",
                                 "Kirkgate", "Briggate", "Headrow", "Riverside", "Canal", "Hyde Park", "Château", "Señor", "Ærøskøbing", "Straße"]
        static let streets = ["Briggate", "The Headrow", "Boar Lane", "Kirkgate", "Call Lane", "Park Row", "Albion Street", "Wellington Street",
                              "Woodhouse Lane", "Otley Road", "Kirkstall Road", "York Road", "Meanwood Road", "Roundhay Road"]
        static let buildings = ["Parkinson Building", "Brotherton Library", "Great Hall", "Clothworkers Centenary Hall", "Emmanuel Centre",
                                "Marjorie and Arnold Ziff Building", "Corn Exchange", "Town Hall", "Civic Hall", "Grand Arcade",
                                "Thornton's Arcade", "Kirkgate Market Hall", "Royal Armouries", "Henry Moore Institute"]
        static let descriptions = [
            "Built in the nineteenth century and restored in 2012, it keeps its original ironwork and tiled floors.",
            "Volunteers run guided visits on weekends; ask at the desk for the audio guide.",
            "A favourite meeting point for students, with seating outside when the weather allows.",
            "The façade is listed; the interior was rebuilt after a fire in 1975.",
            "Step-free access from the side entrance; lifts to every floor.",
            "Look up: the ceiling paintings show the city's trades in 1890.",
        ]

        static func poi(index: Int, at point: Coordinate, random: inout CityRandom) -> PoiContent {
            let category = categories[random.index(categories.count)]
            let group = String(category.split(separator: "/").first ?? "See")
            let kinds = nouns[group] ?? ["Place"]
            let name = "\(adjectives[random.index(adjectives.count)]) \(kinds[random.index(kinds.count)]) \(index)"
            let street = streets[random.index(streets.count)]
            let buildingCount = random.index(4)
            let places = (0..<buildingCount).map { _ in buildings[random.index(buildings.count)] }
            let description = (0..<(2 + random.index(3))).map { _ in descriptions[random.index(descriptions.count)] }.joined(separator: " ")
            var links: [MediaLink] = []
            if random.index(3) == 0 { links.append(MediaLink(name: "Audio guide", type: .audio, url: "https://media.example.org/audio/\(index).mp3")) }
            if random.index(4) == 0 { links.append(MediaLink(name: "Website", type: .page, url: "https://example.org/places/\(index)")) }
            return PoiContent(name: name, summary: "\(kinds[random.index(kinds.count)]) on \(street)", description: description,
                              latitude: point.latitude, longitude: point.longitude, category: category, buildings: places,
                              pictures: random.index(2) == 0 ? ["https://media.example.org/pictures/\(index).jpg"] : [], links: links,
                              address: "\(1 + random.index(200)) \(street), Leeds", phone: "+44 113 \(100 + random.index(900)) \(1000 + random.index(9000))",
                              website: nil, openingHours: "Mo-Sa 09:00-18:00")
        }

        static func tour(index: Int, random: inout CityRandom) -> TourContent {
            let theme = ["Heritage", "Food", "Arcades", "Campus", "Riverside", "Architecture", "Galleries", "Pubs"][random.index(8)]
            return TourContent(name: "\(theme) walk \(index)", summary: "A self-guided \(theme.lowercased()) walk through the city",
                               purpose: "Benchmark content")
        }
    }
}

/// SplitMix64: fast, deterministic, good enough for synthetic content.
struct CityRandom {
    var state: UInt64
    init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// In [0, 1).
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
    mutating func index(_ count: Int) -> Int { Int(next() % UInt64(max(1, count))) }
    /// Standard normal (Box-Muller).
    mutating func normal() -> Double { sqrt(-2 * log(max(unit(), 1e-12))) * cos(2 * .pi * unit()) }
}

extension Duration {
    var benchSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
