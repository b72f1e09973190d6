import Foundation
@testable import Shared
import Testing

/// Issue 43: a weekly rule with no valid day code.
@Suite("Weekly rule without days")
struct WeeklyRuleTests {
    /// A weekly rule with no valid day code (validation refuses it; one read from `catalog.events` may carry it) has no
    /// occurrence: before, its expansion counted weeks forever.
    @Test("a weekly rule with no valid day code is refused by validation and has no occurrences, at once")
    func weeklyRuleWithoutDays() async throws {
        for days in [[], ["XX"], ["mo"]] as [[String]] {
            let entry = CalendarEntryContent(title: "Never", startsAt: "2027-01-04T10:00", endsAt: "2027-01-04T11:00", timeZone: "UTC",
                                             recurrence: CalendarRecurrence(frequency: .weekly, byDay: days))
            #expect(CalendarSchedule.problems(entry).contains { $0.field == "recurrence" }, "\(days)")
            let schedule = try #require(CalendarSchedule(entry))
            // Run apart: a loop that never ends must fail the test, not hang it.
            let finished = await withCheckedContinuation { (done: CheckedContinuation<Int?, Never>) in
                let once = OnceFlag()
                Thread.detachNewThread {
                    let count = schedule.occurrences(overlapping: .distantPast, .distantFuture).count
                    if once.claim() { done.resume(returning: count) }
                }
                DispatchQueue.global().asyncAfter(deadline: .now() + 5) { if once.claim() { done.resume(returning: nil) } }
            }
            #expect(finished == 0, "\(days): \(String(describing: finished))")
        }
    }
}

/// True for the first caller only.
final class OnceFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var claimed = false
    func claim() -> Bool { lock.withLock { defer { claimed = true }; return !claimed } }
}
