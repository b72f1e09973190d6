import Foundation
import Shared

/// A kind of catalog record as catalog keeps it (DESIGN.md, "Catalog records"): its table, where commands and
/// results carry it, and its checks.
protocol StoredRecord: CatalogRecordContent {
    /// Its table in the catalog schema.
    static var table: String { get }
    /// How messages name one: "calendar entry", "person".
    static var noun: String { get }
    /// "calendar entries", "people".
    static var plural: String { get }
    /// Its mistakes as field errors, after tidying it (trimmed names, categories as the tree spells them).
    static func validate(_ content: inout Self, id: UUID, on transaction: any CatalogTransaction) async throws -> [FieldError]
}

/// The records' commands: `<kind>.create`, `<kind>.update`, `<kind>.set-status` and `<kind>.delete`, versioned, audited
/// and published as `<kind>.changed` / `<kind>.deleted`.
extension Work {
    /// The command's kind and verb, from its action (`CatalogAction.recordCommand`).
    mutating func applyRecordCommand() async throws -> CatalogCommandResult {
        guard let (kind, verb) = command.action.recordCommand else { return missing("action", "\(command.action.rawValue) is not a record's command") }
        guard let stored = kind as? any StoredRecord.Type else { return missing("action", "catalog keeps no \(kind.recordKind) records") }
        return try await applyRecordCommand(stored, verb)
    }

    private mutating func applyRecordCommand<Content: StoredRecord>(_: Content.Type, _ verb: CatalogAction.RecordVerb) async throws -> CatalogCommandResult {
        switch verb {
        case .create: try await createRecord(Content.self)
        case .update, .setStatus: try await changeRecord(Content.self)
        case .delete: try await deleteRecord(Content.self)
        }
    }

    mutating func createRecord<Content: StoredRecord>(_: Content.Type) async throws -> CatalogCommandResult {
        guard var content = command[keyPath: Content.commandContent] else { return missing(Content.commandField, "\(Content.noun) content is required") }
        if command.status == .archived { return missing("status", "status must be published or draft") }
        let id = command.entityId ?? UUID.random()
        let errors = try await Content.validate(&content, id: id, on: transaction)
        guard errors.isEmpty else { return rejected(errors) }
        if try await transaction.record(Content.self, id) != nil { return missing("entityId", "a \(Content.noun) with id \(id) already exists") }
        let record = CatalogRecordState(id: id, version: 1, status: command.status ?? .draft, content: content, updatedAt: now)
        return try await commit(record, before: nil)
    }

    /// `<kind>.update` (new content) and `<kind>.set-status`.
    mutating func changeRecord<Content: StoredRecord>(_: Content.Type) async throws -> CatalogCommandResult {
        let stored = try await recordForChange(Content.self)
        let id = stored.state.id
        var record = stored.state
        if command.action == .record(Content.self, .setStatus) {
            guard let status = command.status, status != .archived else { return missing("status", "status must be published or draft") }
            record.status = status
        } else {
            guard var content = command[keyPath: Content.commandContent] else { return missing(Content.commandField, "\(Content.noun) content is required") }
            let errors = try await Content.validate(&content, id: id, on: transaction)
            guard errors.isEmpty else { return rejected(errors) }
            record.content = content
        }
        record.version += 1
        record.updatedAt = now
        return try await commit(record, before: stored.state)
    }

    mutating func deleteRecord<Content: StoredRecord>(_: Content.Type) async throws -> CatalogCommandResult {
        let stored = try await recordForChange(Content.self)
        let id = stored.state.id
        var record = stored.state
        record.version += 1
        record.updatedAt = now
        try await transaction.saveRecord(record, deleted: true)
        publish(CatalogRecordEvent<Content>(kind: .deleted, entityId: id, version: record.version))
        return try await applied(id, version: record.version, before: stored.state, after: nil as CatalogRecordState<Content>?)
    }

    func recordConflict<Content: StoredRecord>(_ current: CatalogRecordState<Content>) -> CatalogCommandResult? {
        guard var conflict = conflict(current: current.version) else { return nil }
        conflict[keyPath: Content.resultState] = current
        return conflict
    }

    mutating func commit<Content: StoredRecord>(_ record: CatalogRecordState<Content>, before: CatalogRecordState<Content>?) async throws -> CatalogCommandResult {
        try await transaction.saveRecord(record, deleted: false)
        publish(CatalogRecordEvent.changed(record))
        var result = try await applied(record.id, version: record.version, before: before, after: record)
        result[keyPath: Content.resultState] = record
        return result
    }

