import Foundation
import Shared

/// A staff member's role. Every route checks it on the server (Auth/Access.swift).
enum Role: String, Codable, Sendable, CaseIterable, Comparable {
    /// Manages users, editors, categories, imports and every tour.
    case owner
    /// Edits the tours assigned to them, and those tours' POIs.
    case editor
    /// Reads reports only (admissions).
    case viewer

    var title: String {
        switch self {
        case .owner: "Owner"
        case .editor: "Editor"
        case .viewer: "Viewer"
        }
    }

    static func < (lhs: Role, rhs: Role) -> Bool { allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)! }
}

struct AdminUser: Sendable, Equatable {
    var id: UUID
    var email: String
    var role: Role
}

/// A signed-in user and the CSRF token of their session.
struct AdminSession: Sendable {
    var user: AdminUser
    var csrfToken: String
}

/// Users, their password hashes and sessions.
protocol UserRepository: Sendable {
    func users() async throws -> [AdminUser]
    func user(id: UUID) async throws -> AdminUser?
    /// The user and their password hash, by email (compared without regard to case).
    func credentials(email: String) async throws -> (user: AdminUser, passwordHash: String)?
    /// Creates a user; false when the email is taken.
    func create(_ user: AdminUser, passwordHash: String) async throws -> Bool
    /// Creates the user unless one with that email exists; returns whether it did.
    func createIfAbsent(_ user: AdminUser, passwordHash: String) async throws -> Bool
    func setRole(_ role: Role, of id: UUID) async throws
    /// Sets the password and ends the user's sessions, so an old password's sessions do not live on.
    func setPasswordHash(_ hash: String, of id: UUID) async throws
    func delete(id: UUID) async throws
    func ownerCount() async throws -> Int
}

protocol SessionRepository: Sendable {
    func createSession(tokenHash: String, userId: UUID, csrfToken: String, expiresAt: Date) async throws
    /// The live session with this token hash.
    func session(tokenHash: String, now: Date) async throws -> AdminSession?
    func deleteSession(tokenHash: String) async throws
    func deleteExpiredSessions(now: Date) async throws
}

/// Which editors may edit which tours.
protocol TourEditorRepository: Sendable {
    func editors(of tourId: UUID) async throws -> [AdminUser]
    func tours(editedBy userId: UUID) async throws -> Set<UUID>
    func assign(userId: UUID, to tourId: UUID) async throws
    func unassign(userId: UUID, from tourId: UUID) async throws
    func removeTour(_ tourId: UUID) async throws
}

/// Failed log-in counts, shared by every admin instance.
protocol LoginFailureRepository: Sendable {
    func failures(key: String) async throws -> LoginFailures?
    /// Reads the counts of `keys` (absent: none yet) and stores the changes `update` returns (nil: delete), holding
    /// the keys' rows locked in between, so attempts at the same keys are counted one after another.
    func updateFailures<Result: Sendable>(keys: [String],
                                          _ update: @escaping @Sendable ([String: LoginFailures]) -> (changes: [String: LoginFailures?], result: Result))
        async throws -> Result
    /// Forgets counts that are quiet since `before` and hold no wait.
    func deleteQuietFailures(before: Date, now: Date) async throws
}

struct LoginFailures: Sendable, Equatable {
    var count: Int
    var lastFailureAt: Date
    var lockedUntil: Date?
}

/// A bulk import as the import page shows it.
struct ImportJob: Sendable {
    enum Phase: String, Sendable {
        case reading, sending, applying, done, failed
    }

    var id: UUID
    var userId: UUID
    var fileName: String
    var skipBadRows: Bool
    var phase: Phase
    var totalRows: Int
    var message: String?
    var report: [CatalogBatchRowResult]
    var createdAt: Date
}

/// The claim of the admin process that runs an import (issue 44): renewed while it runs, and once expired
/// any admin may fail the import. Times are Postgres's clock, so replicas' clocks need not agree.
struct ImportLease: Sendable {
    /// This process: its host name and a random id made at start (two processes on one host differ).
    var owner: String
    /// How long an import stays claimed without a renewal (`ADMIN_IMPORT_LEASE_SECONDS`).
    var duration: Duration
    /// How often this process renews its claims and fails expired ones (`ADMIN_IMPORT_HEARTBEAT_SECONDS`).
    var heartbeat: Duration

    /// `host/uuid`: the host (the pod's name in Kubernetes) tells operators which replica held an import.
    static func ownerId() -> String {
        // gethostname, not ProcessInfo.hostName, which may ask DNS.
        var name = [CChar](repeating: 0, count: 256)
        let host = gethostname(&name, name.count - 1) == 0 ? String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        let id = UUID.random().uuidString.lowercased()
        return host.isEmpty ? id : "\(host)/\(id)"
    }
}

protocol ImportJobRepository: Sendable {
    /// Creates the job claimed by `owner` for `lease` from now.
    func createJob(_ job: ImportJob, owner: String, lease: Duration) async throws
    func updateJob(id: UUID, phase: ImportJob.Phase, message: String?, report: [CatalogBatchRowResult]?) async throws
    func job(id: UUID) async throws -> ImportJob?
    func recentJobs(limit: Int) async throws -> [ImportJob]
    /// Extends the claim on every unfinished import `owner` holds to `lease` from now; returns how many.
    @discardableResult
    func renewLeases(owner: String, lease: Duration) async throws -> Int
    /// Fails the unfinished imports whose lease has expired (their admin stopped, or lost Postgres), with
    /// `notSent` when the import had not yet been sent to catalog and `maybeApplied` when it had; returns their ids.
    @discardableResult
    func failExpiredJobs(notSent: String, maybeApplied: String) async throws -> [UUID]
}

/// Everything the admin keeps in its own schema.
typealias AdminRepository = UserRepository & SessionRepository & TourEditorRepository & LoginFailureRepository & ImportJobRepository
