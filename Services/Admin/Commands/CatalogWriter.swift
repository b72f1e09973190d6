import Foundation
import Logging
import Shared

/// How the admin changes content: only through catalog commands. `execute` sends a command and waits
/// for its result (with a timeout), and applies an applied result to the projection at once.
protocol CatalogWriter: Sendable {
    /// `timeout` nil: the configured one (ADMIN_COMMAND_TIMEOUT_SECONDS).
    func execute(_ command: CatalogCommand, requestId: String?, timeout: Duration?) async throws(CatalogWriteError) -> CatalogCommandResult
}

extension CatalogWriter {
    func execute(_ command: CatalogCommand, requestId: String?) async throws(CatalogWriteError) -> CatalogCommandResult {
        try await execute(command, requestId: requestId, timeout: nil)
    }
}

/// Why a command has no result to show, in words for the person who pressed Save.
enum CatalogWriteError: Error, CustomStringConvertible {
    /// The broker did not take the command: nothing will happen.
    case notSent(String)
    /// Sent, but catalog did not answer in time: it will be applied when catalog is back.
    case noAnswer(Duration)

    var description: String {
        switch self {
        case .notSent(let reason):
            "Your change could not be sent to the catalog service (\(reason)). Nothing was saved; try again in a moment."
        case .noAnswer(let timeout):
            "The catalog service did not answer within \(timeout.components.seconds) seconds; it may be down. Your change was sent and will be applied when catalog is back: check this page again in a minute before repeating it."
        }
    }
}

struct LiveCatalogWriter: CatalogWriter {
    let client: CatalogCommandClient
    let projection: AdminCatalogProjection
    let timeout: Duration
    let logger: Logger

    func execute(_ command: CatalogCommand, requestId: String?, timeout: Duration?) async throws(CatalogWriteError) -> CatalogCommandResult {
        let timeout = timeout ?? self.timeout
        do {
            try await client.send(command, requestId: requestId)
        } catch {
            logger.error("command not sent", metadata: ["commandId": "\(command.commandId)", "error": "\(error)"])
            throw .notSent("\(error)")
        }
        do {
            let result = try await client.result(of: command.commandId, timeout: timeout)
            projection.apply(result)
            projection.authors.record(result, actor: command.actor)
            return result
        } catch {
            logger.warning("no answer from catalog", metadata: ["commandId": "\(command.commandId)", "error": "\(error)"])
            throw .noAnswer(timeout)
        }
    }
}
