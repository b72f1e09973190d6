import Foundation
import Logging
import Shared

/// Loads tours and POIs from a JSON file in the demo file's format by sending catalog commands, the
/// same path the admin site uses. Ids and command ids derive from the file's `legacyId`s, so loading
/// the same file again applies nothing twice.
enum ContentImport {
    struct File: Decodable {
        struct Tour: Decodable {
            var legacyId: Int
            var name: String
            var summary: String?
            var purpose: String?
            var stops: [Int]
            var status: ContentStatus?
        }

        struct Poi: Decodable {
            var legacyId: Int
            var name: String
            var summary: String?
            var description: String?
            var latitude: Double
            var longitude: Double
            var category: String?
            var buildings: [String]?
            var pictures: [String]?
            var links: [MediaLink]?
            var address: String?
            var phone: String?
            var website: String?
            var openingHours: String?
        }

        var tours: [Tour]
        var pois: [Poi]
    }

    /// A stable UUID for a legacy number: `kind` tells entities and command steps apart.
    static func stableId(_ kind: UInt8, _ legacyId: Int) -> UUID {
        UUID(uuidString: String(format: "%08x-0000-4000-8000-%012d", Int(kind), legacyId))!
    }

    static func commands(for file: File) throws -> [CatalogCommand] {
        var commands: [CatalogCommand] = []
        let actor = "import"
        for poi in file.pois {
            let content = PoiContent(name: poi.name, summary: poi.summary ?? "", description: poi.description ?? "",
                                     latitude: poi.latitude, longitude: poi.longitude, category: poi.category,
                                     buildings: poi.buildings ?? [], pictures: poi.pictures ?? [], links: poi.links ?? [],
                                     address: poi.address, phone: poi.phone, website: poi.website, openingHours: poi.openingHours,
                                     legacyId: poi.legacyId)
            commands.append(CatalogCommand(commandId: stableId(0x11, poi.legacyId), action: .createPoi, actor: actor,
                                           entityId: stableId(0x02, poi.legacyId), poi: content))
        }
        let knownPois = Set(file.pois.map(\.legacyId))
        for tour in file.tours {
            if let unknown = tour.stops.first(where: { !knownPois.contains($0) }) {
                throw ImportError(message: "tour \(tour.legacyId) (\(tour.name)) stops at POI \(unknown), which the file does not define")
            }
            let id = stableId(0x01, tour.legacyId)
            commands.append(CatalogCommand(commandId: stableId(0x21, tour.legacyId), action: .createTour, actor: actor, entityId: id,
                                           tour: TourContent(name: tour.name, summary: tour.summary ?? "", purpose: tour.purpose ?? "",
                                                             legacyId: tour.legacyId)))
            commands.append(CatalogCommand(commandId: stableId(0x22, tour.legacyId), action: .setTourStops, actor: actor, entityId: id,
                                           stops: tour.stops.map { stableId(0x02, $0) }))
            commands.append(CatalogCommand(commandId: stableId(0x23, tour.legacyId), action: .setTourStatus, actor: actor, entityId: id,
                                           status: tour.status ?? .published))
        }
        return commands
    }

    static func run(file path: String, settings: ServiceSettings) async throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let file: File
        do {
            file = try JSONCoding.decoder.decode(File.self, from: data)
        } catch {
            throw ImportError(message: "\(path): \(JSONCoding.describe(error))")
        }
        let commands = try commands(for: file)
        LoggingSetup.bootstrap(format: "text", level: "warning")
        let logger = Logger(label: "catalog-import")
        let producer = try KafkaProducer(configuration: settings.kafka, logger: logger)
        let startup = StartupBarrier()
        let client = CatalogCommandClient(producer: producer, configuration: settings.kafka, startup: startup, source: "catalog-import", logger: logger)
        try await producer.createTopics(Topic.all)
        startup.open()
        let listener = Task { try await client.run() }
        defer { listener.cancel() }

        var applied = 0
        var failures: [String] = []
        for (index, command) in commands.enumerated() {
            let result = try await client.execute(command, timeout: .seconds(30))
            if result.outcome == .applied { applied += 1 } else {
                failures.append("\(command.action.rawValue) \(command.entityId?.uuidString ?? ""): \(result.outcome.rawValue): \(result.message ?? "")")
            }
            FileHandle.standardError.write(Data("\rimporting: \(index + 1)/\(commands.count) commands".utf8))
        }
        FileHandle.standardError.write(Data("\n".utf8))
        await producer.shutdown()
        print("imported \(file.tours.count) tours and \(file.pois.count) POIs from \(path): \(applied) commands applied")
        guard failures.isEmpty else {
            throw ImportError(message: "\(failures.count) commands failed:\n" + failures.joined(separator: "\n"))
        }
    }
}

struct ImportError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
