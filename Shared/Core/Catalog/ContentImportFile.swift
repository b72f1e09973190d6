import Foundation

/// Reads a bulk import file (JSON in the demo file's format, or CSV) into the rows of one `catalog.import`
/// command. Used by `catalog import FILE` and the admin's import page. Rows that cannot even be read
/// (a latitude that is not a number, a missing name) are reported here with their line; everything else
/// is validated by catalog, with the same rules as any other command.
///
/// Ids are stable: from `legacyId` when the row has one, else from the row's content, so importing the
/// same file twice applies nothing twice (the command ids repeat, and catalog applies a command once).
public enum ContentImportFile {
    public enum Format: String, Sendable, CaseIterable {
        case json, csv

        /// From a file name's extension.
        public init?(fileName: String) {
            switch fileName.split(separator: ".").last?.lowercased() {
            case "json": self = .json
            case "csv": self = .csv
            default: return nil
            }
        }
    }

    /// What a file yields: rows to send and rows already refused.
    public struct Plan: Sendable {
        public var rows: [CatalogBatchRow] = []
        public var unreadable: [CatalogBatchRowResult] = []
        public var tours = 0
        public var pois = 0
        public var categories = 0
        public var calendar = 0
        public var people = 0
        public var pages = 0
        public var featured = 0
        /// Rows as the file has them (POIs, tours and categories listed), which people count; `rows` also has a
        /// row per category path a POI uses.
        public var fileRows = 0

        public var rowCount: Int { rows.count + unreadable.count }

        /// Rows made elsewhere than from a file (a translations file's changes).
        public init(rows: [CatalogBatchRow] = [], unreadable: [CatalogBatchRowResult] = []) {
            self.rows = rows
            self.unreadable = unreadable
            fileRows = rows.count + unreadable.count
        }

        /// The `catalog.import` command for the readable rows.
        public func command(actor: String, skipInvalidRows: Bool, commandId: UUID = UUID.random()) -> CatalogCommand {
            CatalogCommand(commandId: commandId, action: .importBatch, actor: actor, rows: rows, skipInvalidRows: skipInvalidRows)
        }

        /// The rows' answers with a missing stop named by its POI's row in this file ("“Brooks Field” on line 3"), as
        /// catalog names it within one command: sent as several commands, a tour's does not hold the POI rows.
        public func namingStops(in results: [CatalogBatchRowResult]) -> [CatalogBatchRowResult] {
            var names: [String: String] = [:]
            for row in rows {
                for command in row.commands where command.action == .createPoi {
                    if let id = command.entityId, let poi = command.poi { names["POI \(id.lowercased) (no such POI)"] = "“\(poi.name)” on \(row.label) (its row was not imported)" }
                }
            }
            func named(_ text: String) -> String {
                names.reduce(text) { text, name in text.replacingOccurrences(of: name.key, with: name.value) }
            }
            return results.map { result in
                var result = result
                result.message = result.message.map(named)
                result.errors = result.errors.map { FieldError(field: $0.field, message: named($0.message)) }
                return result
            }
        }

        /// The readable rows as `catalog.import` commands that each fit one message, in phases (`importCommands`).
        public func commands(actor: String, skipInvalidRows: Bool) -> [[CatalogCommand]] {
            ContentImportFile.importCommands(rows, actor: actor, skipInvalidRows: skipInvalidRows)
        }
    }

    public struct FileError: Error, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    /// The demo file's shape (deploy/demo/uncw-itour.json).
    public struct JSONFile: Decodable, Sendable {
        public struct Tour: Decodable, Sendable {
            public var legacyId: Int?
            public var name: String
            public var summary: String?
            public var purpose: String?
            public var stops: [Int]?
            public var status: ContentStatus?
            // DESIGN.md, "A tour's look and route".
            public var coverImage: String?
            public var coverImageAlt: String?
            public var estimatedMinutes: Int?
            public var color: String?
            public var route: LineString?
            /// DESIGN.md "Languages".
            public var translations: Translations?
        }

        public struct Poi: Decodable, Sendable {
            public var legacyId: Int?
            public var name: String
            public var summary: String?
            public var description: String?
            public var latitude: Double
            public var longitude: Double
            public var category: String?
            /// All its categories, main first (`category` alone when it has one).
            public var categories: [String]?
            public var buildings: [String]?
            public var pictures: [String]?
            public var links: [MediaLink]?
            public var address: String?
            public var phone: String?
            public var website: String?
            public var openingHours: String?
            /// `published`: a place on the feed of its own; default `draft`.
            public var status: ContentStatus?
            public var priceLevel: Int?
            public var accessibility: String?
            public var narration: String?
            public var translations: Translations?
        }

        /// A calendar event (DESIGN.md, "Calendar"): its content, its place as a POI's legacyId or text, its status.
        public struct CalendarEvent: Decodable, Sendable {
            public var title: String
            public var summary: String?
            public var description: String?
            public var startsAt: String
            public var endsAt: String
            public var timeZone: String
            public var allDay: Bool?
            public var placePoiLegacyId: Int?
            public var placeText: String?
            public var url: String?
            public var registrationUrl: String?
            public var categories: [String]?
            public var recurrence: CalendarRecurrence?
            public var exceptionDates: [String]?
            /// Default `published`.
            public var status: ContentStatus?
            public var translations: Translations?
        }