    mutating func publish<Content: StoredRecord>(_ event: CatalogRecordEvent<Content>) {
        let payload = CatalogEventCodec.write(Envelope(type: event.type, source: "catalog", data: event))
        outbox.append(OutboxEntry(topic: topics.topic(Topic.catalogEvents), key: event.entityId.uuidString.lowercased(),
                                  partition: nil, payload: String(decoding: payload, as: UTF8.self), requestId: requestId))
    }
}

extension StoredRecord {
    /// Each category one of the tree's paths (spelled as the tree spells it), duplicates dropped.
    static func checkCategories(_ categories: inout [String], on transaction: any CatalogTransaction, into errors: inout [FieldError]) async throws {
        categories.removeAll { CommandValidation.isBlank($0) }
        var known: [String] = []
        for category in categories {
            if let path = try await transaction.category(path: category)?.path {
                if !known.contains(path) { known.append(path) }
            } else {
                errors.append(FieldError(field: "categories",
                                         message: "Category must be one of the category tree's paths, e.g. Shop/Fashion; \"\(category)\" is not one"))
            }
        }
        categories = known
    }

    /// A place given as a POI: one that exists.
    static func checkPoi(_ id: UUID?, field: String, label: String, on transaction: any CatalogTransaction, into errors: inout [FieldError]) async throws {
        if let id, try await transaction.poi(id).map({ !$0.isDeleted }) != true {
            errors.append(FieldError(field: field, message: "\(label) must be an existing point of interest"))
        }
    }
}

extension CatalogRecordState: AuditedState {
    func auditText() -> String { CatalogEventCodec.text(self) }
}

extension CalendarEntryContent: StoredRecord {
    static var table: String { "calendar_entries" }
    static var noun: String { "calendar entry" }
    static var plural: String { "calendar entries" }

    /// The schedule's rules, then the categories and the place.
    static func validate(_ content: inout Self, id: UUID, on transaction: any CatalogTransaction) async throws -> [FieldError] {
        content.title = content.title.trimmingCharacters(in: .whitespacesAndNewlines)
        var errors = CalendarSchedule.problems(content) + CommandValidation.translationErrors(content, validate: CalendarSchedule.problems)
        try await checkCategories(&content.categories, on: transaction, into: &errors)
        try await checkPoi(content.placePoiId, field: "placePoiId", label: "Place", on: transaction, into: &errors)
        return errors
    }
}

extension PersonContent: StoredRecord {
    static var table: String { "people" }
    static var noun: String { "person" }
    static var plural: String { "people" }

    static func validate(_ content: inout Self, id: UUID, on transaction: any CatalogTransaction) async throws -> [FieldError] {
        content.name = content.name.trimmingCharacters(in: .whitespacesAndNewlines)
        content.email = content.email.map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 }
        content.interests = content.interests.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        var errors: [FieldError] = []
        CommandValidation.requireText(content.name, field: "name", label: "Name", max: 200, into: &errors)
        errors += titleErrors(content) + CommandValidation.translationErrors(content, validate: titleErrors)
        CommandValidation.limit(content.officeText ?? "", field: "officeText", label: "Office", max: 500, into: &errors)
        CommandValidation.limit(content.phone ?? "", field: "phone", label: "Phone", max: 50, into: &errors)
        if let email = content.email, !isEmail(email) {
            errors.append(FieldError(field: "email", message: "Email must be an address such as name@example.edu"))
        }
        if content.interests.count > 30
            || content.interests.contains(where: { CommandValidation.isLonger($0, than: 100) || CommandValidation.hasControlCharacters($0) }) {
            errors.append(FieldError(field: "interests", message: "Interests: at most 30, each at most 100 characters"))
        }
        for (field, url) in [("profileUrl", content.profileUrl), ("photoUrl", content.photoUrl)] {
            if let url, !url.isEmpty, !TextRules.isWebURL(url) {
                errors.append(FieldError(field: field, message: "\(field == "photoUrl" ? "Photo" : "Profile") link must be an http or https URL"))
            }
        }
        try await checkPoi(content.officePoiId, field: "officePoiId", label: "Office", on: transaction, into: &errors)
        return errors
    }

    /// The rules of their role and department, a translation's too.
    static func titleErrors(_ content: Self) -> [FieldError] {
        var errors: [FieldError] = []
        CommandValidation.limit(content.role, field: "role", label: "Role", max: 200, into: &errors)
        CommandValidation.limit(content.department, field: "department", label: "Department", max: 200, into: &errors)
        return errors
    }

    /// One @, something before it, a dotted domain after it, no spaces: the mistakes people make, not RFC 5322.
    static func isEmail(_ text: String) -> Bool {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard text.count <= 254, parts.count == 2, !parts[0].isEmpty, parts[1].contains("."), !parts[1].hasPrefix("."), !parts[1].hasSuffix("."),
              !text.contains(where: { $0.isWhitespace }), !CommandValidation.hasControlCharacters(text) else { return false }
        return true
    }
}

