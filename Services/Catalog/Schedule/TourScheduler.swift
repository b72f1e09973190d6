import Foundation
import Logging
import ServiceLifecycle
import Shared

/// Applies tours' due schedules (DESIGN.md, "Scheduled publishing"). The schedules live in Postgres and this
/// asks each `interval` which are due, so one that fell due while catalog was down is applied when it starts.
/// Each is applied as a `tour.apply-schedule` command through the handler, like any change (one transaction,
/// event, audit row); its command id comes from the tour and version, so two catalogs running this at once
/// apply it once.
struct TourScheduler: Service {
    let repository: any CatalogRepository
    let handler: CatalogCommandHandler
    let relay: OutboxRelay?
    var interval: Duration = .seconds(1)
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await applyDue()
                } catch {
                    if Task.isCancelled { return }
                    logger.warning("applying due tour schedules failed; trying again", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: interval)
            }
        }
    }

    /// Applies every schedule due at `now`; returns how many were applied (or recorded as failed).
    @discardableResult
    func applyDue(now: Date = Date()) async throws -> Int {
        let due = try await repository.toursDue(at: now)
        for tour in due {
            let command = CatalogCommand(commandId: ContentImportFile.stableId(0x5C, content: "schedule \(tour.id) \(tour.version)"),
                                         action: .applyTourSchedule, actor: "schedule (set by \(tour.by))", entityId: tour.id,
                                         expectedVersion: tour.version)
            let result = try await handler.handle(command, now: now)
            logger.info("applied a tour's schedule", metadata: ["tour": "\(tour.id)", "outcome": "\(result.outcome.rawValue)",
                                                                 "message": "\(result.message ?? "")"])
        }
        if !due.isEmpty { relay?.notify() }
        return due.count
    }
}
