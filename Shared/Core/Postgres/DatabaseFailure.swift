import Logging
import PostgresNIO

/// The consumers' rule for a failure while storing a message (DESIGN.md "When a message fails"): either the
/// database or its connection is unwell and the same work will succeed later (retried with back-off), or the
/// database refused this message's content and would refuse it again on every retry (set aside in
/// `dead-letters` with the reason, so the messages behind it are still processed).
public enum DatabaseFailure: Sendable, Equatable {
    /// Connection lost, resources exhausted, serialization failure or deadlock, shutdown, a missing table
    /// or a permission (a deployment or program error that a fix and a restart cure): retry.
    case transient
    /// The server refused this content (a value too long for an index, out of range, a constraint): the
    /// reason is the server's message with its SQLSTATE.
    case content(reason: String)

    /// SQLSTATE classes that say nothing about the content: connection (08), invalid transaction state (25),
    /// authorisation (28), catalog/schema names (3D, 3F), transaction rollback (40: serialization, deadlock),
    /// syntax or access rule (42: the program's SQL or a migration not yet run), insufficient resources (53),
    /// object not in prerequisite state (55: lock not available), operator intervention (57: shutdown,
    /// cancel), system error (58) and internal error (XX).
    static let transientClasses: Set<Substring> = ["08", "25", "28", "3D", "3F", "40", "42", "53", "55", "57", "58", "XX"]

    /// Classifies `error`, looking through a transaction's wrapper. Anything without a server SQLSTATE
    /// (a closed connection, a timeout, a cancellation) is transient.
    public init(_ error: any Error) {
        let psql = (error as? PSQLError) ?? ((error as? PostgresTransactionError)?.closureError as? PSQLError)
        guard let psql, let state = psql.serverInfo?[.sqlState], state.count == 5,
              !Self.transientClasses.contains(state.prefix(2)) else {
            self = .transient
            return
        }
        self = .content(reason: "\(psql.serverInfo?[.message] ?? "refused by the database") (SQLSTATE \(state))")
    }

    /// The reason, when the failure is about the content.
    public var contentReason: String? {
        if case .content(let reason) = self { reason } else { nil }
    }
}

extension DatabaseFailure {
    /// Whether `error` came from Postgres or its connection and is transient. Errors from anywhere else (a
    /// projection's own checks) say nothing of the database: their message is the one to set aside.
    public static func isTransientDatabaseError(_ error: any Error) -> Bool {
        isDatabaseError(error) && DatabaseFailure(error) == .transient
    }

    /// Whether `error` came from Postgres or its connection, a transaction's wrapper looked through (its BEGIN, body,
    /// ROLLBACK or COMMIT).
    public static func isDatabaseError(_ error: any Error) -> Bool {
        guard let transaction = error as? PostgresTransactionError else { return error is PSQLError }
        return [transaction.beginError, transaction.closureError, transaction.rollbackError, transaction.commitError].contains { $0 is PSQLError }
    }

    /// Runs `body`, again after a back-off (0.2 s doubling to 5 s) for as long as it fails with a transient database
    /// error; any other error, or cancellation, ends it.
    public static func retryingTransient<T>(logger: Logger, _ what: String, _ body: () async throws -> T) async throws -> T {
        var attempt = 0
        while true {
            do {
                return try await body()
            } catch let error where isTransientDatabaseError(error) && !Task.isCancelled {
                attempt += 1
                logger.error("\(what) failed; retrying", metadata: ["error": "\(String(reflecting: error))", "attempt": "\(attempt)"])
                try await Task.sleep(for: .milliseconds(min(5_000, 100 << min(attempt, 6))))
            }
        }
    }
}