extension PageContent: StoredRecord {
    static var table: String { "pages" }
    static var noun: String { "page" }
    static var plural: String { "pages" }

    /// A slug no other live page has; the body at most 100 000 characters (a page, not a book).
    static func validate(_ content: inout Self, id: UUID, on transaction: any CatalogTransaction) async throws -> [FieldError] {
        content.slug = content.slug.trimmingCharacters(in: .whitespaces).lowercased()
        content.title = content.title.trimmingCharacters(in: .whitespacesAndNewlines)
        var errors: [FieldError] = []
        if !isSlug(content.slug) {
            errors.append(FieldError(field: "slug", message: "Address must be 1 to 100 lower-case letters, digits and hyphens, e.g. about or campus-history"))
        } else if try await transaction.liveRecords(PageContent.self).contains(where: { $0.id != id && $0.content.slug == content.slug }) {
            errors.append(FieldError(field: "slug", message: "Another page already has the address \(content.slug)"))
        }
        errors += textErrors(content) + CommandValidation.translationErrors(content, validate: textErrors)
        if !(-10_000...10_000).contains(content.order) {
            errors.append(FieldError(field: "order", message: "Order must be between -10000 and 10000"))
        }
        return errors
    }

    /// The rules of its texts, a translation's too.
    static func textErrors(_ content: Self) -> [FieldError] {
        var errors: [FieldError] = []
        CommandValidation.requireText(content.title, field: "title", label: "Title", max: 200, into: &errors)
        CommandValidation.limit(content.summary, field: "summary", label: "Summary", max: 1_000, into: &errors)
        if CommandValidation.isLonger(content.body, than: 100_000) {
            errors.append(FieldError(field: "body", message: TextRules.tooLong("Text", characters: 100_000, content.body)))
        } else if content.body.unicodeScalars.contains(where: { $0.value == 0 }) {
            errors.append(FieldError(field: "body", message: "Text must not contain NUL characters"))
        }
        return errors
    }
}

extension FeaturedContent: StoredRecord {
    static var table: String { "featured_items" }
    static var noun: String { "featured item" }
    static var plural: String { "featured items" }

    /// A target that exists, an http(s) image with its text.
    static func validate(_ content: inout Self, id: UUID, on transaction: any CatalogTransaction) async throws -> [FieldError] {
        content.title = content.title.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.flatMap { $0.isEmpty ? nil : $0 }
        content.imageAlt = content.imageAlt.trimmingCharacters(in: .whitespacesAndNewlines)
        var errors: [FieldError] = []
        let exists: Bool = switch content.targetKind {
        case .tour: try await transaction.tour(content.targetId).map { !$0.isDeleted } == true
        case .poi: try await transaction.poi(content.targetId).map { !$0.isDeleted } == true
        case .event: try await transaction.record(CalendarEntryContent.self, content.targetId).map { !$0.isDeleted } == true
        case .page: try await transaction.record(PageContent.self, content.targetId).map { !$0.isDeleted } == true
        }
        if !exists {
            errors.append(FieldError(field: "targetId", message: "Featured must be an existing \(content.targetKind == .poi ? "point of interest" : content.targetKind == .event ? "calendar event" : content.targetKind.rawValue)"))
        }
        errors += textErrors(content) + CommandValidation.translationErrors(content, validate: textErrors)
        if !TextRules.isWebURL(content.imageUrl) {
            errors.append(FieldError(field: "imageUrl", message: "Image must be an http or https URL"))
        }
        if !(-10_000...10_000).contains(content.order) {
            errors.append(FieldError(field: "order", message: "Order must be between -10000 and 10000"))
        }
        return errors
    }

