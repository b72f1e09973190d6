import Foundation
import Shared

/// The category tree's commands. A POI names its category by path ("Shop/Fashion"), so a rename rewrites
/// the paths of the category's descendants and of every POI under it, in the same transaction, each with
/// a new version and event: consumers never see a POI in a category that no longer exists. A rename's
/// translations replace the category's, as a tour's content does; paths stay in the site language.
extension Work {
    mutating func createCategory() async throws -> CatalogCommandResult {
        guard let content = command.category else { return missing("category", "category content is required") }
        if let path = content.path { return try await ensureCategoryPath(path, translations: content.translations) }
        let errors = CommandValidation.validate(content)
        guard errors.isEmpty else { return rejected(errors) }
        let id = command.entityId ?? UUID.random()
        if try await transaction.category(id) != nil { return missing("entityId", "a category with id \(id) already exists") }
        var parentPath: String? = nil
        if let parentId = content.parentId {
            guard let parent = try await transaction.category(parentId), !parent.isDeleted else {
                return missing("parentId", "Parent category does not exist")
            }
            parentPath = parent.state.path
        }
        let name = content.name.trimmingCharacters(in: .whitespaces)
        let path = parentPath.map { "\($0)/\(name)" } ?? name
        if let existing = try await transaction.category(path: path) {
            return missing("name", "There is already a category \(existing.path); choose another name")
        }
        let category = CategoryState(id: id, version: 1, name: name, parentId: content.parentId, path: path, updatedAt: now,
                                     translations: content.translations)
        return try await commit(category, before: nil)
    }

    /// Creates what is missing along `path` (an import's way to name categories); an existing path is applied as is.
    /// `translations` name the leaf when this creates it (an existing category keeps its own).
    mutating func ensureCategoryPath(_ path: String, translations: Translations? = nil) async throws -> CatalogCommandResult {
        let names = path.split(separator: "/", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        var errors: [FieldError] = []
        for name in names { errors += CommandValidation.validate(CategoryContent(name: name)) }
        guard errors.isEmpty, !names.isEmpty else {
            return missing("path", "Category path must be names separated by \"/\", e.g. Shop/Fashion")
        }
        let translationErrors = CommandValidation.translationErrors(CategoryContent(name: names[names.count - 1], translations: translations),
                                                                    validate: CommandValidation.validate)
        guard translationErrors.isEmpty else { return rejected(translationErrors) }
        var parent: CategoryState? = nil
        for (index, name) in names.enumerated() {
            let prefix = names[...index].joined(separator: "/")
            if let existing = try await transaction.category(path: prefix) {
                parent = existing
                continue
            }
            let isLeaf = index == names.count - 1
            let category = CategoryState(id: isLeaf ? command.entityId ?? UUID.random() : UUID.random(), version: 1, name: name, parentId: parent?.id,
                                         path: parent.map { "\($0.path)/\(name)" } ?? name, updatedAt: now, translations: isLeaf ? translations : nil)
            _ = try await commit(category, before: nil)
            parent = category
        }
        return CatalogCommandResult(commandId: command.commandId, action: command.action, outcome: .applied,
                                    entityId: parent?.id, version: parent?.version, category: parent)
    }

    mutating func renameCategory() async throws -> CatalogCommandResult {
        guard let id = command.entityId else { return missing("entityId", "entityId is required") }
        guard let content = command.category else { return missing("category", "category content is required") }
        guard let stored = try await transaction.category(id), !stored.isDeleted else {
            return missing("entityId", "category \(id) does not exist")
        }
        if let conflict = conflict(current: stored.state.version, category: stored.state) { return conflict }
        let errors = CommandValidation.validate(content)
        guard errors.isEmpty else { return rejected(errors) }
        let old = stored.state
        let name = content.name.trimmingCharacters(in: .whitespaces)
        let newPath = old.path.split(separator: "/").dropLast().map(String.init).appending(name).joined(separator: "/")
        if newPath.lowercased() != old.path.lowercased(), let existing = try await transaction.category(path: newPath) {
            return missing("name", "There is already a category \(existing.path); choose another name")
        }
        var renamed = old
        renamed.name = name
        renamed.path = newPath
        renamed.translations = content.translations
        renamed.version += 1
        renamed.updatedAt = now
        let result = try await commit(renamed, before: old)
        // Only its translations changed: no path moves.
        guard newPath != old.path else { return result }
        for var descendant in try await transaction.descendantCategories(of: old.path) {
            let before = descendant
            descendant.path = newPath + descendant.path.dropFirst(old.path.count)
            descendant.version += 1
            descendant.updatedAt = now
            _ = try await commit(descendant, before: before)
        }
        for var poi in try await transaction.poisInCategory(old.path) {
            let before = poi
            poi.content.renameCategories(from: old.path, to: newPath)
            poi.draft?.renameCategories(from: old.path, to: newPath)
            poi.version += 1
            poi.updatedAt = now
            _ = try await commit(poi, before: before)
        }
        return result
    }

    /// Only an unused leaf can go: deleting a category that POIs or subcategories use would leave them pointing nowhere.
    mutating func deleteCategory() async throws -> CatalogCommandResult {
        let stored = try await categoryForChange()
        let id = stored.state.id
        let children = try await transaction.descendantCategories(of: stored.state.path)
        if !children.isEmpty {
            return missing("entityId", "\(stored.state.path) has \(children.count) subcategories; delete or rename them first")
        }
        let pois = try await transaction.poisInCategory(stored.state.path)
        if !pois.isEmpty {
            return missing("entityId", "\(pois.count == 1 ? "1 POI is" : "\(pois.count) POIs are") in \(stored.state.path); give \(pois.count == 1 ? "it" : "them") another category first")
        }
        var category = stored.state
        category.version += 1
        category.updatedAt = now
        try await transaction.saveCategory(category, deleted: true)
        try publish(CategoryEvent(kind: .deleted, entityId: id, version: category.version))
        return try await applied(id, version: category.version, before: stored.state, after: nil as CategoryState?)
    }

    mutating func commit(_ category: CategoryState, before: CategoryState?) async throws -> CatalogCommandResult {
        try await transaction.saveCategory(category, deleted: false)
        try publish(.changed(category))
        var result = try await applied(category.id, version: category.version, before: before, after: category)
        result.category = category
        return result
    }
}

extension Array {
    fileprivate func appending(_ element: Element) -> [Element] { self + [element] }
}

extension PoiContent {
    /// Each of its categories at `old` or under it moved to `new` (a renamed category).
    mutating func renameCategories(from old: String, to new: String) {
        categories = categories.map { path in
            path == old || path.hasPrefix(old + "/") ? new + path.dropFirst(old.count) : path
        }
    }
}
