import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import Shared

/// Bulk import (owners): the upload form, and a page per import that shows its progress and, at the end,
/// its per-row report. The file is read here; its rows go to catalog as one `catalog.import` command.
struct ImportController {
    let jobs: any ImportJobRepository
    let editors: any TourEditorRepository
    let runner: ImportRunner
    /// Names the rows' records in the report.
    let projection: AdminCatalogProjection
    /// `SITE_TIME_ZONE`, for when each import was started.
    let clock: SiteClock

    /// The routes that take uploads (`multipart/form-data`); CSRFMiddleware reads multipart bodies nowhere else.
    static let uploadPaths: [String: Int] = ["/import": 8 << 20]

    func register(on router: RouterGroup<AdminRequestContext>) {
        router.get("/import", use: form)
        router.get("/import/sample.csv", use: sample)
        router.post("/import", use: start)
        router.get("/import/:id", use: show)
    }

    func formPage(context: AdminRequestContext, error: String? = nil, status: HTTPResponse.Status = .ok) async throws -> Response {
        AdminPage(title: "Import", context: context, breadcrumbs: [("Import", nil)],
                  body: ImportPages.form(recent: try await jobs.recentJobs(limit: 10), error: error, csrf: context.csrfToken, clock: clock), status: status).response()
    }

    @Sendable func form(_ request: Request, context: AdminRequestContext) async throws -> Response {
        try await context.access(editors).requireOwner("import content")
        return try await formPage(context: context)
    }

    /// A file to start from: it imports as it is (a draft tour of two stops), and shows the columns in use.
    @Sendable func sample(_ request: Request, context: AdminRequestContext) async throws -> Response {
        try await context.access(editors).requireOwner("import content")
        return Response(status: .ok, headers: [.contentType: "text/csv; charset=utf-8", .contentDisposition: "attachment; filename=\"itour-sample.csv\""],
                        body: .init(byteBuffer: ByteBuffer(string: ImportPages.sampleCSV)))
    }

    @Sendable func start(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let access = try await context.access(editors)
        try access.requireOwner("import content")
        let skipBadRows = context.form["skipBadRows"] == "1"
        let data: Data
        let fileName: String
        let format: ContentImportFile.Format
        if let file = context.form.files["file"], !file.data.isEmpty {
            guard let byName = ContentImportFile.Format(fileName: file.fileName) else {
                return try await formPage(context: context, error: "The file's name must end in .json or .csv.", status: .unprocessableContent)
            }
            (data, fileName, format) = (Data(file.data), file.fileName, byName)
        } else if !context.form["content"].trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            guard let chosen = ContentImportFile.Format(rawValue: context.form["format"]) else {
                return try await formPage(context: context, error: "Choose the format of the pasted content.", status: .unprocessableContent)
            }
            (data, fileName, format) = (Data(context.form["content"].utf8), "pasted \(chosen.rawValue.uppercased())", chosen)
        } else {
            return try await formPage(context: context, error: "Choose a file, or paste its content.", status: .unprocessableContent)
        }
        let plan: ContentImportFile.Plan
        do {
            plan = try ContentImportFile.plan(data, format: format, actor: access.user.email)
        } catch {
            return try await formPage(context: context, error: "\(fileName): \(error.message)", status: .unprocessableContent)
        }
        let job = try await runner.start(plan, fileName: fileName, skipBadRows: skipBadRows, by: access.user, jobs: jobs,
                                         requestId: RequestIdMiddleware.id(of: context))
        return .redirect(to: "/import/\(job.uuidString.lowercased())")
    }

    @Sendable func show(_ request: Request, context: AdminRequestContext) async throws -> Response {
        try await context.access(editors).requireOwner("import content")
        guard let job = try await jobs.job(id: try context.id("id")) else { throw AdminError.notFound("There is no such import.") }
        let running = job.phase != .done && job.phase != .failed
        return AdminPage(title: "Import", context: context, breadcrumbs: [("Import", "/import"), (job.fileName, nil)],
                         body: ImportPages.job(job, names: projection.content.name(of:)), refreshSeconds: running ? 1 : nil).response()
    }
}

/// Runs imports one at a time in the background, recording each phase so the import's page can show it.
/// Its imports, queued ones too, are claimed by `lease.owner`; ImportLeaseKeeper renews the claims.
final class ImportRunner: Service, Sendable {
    struct Work: Sendable {
        let job: ImportJob
        let plan: ContentImportFile.Plan
        let actor: String
        let requestId: String?
    }

    let lease: ImportLease
    private let jobs: any ImportJobRepository
    private let writer: any CatalogWriter
    private let logger: Logger
    private let queue: AsyncStream<Work>
    private let input: AsyncStream<Work>.Continuation

    init(jobs: any ImportJobRepository, writer: any CatalogWriter, lease: ImportLease, logger: Logger) {
        self.jobs = jobs
        self.writer = writer
        self.lease = lease
        self.logger = logger
        (queue, input) = AsyncStream.makeStream(of: Work.self)
    }

    func enqueue(_ work: Work) { input.yield(work) }

