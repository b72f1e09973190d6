import Foundation
import Logging
import Shared
import Synchronization

/// `itour-bench generate-city --pois 100000 --tours 1000 [--seed 1] [--window 4]`: a synthetic city
/// catalog loaded through catalog's import batches (the path of `catalog import`), for the feed benchmarks.
///
/// The city is Leeds-shaped: tours start in neighbourhoods spread around a centre (denser in the
/// middle), each tour's POIs lie within a few hundred metres of its start and are walked
/// nearest-next. Names, categories, buildings, addresses and texts come from word lists, some with
/// accents, so search has something to fold. Ids and command ids derive from the indexes, so a second
/// run applies nothing twice and the other benchmark steps can name entities without asking.
///
/// The rows go as `catalog.import` commands that each fit one Kafka message: the category tree first, then
/// the POIs, then the tours (created, given their stops, published), each phase once the one before is
/// answered; up to `window` commands are in flight at a time. Prints the import rate in POIs per second.
/// Settings from the environment: KAFKA_BROKERS, KAFKA_TOPIC_PREFIX.
enum FeedCityGenerator {
    static let center = Coordinate(latitude: 53.7997, longitude: -1.5492)
    static let actor = "itour-bench"

    static func poiId(_ index: Int) -> UUID { numberedId(0xC17E_0000, index) }
    static func tourId(_ index: Int) -> UUID { numberedId(0xC17E_0001, index) }
    static func eventId(_ index: Int) -> UUID { numberedId(0xC17E_0002, index) }
    static func personId(_ index: Int) -> UUID { numberedId(0xC17E_0003, index) }
    static func numberedId(_ prefix: UInt32, _ index: Int) -> UUID {
        UUID(uuidString: String(format: "%08x-0000-4000-8000-%012d", prefix, index)) ?? UUID.random()
    }

    static func run(pois poiCount: Int, tours: Int, events: Int, people: Int, seed: UInt64, window: Int) async throws {
        let tourCount = max(1, tours), window = max(1, window)
        LoggingSetup.bootstrap(format: .text, level: .warning)
        let logger = Logger(label: "generate-city")
        let environment = Environment()
        var kafka = try BenchProgram.commandsKafka(environment, clientId: "itour-bench-city")
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
        // The category tree first: catalog accepts only POI categories that exist in it.
        let rows = categoryRows() + city.poiRows() + city.tourRows()
        let phases = ContentImportFile.importCommands(rows, actor: actor, skipInvalidRows: false)
        let commandCount = phases.map(\.count).reduce(0, +)
        let started = ContinuousClock.now
        let lastReport = Mutex(ContinuousClock.now)
        let results = try await ContentImportFile.send(phases, client: client, window: window, timeout: .seconds(300)) { answered in
            let now = ContinuousClock.now
            guard lastReport.withLock({ last in
                guard now - last > .seconds(1) || answered == rows.count else { return false }
                last = now
                return true
            }) else { return }
            let rate = Double(answered) / max(0.001, (now - started).benchSeconds)
            FileHandle.standardError.write(Data(String(format: "\rrows: %d/%d applied (%.0f/s)   ", answered, rows.count, rate).utf8))
        }
        let seconds = (ContinuousClock.now - started).benchSeconds
        FileHandle.standardError.write(Data("\n".utf8))
        print(String(format: "generate-city: imported %d POIs in %.1f s (%.0f POIs/s), with %d tours, through %d catalog.import commands",
                     poiCount, seconds, Double(poiCount) / seconds, tourCount, commandCount))
        let failures = results.flatMap { $0.rows ?? [] }.filter { $0.outcome != .applied }
        let rejected = results.filter { $0.outcome != .applied }
        if !rejected.isEmpty || results.count < commandCount {
            let lines = rejected.map { "import \($0.commandId): \($0.outcome.rawValue) \($0.message ?? "")" }
                + failures.prefix(20).map { "\($0.label): \($0.outcome.rawValue) \($0.message ?? "")" }
            FileHandle.standardError.write(Data((["\(commandCount - results.count) of \(commandCount) import commands not sent"] + lines)
                .joined(separator: "\n").utf8 + Data("\n".utf8)))
            exit(1)
        }
        // Calendar events and people after the city, each timed apart: the import rate above is the POIs' alone.
        try await importRecords(eventRows(count: events, pois: poiCount), named: "calendar events", client: client, window: window)
        try await importRecords(personRows(count: people, pois: poiCount), named: "people", client: client, window: window)
        await producer.shutdown()
    }