        /// A person in the directory (DESIGN.md, "People"): the office as a POI's legacyId or text; default `published`.
        public struct Person: Decodable, Sendable {
            public var name: String
            public var role: String?
            public var department: String?
            public var email: String?
            public var phone: String?
            public var officePoiLegacyId: Int?
            public var officeText: String?
            public var interests: [String]?
            public var profileUrl: String?
            public var photoUrl: String?
            public var status: ContentStatus?
            public var translations: Translations?
        }

        /// A content page (DESIGN.md, "Pages"); default `published`.
        public struct Page: Decodable, Sendable {
            public var slug: String
            public var title: String
            public var summary: String?
            public var body: String?
            public var order: Int?
            public var status: ContentStatus?
            public var translations: Translations?
        }

        /// A featured item (DESIGN.md, "Featured"): its target as a tour's or POI's legacyId, an event's place in this
        /// file's `calendar`, or a page's slug in this file's `pages`; default `published`.
        public struct Featured: Decodable, Sendable {
            public var tourLegacyId: Int?
            public var poiLegacyId: Int?
            public var calendarIndex: Int?
            public var pageSlug: String?
            public var title: String?
            public var imageUrl: String
            public var imageAlt: String
            public var order: Int?
            public var status: ContentStatus?
            public var translations: Translations?
        }

        public var tours: [Tour]?
        public var pois: [Poi]?
        public var calendar: [CalendarEvent]?
        public var people: [Person]?
        public var pages: [Page]?
        public var featured: [Featured]?
        /// Category paths to create even when no POI uses them yet.
        public var categories: [String]?
    }

    /// Most rows one `catalog.import` command takes: one command travels as one Kafka message.
    public static let maximumRows = 2_000
    /// Most bytes of one encoded import command: librdkafka's `message.max.bytes` and Kafka's are about 1 MB
    /// by default, and the envelope and headers need a little.
    public static let maximumCommandBytes = 900_000
    /// Most rows `catalog import` reads from one file; it sends them as several import commands (`importCommands`).
    public static let maximumFileRows = 1_000_000

    /// `maximumRows`: the most rows the file may have; more than `ContentImportFile.maximumRows` only for
    /// a caller that sends the plan with `Plan.commands` (several import commands).
    public static func plan(_ data: Data, format: Format, actor: String, maximumRows: Int = maximumRows) throws(FileError) -> Plan {
        let plan: Plan
        switch format {
        case .json: plan = try planJSON(data, actor: actor)
        case .csv:
            guard let text = String(data: data, encoding: .utf8) else { throw FileError(message: "the CSV file is not UTF-8 text") }
            plan = try planCSV(text, actor: actor)
        }
        guard plan.rowCount <= maximumRows else {
            throw FileError(message: "the file has \(plan.rowCount) rows; one import takes at most \(maximumRows), so split it")
        }
        guard plan.rowCount > 0 else { throw FileError(message: "the file has no tours, POIs or categories") }
        return plan
    }

    // MARK: several commands

    /// The rows as `catalog.import` commands of at most `maximumRows` rows and `maximumCommandBytes` bytes,
    /// in phases. The commands of one phase may be applied in any order (the broker spreads them over
    /// partitions), so each run of rows of one kind (categories, POIs, tours, featured items, anything else) is a
    /// phase of its own: POIs are checked against categories, tours' stops against POIs and featured items' targets
    /// against everything, imported before.
    public static func importCommands(_ rows: [CatalogBatchRow], actor: String, skipInvalidRows: Bool,
                                      maximumRows: Int = maximumRows, maximumBytes: Int = maximumCommandBytes) -> [[CatalogCommand]] {
        func kind(_ row: CatalogBatchRow) -> Int {
            switch row.commands.first?.action {
            case .createCategory: 0
            case .createPoi: 1
            case .createTour: 2
            case .createFeatured: 4
            default: 3
            }
        }
        // What the command around the rows takes: its fields, the envelope and the separators.
        let overhead = 1_024
        var phases: [[CatalogCommand]] = []
        var phase: [CatalogCommand] = []
        var chunk: [CatalogBatchRow] = []
        var chunkBytes = overhead
        func closeChunk() {
            if !chunk.isEmpty { phase.append(CatalogCommand(action: .importBatch, actor: actor, rows: chunk, skipInvalidRows: skipInvalidRows)) }
            chunk = []
            chunkBytes = overhead
        }
        func closePhase() {
            closeChunk()
            if !phase.isEmpty { phases.append(phase) }
            phase = []
        }
        var previousKind: Int?
        for row in rows {
            let rowKind = kind(row)
            if let previousKind, previousKind != rowKind { closePhase() }
            previousKind = rowKind
            let bytes = CatalogEventCodec.byteCount(of: row) + 1
            if !chunk.isEmpty && (chunk.count >= maximumRows || chunkBytes + bytes > maximumBytes) { closeChunk() }
            chunk.append(row)
            chunkBytes += bytes
        }
        closePhase()
        return phases
    }