    /// The rules of its title and image description, a translation's too.
    static func textErrors(_ content: Self) -> [FieldError] {
        var errors: [FieldError] = []
        CommandValidation.limit(content.title ?? "", field: "title", label: "Title", max: 200, into: &errors)
        CommandValidation.requireText(content.imageAlt, field: "imageAlt", label: "Image description", max: 300, into: &errors)
        return errors
    }
}

extension MediaContent: StoredRecord {
    static var table: String { "media_items" }
    static var noun: String { "media item" }
    static var plural: String { "media items" }

    /// Hashes as the store writes them, sizes that make sense, a title; the bytes themselves were checked at upload.
    static func validate(_ content: inout Self, id: UUID, on transaction: any CatalogTransaction) async throws -> [FieldError] {
        content.title = content.title.trimmingCharacters(in: .whitespacesAndNewlines)
        content.altText = content.altText.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.flatMap { $0.isEmpty ? nil : $0 }
        var errors: [FieldError] = []
        if !MediaHash.isValid(content.sha256) {
            errors.append(FieldError(field: "sha256", message: "sha256 must be 64 lower-case hex digits"))
        }
        if content.byteCount <= 0 {
            errors.append(FieldError(field: "byteCount", message: "byteCount must be more than 0"))
        }
        CommandValidation.limit(content.fileName, field: "fileName", label: "File name", max: 255, into: &errors)
        for (field, value) in [("width", content.width), ("height", content.height)] {
            if let value, !(1...100_000).contains(value) { errors.append(FieldError(field: field, message: "\(field) must be 1 to 100000 pixels")) }
        }
        content.transcript = content.transcript.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.flatMap { $0.isEmpty ? nil : $0 }
        errors += textErrors(content) + captionsErrors(content)
            + CommandValidation.translationErrors(content, validate: { textErrors($0) + captionsErrors($0) })
        // A language's captions are a file of their own, as the site's are: its hash and size go together.
        for (language, texts) in (content.translations ?? [:]).sorted(by: { $0.key < $1.key })
        where (texts["captions"] == nil) != (texts["captionsByteCount"] == nil) {
            errors.append(FieldError(field: "translations.\(language).captions", message: "\(language): captions and captionsByteCount go together"))
        }
        if MediaHash.isValid(content.sha256), let other = try await transaction.liveMedia(sha256s: [content.sha256])[content.sha256], other.id != id {
            errors.append(FieldError(field: "sha256", message: "This file is in the library already, as \u{201C}\(other.content.title)\u{201D}"))
        }
        for (index, variant) in content.variants.enumerated()
        where !MediaHash.isValid(variant.sha256) || variant.byteCount <= 0 || variant.width <= 0 || variant.height <= 0 {
            errors.append(FieldError(field: "variants[\(index)]", message: "a variant needs its hash, size in bytes and pixel size"))
        }
        return errors
    }

    /// The rules of its title, alternative text and transcript, a translation's too.
    static func textErrors(_ content: Self) -> [FieldError] {
        var errors: [FieldError] = []
        CommandValidation.requireText(content.title, field: "title", label: "Title", max: 200, into: &errors)
        CommandValidation.limit(content.altText ?? "", field: "altText", label: "Alternative text", max: 1_000, into: &errors)
        CommandValidation.limit(content.transcript ?? "", field: "transcript", label: "Transcript", max: MediaContent.maxTranscriptCharacters,
                                into: &errors)
        return errors
    }
    /// Its captions file, a translation's too: a WebVTT file's hash and size, for audio and video.
    static func captionsErrors(_ content: Self) -> [FieldError] {
        guard let captions = content.captions else { return [] }
        var errors: [FieldError] = []
        if (content.captionsByteCount ?? 0) <= 0 {
            errors.append(FieldError(field: "captionsByteCount", message: "captionsByteCount must be given, more than 0, with captions"))
        }
        if !MediaHash.isValid(captions) {
            errors.append(FieldError(field: "captions", message: "captions must be the sha256 of a WebVTT file: 64 lower-case hex digits"))
        } else if content.format.kind == .image {
            errors.append(FieldError(field: "captions", message: "Captions are for audio and video, not pictures"))
        }
        return errors
    }
}