    static func importRecords(_ rows: [CatalogBatchRow], named name: String, client: CatalogCommandClient, window: Int) async throws {
        guard !rows.isEmpty else { return }
        let phases = ContentImportFile.importCommands(rows, actor: actor, skipInvalidRows: false)
        let started = ContinuousClock.now
        let results = try await ContentImportFile.send(phases, client: client, window: window, timeout: .seconds(300)) { _ in }
        let seconds = (ContinuousClock.now - started).benchSeconds
        print(String(format: "generate-city: imported %d %@ in %.1f s (%.0f/s)", rows.count, name, seconds, Double(rows.count) / seconds))
        if results.contains(where: { $0.outcome != .applied }) || results.count < phases.map(\.count).reduce(0, +) {
            FileHandle.standardError.write(Data("\(name): not every import command was applied\n".utf8))
            exit(1)
        }
    }

    /// Published people (issue 18): staff of departments named after the city's buildings, some with an office at a POI.
    static func personRows(count: Int, pois: Int) -> [CatalogBatchRow] {
        let first = ["Amelia", "Oliver", "Zoë", "José", "Aoife", "Mohammed", "Priya", "Søren", "Chloé", "Kwame", "Hannah", "Tomás"]
        let last = ["Smith", "Okafor", "Brontë", "Nakamura", "O'Neill", "Müller", "Patel", "Lefèvre", "Kowalski", "García", "Hart", "Ellis"]
        let roles = ["Lecturer", "Professor", "Librarian", "Curator", "Admissions Counselor", "Technician", "Research Fellow", "Director"]
        return (0..<count).map { index in
            let department = Words.buildings[index % Words.buildings.count]
            let interests = [Words.adjectives[index % Words.adjectives.count], Words.categories[index % Words.categories.count]]
            let content = PersonContent(
                name: "\(first[index % first.count]) \(last[(index / first.count) % last.count]) \(index)", role: roles[index % roles.count],
                department: department, email: "person\(index)@example.edu", phone: "0113 343 \(1000 + index % 9000)",
                officePoiId: pois > 0 && index % 2 == 0 ? poiId(index % pois) : nil, officeText: index % 2 == 0 ? nil : "Room \(index % 400)",
                interests: interests)
            return CatalogBatchRow(label: "person \(index)", commands: [
                CatalogCommand(commandId: numberedId(0xC17E_5000, index), action: .createPerson, actor: actor, entityId: personId(index),
                               status: .published, person: content),
            ])
        }
    }

    static func categoryRows() -> [CatalogBatchRow] {
        Words.categories.enumerated().map { index, path in
            CatalogBatchRow(label: "category \(path)", commands: [
                CatalogCommand(commandId: numberedId(0xC17E_3000, index), action: .createCategory, actor: actor, category: .ensuring(path: path)),
            ])
        }
    }