    /// Sends phases of import commands (`importCommands`) through `client`, at most `window` awaiting their
    /// answers at a time; a phase starts once the one before it is answered. Once a command is rejected
    /// (all or nothing, and a row failed), nothing more is sent: later rows may need the refused ones.
    /// Returns the answers, in the order of the commands; the commands after them were not sent.
    public static func send(_ phases: [[CatalogCommand]], client: CatalogCommandClient, window: Int, timeout: Duration,
                            progress: @Sendable (_ answeredRows: Int) -> Void = { _ in }) async throws -> [CatalogCommandResult] {
        var answers: [CatalogCommandResult] = []
        var answeredRows = 0
        for phase in phases {
            var results = [CatalogCommandResult?](repeating: nil, count: phase.count)
            var rejected = false
            try await withThrowingTaskGroup(of: (Int, CatalogCommandResult).self) { group in
                var next = 0
                func sendNext() {
                    guard next < phase.count, !rejected else { return }
                    let index = next, command = phase[index]
                    next += 1
                    group.addTask { (index, try await client.execute(command, timeout: timeout)) }
                }
                for _ in 0..<max(1, window) { sendNext() }
                while let (index, result) = try await group.next() {
                    results[index] = result
                    if result.outcome != .applied { rejected = true }
                    answeredRows += phase[index].rows?.count ?? 0
                    progress(answeredRows)
                    sendNext()
                }
            }
            // In command order, up to the first not sent.
            let sent = results.prefix { $0 != nil }.compactMap { $0 }
            answers += sent
            if rejected || sent.count < phase.count { break }
        }
        return answers
    }

    // MARK: ids

    /// A stable UUID for a legacy number: `kind` tells entities and command steps apart.
    public static func stableId(_ kind: UInt8, _ legacyId: Int) -> UUID {
        UUID(uuidString: String(format: "%08x-0000-4000-8000-%012d", Int(kind), legacyId))!
    }

    /// A stable UUID for content without a legacy number (FNV-1a, 128 bits): the same row gives the same id.
    public static func stableId(_ kind: UInt8, content: String) -> UUID {
        var low: UInt64 = 0xcbf2_9ce4_8422_2325
        var high: UInt64 = 0x6c62_272e_07bb_0142
        for byte in [kind] + Array(content.utf8) {
            low = (low ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            high = (high ^ UInt64(byte) ^ (low >> 29)) &* 0x0000_0100_0000_01b3
        }
        var bytes = withUnsafeBytes(of: low.bigEndian) { Array($0) } + withUnsafeBytes(of: high.bigEndian) { Array($0) }
        bytes[6] = (bytes[6] & 0x0F) | 0x40 // version 4 layout, so it parses anywhere a random UUID does
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }

    /// What a stable id stands for: entities, and the command steps that create them.
    public enum Kind: UInt8, Sendable {
        case tour = 0x01, poi = 0x02, category = 0x03
        case calendarEntry = 0x04, person = 0x05, page = 0x06, featured = 0x07
        case poiCreate = 0x11, tourCreate = 0x21, tourStops = 0x22, tourStatus = 0x23, categoryCreate = 0x31, calendarCreate = 0x41
        case personCreate = 0x51, pageCreate = 0x61, featuredCreate = 0x71
    }

    // MARK: rows from content

    /// `status`: `published` makes the POI a place on the feed of its own (DESIGN.md, "Places on their own").
    public static func poiRow(label: String, legacyId: Int?, content: PoiContent, status: ContentStatus = .draft, actor: String) -> CatalogBatchRow {
        let key = legacyId.map { "legacy:\($0)" } ?? canonical(content)
        let ids = legacyId.map { (stableId(Kind.poi.rawValue, $0), stableId(Kind.poiCreate.rawValue, $0)) }
            ?? (stableId(Kind.poi.rawValue, content: key), stableId(Kind.poiCreate.rawValue, content: key))
        return CatalogBatchRow(label: label, commands: [
            CatalogCommand(commandId: ids.1, action: .createPoi, actor: actor, entityId: ids.0, poi: content, status: status == .draft ? nil : status),
        ])
    }

    public static func tourRow(label: String, legacyId: Int?, content: TourContent, stops: [UUID], status: ContentStatus,
                        actor: String) -> CatalogBatchRow {
        func id(_ kind: Kind) -> UUID {
            legacyId.map { stableId(kind.rawValue, $0) }
                ?? stableId(kind.rawValue, content: canonical(content) + stops.map(\.uuidString).joined() + status.rawValue)
        }
        var commands = [CatalogCommand(commandId: id(.tourCreate), action: .createTour, actor: actor, entityId: id(.tour), tour: content)]
        if !stops.isEmpty {
            commands.append(CatalogCommand(commandId: id(.tourStops), action: .setTourStops, actor: actor, entityId: id(.tour), stops: stops))
        }
        if status != .draft {
            commands.append(CatalogCommand(commandId: id(.tourStatus), action: .setTourStatus, actor: actor, entityId: id(.tour), status: status))
        }
        return CatalogBatchRow(label: label, commands: commands)
    }

    /// The label of the row made for a category path a file uses: reports count these apart from the file's rows.
    public static let categoryLabelPrefix = "category "

    static func categoryRows(_ paths: [String], actor: String) -> [CatalogBatchRow] {
        Set(paths.map(normalizedPath).filter { !$0.isEmpty }).sorted().map { path in
            CatalogBatchRow(label: categoryLabelPrefix + path, commands: [
                CatalogCommand(commandId: stableId(Kind.categoryCreate.rawValue, content: path), action: .createCategory, actor: actor,
                               category: .ensuring(path: path)),
            ])
        }
    }

    /// "Shop / Fashion" → "Shop/Fashion".
    public static func normalizedPath(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: "/")
    }

