import Foundation

// The category tree (Shop → Fashion, reference/003) and bulk import batches: additions to the catalog's
// messages (CatalogMessages.swift). A POI's `category` is a path through this tree, e.g. "Shop/Fashion";
// catalog refuses a path that is not in the tree and rewrites POIs' paths when a category is renamed.

/// The editable fields of a category.
public struct CategoryContent: Codable, Sendable, Equatable {
    public var name: String
    /// The parent category; nil for a top-level one. Only `category.create` reads it.
    public var parentId: UUID?
    /// For `category.create` from an import, which knows paths, not ids: creates every category along
    /// the path ("Shop/Fashion") that does not exist yet and keeps those that do; `name` and `parentId`
    /// are then ignored.
    public var path: String?
    /// The name in other languages (DESIGN.md "Languages"): replaces the category's translations as a whole, as a
    /// tour's content does. Paths stay in the site language: they are what POIs and filters name.
    public var translations: Translations?

    public init(name: String, parentId: UUID? = nil, path: String? = nil, translations: Translations? = nil) {
        self.name = name
        self.parentId = parentId
        self.path = path
        self.translations = Self.tidy(translations)
    }

    private enum CodingKeys: String, CodingKey { case name, parentId, path, translations }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(name: try c.decode(String.self, forKey: .name), parentId: try c.decodeIfPresent(UUID.self, forKey: .parentId),
                  path: try c.decodeIfPresent(String.self, forKey: .path), translations: try c.decodeIfPresent(Translations.self, forKey: .translations))
    }

    /// Ensures the categories along `path` exist (for imports).
    public static func ensuring(path: String) -> CategoryContent {
        CategoryContent(name: path.split(separator: "/").last.map(String.init) ?? path, path: path)
    }
}

/// A category's full state after a change.
public struct CategoryState: Codable, Sendable, Equatable {
    public var id: UUID
    public var version: Int
    public var name: String
    public var parentId: UUID?
    /// Names from the root down, joined with "/": what POIs carry as their `category`.
    public var path: String
    public var updatedAt: Date
    /// Its name in other languages; absent from events of before issue 45.
    public var translations: Translations?

    public init(id: UUID, version: Int, name: String, parentId: UUID?, path: String, updatedAt: Date, translations: Translations? = nil) {
        self.id = id
        self.version = version
        self.name = name
        self.parentId = parentId
        self.path = path
        self.updatedAt = updatedAt
        self.translations = Self.tidy(translations)
    }

    private enum CodingKeys: String, CodingKey { case id, version, name, parentId, path, updatedAt, translations }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(id: try c.decode(UUID.self, forKey: .id), version: try c.decode(Int.self, forKey: .version), name: try c.decode(String.self, forKey: .name),
                  parentId: try c.decodeIfPresent(UUID.self, forKey: .parentId), path: try c.decode(String.self, forKey: .path),
                  updatedAt: try c.decode(Date.self, forKey: .updatedAt), translations: try c.decodeIfPresent(Translations.self, forKey: .translations))
    }
}

/// Payload of a category event on `catalog.events` (envelope types `category.changed`, `category.deleted`).
/// A separate type from `CatalogEvent`, so consumers that only know tours and POIs are untouched:
/// `CatalogEventFeed` hands these to its optional category handler and skips them otherwise.
public struct CategoryEvent: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable {
        case changed = "category.changed"
        case deleted = "category.deleted"
    }

    public var kind: Kind
    public var entityId: UUID
    public var version: Int
    public var category: CategoryState?
    public var snapshotId: UUID?

    public init(kind: Kind, entityId: UUID, version: Int, category: CategoryState? = nil, snapshotId: UUID? = nil) {
        self.kind = kind
        self.entityId = entityId
        self.version = version
        self.category = category
        self.snapshotId = snapshotId
    }

    public static func changed(_ category: CategoryState, snapshotId: UUID? = nil) -> CategoryEvent {
        CategoryEvent(kind: .changed, entityId: category.id, version: category.version, category: category, snapshotId: snapshotId)
    }

    /// Envelope types that carry a `CategoryEvent`.
    public static func isCategoryEvent(type: String) -> Bool { type.hasPrefix("category.") }
}

/// One row of a bulk import: the commands it takes (a tour is created, given its stops, then its status),
/// which stand or fall together.
public struct CatalogBatchRow: Codable, Sendable, Equatable {
    /// Where the row came from, e.g. "line 7" or "pois[3]", for the report.
    public var label: String
    public var commands: [CatalogCommand]

    public init(label: String, commands: [CatalogCommand]) {
        self.label = label
        self.commands = commands
    }
}

/// What became of one row of a bulk import.
public struct CatalogBatchRowResult: Codable, Sendable, Equatable {
    public enum Outcome: String, Codable, Sendable {
        /// Every command of the row applied (or had been applied before, by the same command ids).
        case applied
        /// A command of the row was rejected or conflicted; with `skipInvalidRows` the row was skipped.
        case failed
        /// The row was fine, but another row failed and the import was all or nothing.
        case notApplied = "not-applied"
    }

    public var label: String
    public var outcome: Outcome
    public var errors: [FieldError]
    public var message: String?
    /// The ids of the entities the row created or changed.
    public var entityIds: [UUID]

    public init(label: String, outcome: Outcome, errors: [FieldError] = [], message: String? = nil, entityIds: [UUID] = []) {
        self.label = label
        self.outcome = outcome
        self.errors = errors
        self.message = message
        self.entityIds = entityIds
    }
}

extension CategoryState {
    /// Each path and every path above it ("Eat/Cafés" → "Eat" and "Eat/Cafés"), once each: the categories a POI
    /// with these paths counts for.
    public static func pathsWithAncestors(_ paths: [String]) -> Set<String> {
        var all = Set<String>()
        for path in paths {
            var prefix = ""
            for part in path.split(separator: "/") {
                prefix += prefix.isEmpty ? String(part) : "/" + part
                all.insert(prefix)
            }
        }
        return all
    }
}