    /// Records a new import of `plan`, claimed by this process, and queues it; its page is `/import/{id}`.
    func start(_ plan: ContentImportFile.Plan, fileName: String, skipBadRows: Bool, by user: AdminUser, jobs: any ImportJobRepository,
               requestId: String?) async throws -> UUID {
        let job = ImportJob(id: UUID.random(), userId: user.id, fileName: fileName, skipBadRows: skipBadRows, phase: .reading,
                            totalRows: plan.fileRows, message: nil, report: plan.unreadable, createdAt: Date())
        try await jobs.createJob(job, owner: lease.owner, lease: lease.duration)
        enqueue(Work(job: job, plan: plan, actor: user.email, requestId: requestId))
        return job.id
    }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            for await work in self.queue {
                await self.process(work)
            }
        }
    }

    func process(_ work: Work) async {
        let job = work.job
        let plan = work.plan
        do {
            if !plan.unreadable.isEmpty && !job.skipBadRows {
                let notSent = plan.rows.map { CatalogBatchRowResult(label: $0.label, outcome: .notApplied) }
                try await jobs.updateJob(id: job.id, phase: .failed,
                                         message: "Nothing imported: \(counted(plan.unreadable.count, "row")) cannot be read. Fix them, or import again with “Skip bad rows”.",
                                         report: plan.unreadable + notSent)
                return
            }
            guard !plan.rows.isEmpty else {
                try await jobs.updateJob(id: job.id, phase: .failed, message: "Nothing to import: no row could be read.", report: plan.unreadable)
                return
            }
            try await jobs.updateJob(id: job.id, phase: .sending, message: "Sending \(counted(plan.rows.count, "row")) to catalog…", report: nil)
            // One command, one transaction for every row; rows that stand alone (bad ones skipped) and do not fit one message
            // go as several, in the order `importCommands` gives.
            let single = plan.command(actor: work.actor, skipInvalidRows: job.skipBadRows)
            let fits = plan.rows.count <= ContentImportFile.maximumRows
                && plan.rows.reduce(1_024) { $0 + CatalogEventCodec.byteCount(of: $1) } <= ContentImportFile.maximumCommandBytes
            let commands = fits || !job.skipBadRows ? [single] : plan.commands(actor: work.actor, skipInvalidRows: true).flatMap { $0 }
            var rows: [CatalogBatchRowResult] = [], last: CatalogCommandResult?
            for (index, command) in commands.enumerated() {
                let part = commands.count == 1 ? "" : " (part \(index + 1) of \(commands.count))"
                try await jobs.updateJob(id: job.id, phase: .applying, message: "Catalog is checking and applying \(counted(plan.rows.count, "row"))\(part)…",
                                         report: nil)
                let result = try await writer.execute(command, requestId: work.requestId, timeout: .seconds(120))
                rows += result.rows ?? []
                last = result
                if result.outcome != .applied { break }
            }
            let report = plan.unreadable + rows
            let applied = last?.outcome == .applied
            let message = commands.count == 1 ? last?.message ?? last?.outcome.rawValue
                : "imported \(rows.filter { $0.outcome == .applied }.count) of \(plan.rows.count) rows in \(commands.count) parts"
            try await jobs.updateJob(id: job.id, phase: applied ? .done : .failed, message: message, report: report)
        } catch let error as CatalogWriteError {
            try? await jobs.updateJob(id: job.id, phase: .failed, message: error.description, report: nil)
        } catch {
            logger.error("import failed", metadata: ["job": "\(job.id)", "error": "\(error)"])
            try? await jobs.updateJob(id: job.id, phase: .failed, message: "The import failed: \(error)", report: nil)
        }
    }
}

/// Imports across admin replicas (issue 44). Every `lease.heartbeat` this renews the claim of each unfinished
/// import this process holds, then fails the unfinished imports whose claim has expired: their admin stopped
/// (or lost Postgres) mid-import, and nothing will finish them. So an admin that starts fails only the imports
/// of admins that are gone, never those another replica is running.
struct ImportLeaseKeeper: Service {
    let jobs: any ImportJobRepository
    let lease: ImportLease
    let logger: Logger

    /// What the import's page says. Imports are not resumed: the file is read, and the command kept, in the
    /// memory of the admin that stopped. Catalog applies an import's command in one transaction.
    static let notSent = "Interrupted: the admin server running this import stopped before sending it to catalog, so nothing was "
        + "imported. Imports are not resumed; import the file again."
    static let maybeApplied = "Interrupted: the admin server running this import stopped while catalog was applying it, and imports "
        + "are not resumed. Catalog applies an import whole or not at all, so check the content before importing again "
        + "(importing the same file again applies nothing twice)."

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await beat()
                } catch {
                    if Task.isCancelled { return }
                    logger.warning("renewing import leases failed; trying again", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: lease.heartbeat)
            }
        }
    }

    /// Renews first, so that after a stall this process's own imports are claimed again before it sweeps.
    func beat() async throws {
        try await jobs.renewLeases(owner: lease.owner, lease: lease.duration)
        try await sweep()
    }

    func sweep() async throws {
        let failed = try await jobs.failExpiredJobs(notSent: Self.notSent, maybeApplied: Self.maybeApplied)
        if !failed.isEmpty {
            logger.warning("failed imports whose admin stopped before finishing them (lease expired)",
                           metadata: ["jobs": "\(failed.map { $0.uuidString.lowercased() })"])
        }
    }
}
