import Foundation
import Shared

/// A transaction-scoped advisory lock a command takes before it reads anything (DESIGN.md "Catalog at any
/// number of replicas"). Catalogs handle `catalog.commands` side by side, one per partition they own, so a
/// check that reads other rows (a category path is free, a file is new to the library, a page address is
/// free, a command id is new) holds only while nothing that could change its answer runs: these locks make
/// those commands wait for each other, and no others.
struct CommandLock: Sendable, Hashable {
    /// What is locked, as Postgres hashes it (`hashtextextended`).
    let key: String
    /// Shared holders do not wait for each other, only for an exclusive one.
    let shared: Bool

    /// The locks `command` takes, always in the same order (its id, the category tree, what its content claims),
    /// so two commands never wait for each other in a circle.
    static func locks(for command: CatalogCommand) -> [CommandLock] {
        // The same command handled by two catalogs at a hand-over: the second waits and finds it recorded.
        var locks = [CommandLock(key: "itour.catalog.command:\(command.commandId.uuidString.lowercased())", shared: false)]
        switch command.action {
        case .snapshot, .history, .recentlyDeleted:
            return locks
        case .createCategory, .renameCategory, .deleteCategory, .importBatch:
            // They change paths (an import may make categories) that the others read.
            locks.append(CommandLock(key: categoryTree, shared: false))
        default:
            // A POI's or record's categories are looked up by path: no rename or delete may pass in between.
            locks.append(CommandLock(key: categoryTree, shared: true))
        }
        if let sha256 = command.media?.sha256, command.action == .createMedia || command.action == .updateMedia {
            locks.append(CommandLock(key: "itour.catalog.media:\(sha256)", shared: false))
        }
        if let slug = command.page?.slug, command.action == .createPage || command.action == .updatePage {
            locks.append(CommandLock(key: "itour.catalog.page:\(slug.trimmingCharacters(in: .whitespaces).lowercased())", shared: false))
        }
        return locks
    }

    static let categoryTree = "itour.catalog.categories"
}