    static func canonical<T: Encodable>(_ value: T) -> String {
        (try? JSONCoding.encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    // MARK: JSON

    /// Decodes one element, keeping a failure as that row's error instead of failing the whole file.
    struct Lenient<T: Decodable & Sendable>: Decodable, Sendable {
        let value: Result<T, FileError>

        init(from decoder: any Decoder) throws {
            do { value = .success(try T(from: decoder)) } catch { value = .failure(FileError(message: JSONCoding.describe(error))) }
        }
    }

    struct LenientFile: Decodable {
        var tours: [Lenient<JSONFile.Tour>]?
        var pois: [Lenient<JSONFile.Poi>]?
        var categories: [String]?
        var calendar: [Lenient<JSONFile.CalendarEvent>]?
        var people: [Lenient<JSONFile.Person>]?
        var pages: [Lenient<JSONFile.Page>]?
        var featured: [Lenient<JSONFile.Featured>]?
    }

    /// A catalog record's row (DESIGN.md, "Catalog records"): its ids come from its content, so importing the file again
    /// changes nothing.
    static func recordRow<Content: CatalogRecordContent>(label: String, content: Content, status: ContentStatus, actor: String,
                                                         action: CatalogAction, ids: (entity: Kind, command: Kind),
                                                         into field: WritableKeyPath<CatalogCommand, Content?>) -> CatalogBatchRow {
        let key = canonical(content)
        var command = CatalogCommand(commandId: stableId(ids.command.rawValue, content: key), action: action, actor: actor,
                                     entityId: stableId(ids.entity.rawValue, content: key), status: status)
        command[keyPath: field] = content
        return CatalogBatchRow(label: label, commands: [command])
    }

    public static func calendarRow(label: String, content: CalendarEntryContent, status: ContentStatus, actor: String) -> CatalogBatchRow {
        recordRow(label: label, content: content, status: status, actor: actor, action: .createCalendarEntry, ids: (.calendarEntry, .calendarCreate),
                  into: \.calendarEntry)
    }

    public static func personRow(label: String, content: PersonContent, status: ContentStatus, actor: String) -> CatalogBatchRow {
        recordRow(label: label, content: content, status: status, actor: actor, action: .createPerson, ids: (.person, .personCreate), into: \.person)
    }

    public static func pageRow(label: String, content: PageContent, status: ContentStatus, actor: String) -> CatalogBatchRow {
        recordRow(label: label, content: content, status: status, actor: actor, action: .createPage, ids: (.page, .pageCreate), into: \.page)
    }

    public static func featuredRow(label: String, content: FeaturedContent, status: ContentStatus, actor: String) -> CatalogBatchRow {
        recordRow(label: label, content: content, status: status, actor: actor, action: .createFeatured, ids: (.featured, .featuredCreate),
                  into: \.featured)
    }

    /// Each readable element's row, and each unreadable one reported, labelled `name[index]`; returns how many read.
    private static func addRows<Element>(_ elements: [Lenient<Element>], named name: String, to plan: inout Plan,
                                         row: (Element, String) -> CatalogBatchRow) -> Int {
        var read = 0
        for (index, element) in elements.enumerated() {
            switch element.value {
            case .failure(let error):
                plan.unreadable.append(CatalogBatchRowResult(label: "\(name)[\(index)]", outcome: .failed, message: error.message))
            case .success(let value):
                plan.rows.append(row(value, "\(name)[\(index)]"))
                read += 1
            }
        }
        return read
    }

    static func planJSON(_ data: Data, actor: String) throws(FileError) -> Plan {
        let file: LenientFile
        do {
            file = try JSONCoding.decoder.decode(LenientFile.self, from: data)
        } catch {
            throw FileError(message: "not an import file: \(JSONCoding.describe(error))")
        }
        var plan = Plan()
        let pois = file.pois ?? []
        let tours = file.tours ?? []
        var categoryPaths = file.categories ?? []
        let calendar = file.calendar ?? []
        let people = file.people ?? []
        let pages = file.pages ?? []
        let featured = file.featured ?? []
        plan.fileRows = pois.count + tours.count + categoryPaths.count + calendar.count + people.count + pages.count + featured.count
        for case .success(let poi) in pois.map(\.value) { categoryPaths += poi.allCategories }
        for case .success(let event) in calendar.map(\.value) { categoryPaths += event.categories ?? [] }
        plan.rows += categoryRows(categoryPaths, actor: actor)
        plan.categories = plan.rows.count
        for (index, element) in pois.enumerated() {
            let label = "pois[\(index)]"
            switch element.value {
            case .failure(let error):
                plan.unreadable.append(CatalogBatchRowResult(label: label, outcome: .failed, message: error.message))
            case .success(let poi):
                let content = PoiContent(name: poi.name, summary: poi.summary ?? "", description: poi.description ?? "",
                                         latitude: poi.latitude, longitude: poi.longitude,
                                         categories: poi.allCategories.map(normalizedPath).filter { !$0.isEmpty },
                                         buildings: poi.buildings ?? [], pictures: poi.pictures ?? [], links: poi.links ?? [],
                                         address: poi.address, phone: poi.phone, website: poi.website, openingHours: poi.openingHours,
                                         legacyId: poi.legacyId, priceLevel: poi.priceLevel, accessibility: poi.accessibility,
                                         narration: poi.narration, translations: poi.translations)
                guard poi.status != .archived else {
                    plan.unreadable.append(CatalogBatchRowResult(label: label, outcome: .failed, message: "a POI's status is draft or published, not archived"))
                    continue
                }
                plan.rows.append(poiRow(label: label, legacyId: poi.legacyId, content: content, status: poi.status ?? .draft, actor: actor))
                plan.pois += 1
            }
        }
        for (index, element) in tours.enumerated() {
            let label = "tours[\(index)]"
            switch element.value {
            case .failure(let error):
                plan.unreadable.append(CatalogBatchRowResult(label: label, outcome: .failed, message: error.message))
            case .success(let tour):
                let content = TourContent(name: tour.name, summary: tour.summary ?? "", purpose: tour.purpose ?? "", legacyId: tour.legacyId,
                                          coverImage: tour.coverImage, coverImageAlt: tour.coverImageAlt, estimatedMinutes: tour.estimatedMinutes,
                                          color: tour.color?.lowercased(), route: tour.route, translations: tour.translations)
                plan.rows.append(tourRow(label: label, legacyId: tour.legacyId, content: content,
                                         stops: (tour.stops ?? []).map { stableId(Kind.poi.rawValue, $0) },
                                         status: tour.status ?? .published, actor: actor))
                plan.tours += 1
            }
        }
        // The ids of this file's events and pages, for featured items to name them by place or slug.
        var eventIds: [Int: UUID] = [:], pageIds: [String: UUID] = [:]
        var eventIndex = 0
        plan.calendar = addRows(calendar, named: "calendar", to: &plan) { event, label in
            let content = CalendarEntryContent(
                title: event.title, summary: event.summary ?? "", description: event.description ?? "", startsAt: event.startsAt,
                endsAt: event.endsAt, timeZone: event.timeZone, allDay: event.allDay ?? false,
                placePoiId: event.placePoiLegacyId.map { stableId(Kind.poi.rawValue, $0) }, placeText: event.placeText, url: event.url,
                registrationUrl: event.registrationUrl, categories: (event.categories ?? []).map(normalizedPath), recurrence: event.recurrence,
                exceptionDates: event.exceptionDates ?? [], translations: event.translations)
            let row = calendarRow(label: label, content: content, status: event.status ?? .published, actor: actor)
            while case .failure = calendar[eventIndex].value { eventIndex += 1 }
            eventIds[eventIndex] = row.commands.first?.entityId
            eventIndex += 1
            return row
        }
        plan.people = addRows(people, named: "people", to: &plan) { person, label in
            let content = PersonContent(
                name: person.name, role: person.role ?? "", department: person.department ?? "", email: person.email, phone: person.phone,
                officePoiId: person.officePoiLegacyId.map { stableId(Kind.poi.rawValue, $0) }, officeText: person.officeText,
                interests: person.interests ?? [], profileUrl: person.profileUrl, photoUrl: person.photoUrl, translations: person.translations)
            return personRow(label: label, content: content, status: person.status ?? .published, actor: actor)
        }
        plan.pages = addRows(pages, named: "pages", to: &plan) { page, label in
            let row = pageRow(label: label, content: PageContent(slug: page.slug, title: page.title, summary: page.summary ?? "", body: page.body ?? "",
                                                                 order: page.order ?? 0, translations: page.translations),
                              status: page.status ?? .published, actor: actor)
            pageIds[page.slug.trimmingCharacters(in: .whitespaces).lowercased()] = row.commands.first?.entityId
            return row
        }
        plan.featured = addRows(featured, named: "featured", to: &plan) { item, label in
            // A target the file does not have becomes an id no entity has, which catalog refuses as not existing.
            let slug = (item.pageSlug ?? "").trimmingCharacters(in: .whitespaces).lowercased()
            let target: (FeaturedContent.TargetKind, UUID) = if let id = item.tourLegacyId { (.tour, stableId(Kind.tour.rawValue, id)) }
                else if let id = item.poiLegacyId { (.poi, stableId(Kind.poi.rawValue, id)) }
                else if let index = item.calendarIndex { (.event, eventIds[index] ?? stableId(Kind.calendarEntry.rawValue, index)) }
                else { (.page, pageIds[slug] ?? stableId(Kind.page.rawValue, content: slug)) }
            let content = FeaturedContent(targetKind: target.0, targetId: target.1, title: item.title, imageUrl: item.imageUrl,
                                          imageAlt: item.imageAlt, order: item.order ?? 0, translations: item.translations)
            return featuredRow(label: label, content: content, status: item.status ?? .published, actor: actor)
        }
        return plan
    }

    // MARK: CSV

    /// The CSV columns, matched case-insensitively by header; only `name` is required (and `latitude`,
    /// `longitude` for POIs). Lists inside a cell are separated by ";", a link is "name|type|url". A translatable
    /// column followed by `@` and a language tag (`name@es`) holds that language's text (DESIGN.md "Languages").
    public static let csvColumns = ["kind", "legacyId", "name", "summary", "description", "purpose", "latitude", "longitude", "category",
                                    "buildings", "pictures", "links", "address", "phone", "website", "openingHours", "stops", "status",
                                    "priceLevel", "accessibility", "role", "department", "email", "office", "interests", "profileUrl",
                                    "photoUrl", "slug", "body", "order", "startsAt", "endsAt", "timeZone", "allDay", "place", "url",
                                    "registrationUrl", "recurrence", "exceptionDates", "target", "imageUrl", "imageAlt"]

    static func planCSV(_ text: String, actor: String) throws(FileError) -> Plan {
        let records: [CSV.Record]
        do {
            records = try CSV.parse(text)
        } catch {
            throw FileError(message: "not a CSV file: \(error.description)")
        }
        guard let header = records.first else { throw FileError(message: "the CSV file is empty") }
        var columns: [String: Int] = [:]
        /// `name@es` and the like: the column's index → field and language.
        var translatedColumns: [(index: Int, field: String, language: String)] = []
        let translatable = Set(TourContent.translatableFields + PoiContent.translatableFields + PageContent.translatableFields
                               + PersonContent.translatableFields)
        for (index, name) in header.fields.enumerated() {
            let key = name.trimmingCharacters(in: .whitespaces).lowercased()
            if let at = key.firstIndex(of: "@") {
                let language = name.trimmingCharacters(in: .whitespaces).split(separator: "@", maxSplits: 1).last.map(String.init) ?? ""
                guard let field = translatable.first(where: { $0.lowercased() == key[..<at] }), LanguageTag.isWellFormed(language) else {
                    throw FileError(message: "line 1: column \"\(name)\" is not a translation; a translation column is a field and a language tag, "
                                    + "such as name@es, of these fields: \(translatable.sorted().joined(separator: ", "))")
                }
                translatedColumns.append((index, field, language))
                continue
            }
            guard let known = csvColumns.first(where: { $0.lowercased() == key }) else {
                throw FileError(message: "line 1: unknown column \"\(name)\"; the columns are \(csvColumns.joined(separator: ", "))")
            }
            columns[known] = index
        }
        guard columns["name"] != nil else { throw FileError(message: "line 1: the header needs a name column") }

        struct Row {
            let record: CSV.Record
            let values: [String: String]
            let translations: Translations?
            var label: String { "line \(record.line)" }
            var kind: String { (values["kind"] ?? "").lowercased().isEmpty ? "poi" : (values["kind"] ?? "").lowercased() }
            func text(_ column: String) -> String { values[column] ?? "" }
            func optional(_ column: String) -> String? { let value = text(column); return value.isEmpty ? nil : value }
            func list(_ column: String) -> [String] {
                text(column).split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            }
        }
        var rows: [Row] = []
        var plan = Plan()
        plan.fileRows = records.count - 1
        for record in records.dropFirst() {
            guard record.fields.count <= header.fields.count else {
                plan.unreadable.append(CatalogBatchRowResult(label: "line \(record.line)", outcome: .failed,
                                                             message: "\(record.fields.count) fields, but the header has \(header.fields.count)"))
                continue
            }
            var values: [String: String] = [:]
            for (column, index) in columns where index < record.fields.count {
                values[column] = record.fields[index].trimmingCharacters(in: .whitespaces)
            }
            var translations: Translations = [:]
            for column in translatedColumns where column.index < record.fields.count {
                let text = record.fields[column.index].trimmingCharacters(in: .whitespaces)
                if !text.isEmpty { translations[column.language, default: [:]][column.field] = text }
            }
            rows.append(Row(record: record, values: values, translations: translations.isEmpty ? nil : translations))
        }

        /// A row read: planned and counted; its entity's id, for later rows to name it.
        @discardableResult
        func add(_ row: CatalogBatchRow, counted count: WritableKeyPath<Plan, Int>) -> UUID? {
            plan.rows.append(row)
            plan[keyPath: count] += 1
            return row.commands.first?.entityId
        }
        func fail(_ row: Row, _ errors: [FieldError]) {
            plan.unreadable.append(CatalogBatchRowResult(label: row.label, outcome: .failed, errors: errors,
                                                         message: errors.map(\.message).joined(separator: "; ")))
        }
        func legacyId(_ row: Row, into errors: inout [FieldError]) -> Int? {
            guard let text = row.optional("legacyId") else { return nil }
            guard let value = Int(text), value >= 0 else {
                errors.append(FieldError(field: "legacyId", message: "legacyId must be a whole number, got \"\(text)\""))
                return nil
            }
            return value
        }

        var categoryPaths = rows.filter { $0.kind == "category" }.map { $0.text("name") }
        categoryPaths += rows.filter { $0.kind == "poi" || $0.kind == "event" }.flatMap { $0.list("category") }
        plan.rows += categoryRows(categoryPaths, actor: actor)
        plan.categories = plan.rows.count

        for row in rows where !["poi", "tour", "category", "person", "page", "event", "featured"].contains(row.kind) {
            fail(row, [FieldError(field: "kind", message: "kind must be poi, tour, category, event, person, page or featured, got \"\(row.kind)\"")])
        }
        /// A person's or page's status: published unless the row says draft.
        func recordStatus(_ row: Row, into errors: inout [FieldError]) -> ContentStatus {
            guard let text = row.optional("status") else { return .published }
            guard let parsed = ContentStatus(rawValue: text.lowercased()), parsed != .archived else {
                errors.append(FieldError(field: "status", message: "status is draft or published, got \"\(text)\""))
                return .published
            }
            return parsed
        }
        for row in rows where row.kind == "poi" {
            var errors: [FieldError] = []
            let legacy = legacyId(row, into: &errors)
            func coordinate(_ column: String, _ label: String, _ range: ClosedRange<Double>) -> Double {
                guard let value = Double(row.text(column)), value.isFinite else {
                    errors.append(FieldError(field: column, message: "\(label) must be a number between \(Int(range.lowerBound)) and \(Int(range.upperBound))"))
                    return 0
                }
                return value
            }
            let latitude = coordinate("latitude", "Latitude", -90...90)
            let longitude = coordinate("longitude", "Longitude", -180...180)
            var links: [MediaLink] = []
            for (index, text) in row.list("links").enumerated() {
                let parts = text.split(separator: "|", maxSplits: 2, omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
                guard parts.count == 3, let type = MediaType(rawValue: parts[1].lowercased()) else {
                    errors.append(FieldError(field: "links[\(index)]", message: "a link is name|type|url with type page, video, audio or image"))
                    continue
                }
                links.append(MediaLink(name: parts[0], type: type, url: parts[2]))
            }
            var priceLevel: Int?
            if let text = row.optional("priceLevel") {
                if let level = Int(text) { priceLevel = level } else {
                    errors.append(FieldError(field: "priceLevel", message: "Price level must be 0 (free) to 4 (very expensive), got \"\(text)\""))
                }
            }
            var status = ContentStatus.draft
            if let text = row.optional("status") {
                if let parsed = ContentStatus(rawValue: text.lowercased()), parsed != .archived { status = parsed } else {
                    errors.append(FieldError(field: "status", message: "a POI's status is draft or published, got \"\(text)\""))
                }
            }
            guard errors.isEmpty else { fail(row, errors); continue }
            let content = PoiContent(name: row.text("name"), summary: row.text("summary"), description: row.text("description"),
                                     latitude: latitude, longitude: longitude, categories: row.list("category").map(normalizedPath),
                                     buildings: row.list("buildings"), pictures: row.list("pictures"), links: links,
                                     address: row.optional("address"), phone: row.optional("phone"), website: row.optional("website"),
                                     openingHours: row.optional("openingHours"), legacyId: legacy, priceLevel: priceLevel,
                                     accessibility: row.optional("accessibility"), translations: row.translations)
            add(poiRow(label: row.label, legacyId: legacy, content: content, status: status, actor: actor), counted: \.pois)
        }
        for row in rows where row.kind == "tour" {
            var errors: [FieldError] = []
            let legacy = legacyId(row, into: &errors)
            var stops: [UUID] = []
            for text in row.list("stops") {
                if let number = Int(text) { stops.append(stableId(Kind.poi.rawValue, number)) } else if let id = UUID(uuidString: text) {
                    stops.append(id)
                } else {
                    errors.append(FieldError(field: "stops", message: "stops are POI legacyIds or ids separated by \";\", got \"\(text)\""))
                }
            }
            var status = ContentStatus.published
            if let text = row.optional("status") {
                if let parsed = ContentStatus(rawValue: text.lowercased()) { status = parsed } else {
                    errors.append(FieldError(field: "status", message: "status must be draft, published or archived, got \"\(text)\""))
                }
            }
            guard errors.isEmpty else { fail(row, errors); continue }
            let content = TourContent(name: row.text("name"), summary: row.text("summary"), purpose: row.text("purpose"), legacyId: legacy,
                                      translations: row.translations)
            add(tourRow(label: row.label, legacyId: legacy, content: content, stops: stops, status: status, actor: actor), counted: \.tours)
        }
        for row in rows where row.kind == "person" {
            var errors: [FieldError] = []
            let status = recordStatus(row, into: &errors)
            guard errors.isEmpty else { fail(row, errors); continue }
            // `office`: a POI's legacyId, else the office as text.
            let office = row.optional("office")
            let content = PersonContent(
                name: row.text("name"), role: row.text("role"), department: row.text("department"), email: row.optional("email"),
                phone: row.optional("phone"), officePoiId: office.flatMap(Int.init).map { stableId(Kind.poi.rawValue, $0) },
                officeText: office.flatMap { Int($0) == nil ? $0 : nil }, interests: row.list("interests"),
                profileUrl: row.optional("profileUrl"), photoUrl: row.optional("photoUrl"), translations: row.translations)
            add(personRow(label: row.label, content: content, status: status, actor: actor), counted: \.people)
        }
        func order(_ row: Row, into errors: inout [FieldError]) -> Int {
            guard let text = row.optional("order") else { return 0 }
            guard let value = Int(text) else {
                errors.append(FieldError(field: "order", message: "order must be a whole number, got \"\(text)\""))
                return 0
            }
            return value
        }
        // The ids of this file's events (by title) and pages (by slug), for featured rows to name them.
        var eventIds: [String: UUID] = [:], pageIds: [String: UUID] = [:], repeatedTitles: Set<String> = []
        for row in rows where row.kind == "page" {
            var errors: [FieldError] = []
            let status = recordStatus(row, into: &errors)
            let order = order(row, into: &errors)
            guard errors.isEmpty else { fail(row, errors); continue }
            // A page's title is the row's name, in every language.
            let translations = row.translations?.mapValues { texts in
                Dictionary(texts.map { ($0.key == "name" ? "title" : $0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
            }
            let content = PageContent(slug: row.text("slug"), title: row.text("name"), summary: row.text("summary"), body: row.text("body"),
                                      order: order, translations: translations)
            pageIds[content.slug.lowercased()] = add(pageRow(label: row.label, content: content, status: status, actor: actor), counted: \.pages)
        }
        for row in rows where row.kind == "event" {
            var errors: [FieldError] = []
            let status = recordStatus(row, into: &errors)
            var allDay = false
            if let text = row.optional("allDay") {
                switch text.lowercased() {
                case "true", "yes", "1": allDay = true
                case "false", "no", "0": allDay = false
                default: errors.append(FieldError(field: "allDay", message: "allDay is true or false, got \"\(text)\""))
                }
            }
            var recurrence: CalendarRecurrence?
            if let text = row.optional("recurrence") {
                do { recurrence = try CalendarRecurrence(rrule: text) } catch { errors.append(error) }
            }
            guard errors.isEmpty else { fail(row, errors); continue }
            // `place`: a POI's legacyId, else the place as text.
            let place = row.optional("place")
            let content = CalendarEntryContent(
                title: row.text("name"), summary: row.text("summary"), description: row.text("description"), startsAt: row.text("startsAt"),
                endsAt: row.text("endsAt"), timeZone: row.text("timeZone"), allDay: allDay,
                placePoiId: place.flatMap(Int.init).map { stableId(Kind.poi.rawValue, $0) }, placeText: place.flatMap { Int($0) == nil ? $0 : nil },
                url: row.optional("url"), registrationUrl: row.optional("registrationUrl"), categories: row.list("category").map(normalizedPath),
                recurrence: recurrence, exceptionDates: row.list("exceptionDates"))
            let title = content.title.lowercased()
            if eventIds[title] != nil { repeatedTitles.insert(title) }
            eventIds[title] = add(calendarRow(label: row.label, content: content, status: status, actor: actor), counted: \.calendar)
        }
        for row in rows where row.kind == "featured" {
            var errors: [FieldError] = []
            let status = recordStatus(row, into: &errors)
            let order = order(row, into: &errors)
            // `target`: KIND:REFERENCE, the reference a legacyId (tour, poi), a title of an event row or a slug of a page row
            // in this file, or an id of any kind.
            let target = row.text("target")
            let parts = target.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            var resolved: (FeaturedContent.TargetKind, UUID)?
            if parts.count == 2, let kind = FeaturedContent.TargetKind(rawValue: parts[0].lowercased()), !parts[1].isEmpty {
                let reference = parts[1]
                if let id = UUID(uuidString: reference) {
                    resolved = (kind, id)
                } else {
                    switch kind {
                    case .tour: resolved = Int(reference).map { (kind, stableId(Kind.tour.rawValue, $0)) }
                    case .poi: resolved = Int(reference).map { (kind, stableId(Kind.poi.rawValue, $0)) }
                    case .event where repeatedTitles.contains(reference.lowercased()):
                        errors.append(FieldError(field: "target", message: "several events in this file are titled \"\(reference)\"; name this one by its id"))
                    case .event: resolved = eventIds[reference.lowercased()].map { (kind, $0) }
                    case .page: resolved = pageIds[reference.lowercased()].map { (kind, $0) }
                    }
                }
            }
            if resolved == nil, !errors.contains(where: { $0.field == "target" }) {
                errors.append(FieldError(field: "target", message: "target is tour:LEGACYID, poi:LEGACYID, event:TITLE or page:SLUG of a row "
                                             + "in this file, or KIND:ID, got \"\(target)\""))
            }
            guard errors.isEmpty, let resolved else { fail(row, errors); continue }
            let content = FeaturedContent(targetKind: resolved.0, targetId: resolved.1, title: row.optional("name"),
                                          imageUrl: row.text("imageUrl"), imageAlt: row.text("imageAlt"), order: order)
            add(featuredRow(label: row.label, content: content, status: status, actor: actor), counted: \.featured)
        }
        return plan
    }
}

extension ContentImportFile.JSONFile.Poi {
    /// `categories` when given, else `category`; blanks dropped.
    public var allCategories: [String] {
        (categories ?? category.map { [$0] } ?? []).filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
    }
}