    /// Published calendar events (issue 18): weekly, monthly and one-off, some at a POI, for search to find among.
    static func eventRows(count: Int, pois: Int) -> [CatalogBatchRow] {
        (0..<count).map { index in
            let category = Words.categories[index % Words.categories.count]
            let kinds = ["Open Day", "Guided Walk", "Lecture", "Concert", "Market", "Workshop", "Exhibition", "Tasting"]
            let day = 1 + index % 28, hour = 9 + index % 9
            let start = String(format: "2027-%02d-%02dT%02d:00", 1 + index % 12, day, hour)
            let end = String(format: "2027-%02d-%02dT%02d:30", 1 + index % 12, day, hour + 1)
            let recurrence: CalendarRecurrence? = switch index % 3 {
            case 0: CalendarRecurrence(frequency: .weekly, byDay: [CalendarSchedule.weekdayCodes[index % 7]], count: 20)
            case 1: CalendarRecurrence(frequency: .monthly, count: 6)
            default: nil
            }
            let content = CalendarEntryContent(
                title: "\(Words.adjectives[index % Words.adjectives.count]) \(kinds[index % kinds.count]) \(index)",
                summary: Words.descriptions[index % Words.descriptions.count], startsAt: start, endsAt: end, timeZone: "Europe/London",
                placePoiId: pois > 0 && index % 2 == 0 ? poiId(index % pois) : nil, placeText: index % 2 == 0 ? nil : Words.buildings[index % Words.buildings.count],
                categories: [category], recurrence: recurrence)
            return CatalogBatchRow(label: "event \(index)", commands: [
                CatalogCommand(commandId: numberedId(0xC17E_4000, index), action: .createCalendarEntry, actor: actor, entityId: eventId(index),
                               status: .published, calendarEntry: content),
            ])
        }
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

        func poiRows() -> [CatalogBatchRow] {
            pois.enumerated().map { index, content in
                CatalogBatchRow(label: "poi \(index)", commands: [
                    CatalogCommand(commandId: FeedCityGenerator.numberedId(0xC17E_1000, index), action: .createPoi, actor: FeedCityGenerator.actor,
                                   entityId: FeedCityGenerator.poiId(index), poi: content),
                ])
            }
        }

        /// Each tour created, given its stops and published: three commands that stand or fall together.
        func tourRows() -> [CatalogBatchRow] {
            tours.enumerated().map { index, content in
                let id = FeedCityGenerator.tourId(index), actor = FeedCityGenerator.actor
                return CatalogBatchRow(label: "tour \(index)", commands: [
                    CatalogCommand(commandId: FeedCityGenerator.numberedId(0xC17E_2000, index), action: .createTour, actor: actor,
                                   entityId: id, tour: content),
                    CatalogCommand(commandId: FeedCityGenerator.numberedId(0xC17E_2001, index), action: .setTourStops, actor: actor,
                                   entityId: id, stops: stops[index].map(FeedCityGenerator.poiId)),
                    CatalogCommand(commandId: FeedCityGenerator.numberedId(0xC17E_2002, index), action: .setTourStatus, actor: actor,
                                   entityId: id, status: .published),
                ])
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
                              website: nil, openingHours: "Mo-Sa 09:00-18:00",
                              // Two languages loaded, as a site that offers them (issue 45): every place has its Spanish name.
                              translations: ["es": ["name": "Lugar \(index) de \(street)", "summary": "En \(street)"]])
        }

        static func tour(index: Int, random: inout CityRandom) -> TourContent {
            let theme = ["Heritage", "Food", "Arcades", "Campus", "Riverside", "Architecture", "Galleries", "Pubs"][random.index(8)]
            return TourContent(name: "\(theme) walk \(index)", summary: "A self-guided \(theme.lowercased()) walk through the city",
                               purpose: "Benchmark content", translations: ["es": ["name": "Paseo \(index)"]])
        }
    }
}

/// SplitMix64: fast, deterministic, good enough for synthetic content.
struct CityRandom {
    private var base: SplitMix64
    init(seed: UInt64) { base = SplitMix64(seed: seed &* 0x9E37_79B9_7F4A_7C15) }

    mutating func next() -> UInt64 { base.next() }

    /// In [0, 1).
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
    mutating func index(_ count: Int) -> Int { Int(next() % UInt64(max(1, count))) }
    /// Standard normal (Box-Muller).
    mutating func normal() -> Double { sqrt(-2 * log(max(unit(), 1e-12))) * cos(2 * .pi * unit()) }
}

extension Duration {
    var benchSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
