import Foundation
import Shared

/// The feed's per-event CPU outside HTTP and the broker: a phone's batch read, each event checked and
/// written as its `tracking.events` message, as `POST /v1/events` does (EventIngest.prepare); and reading,
/// checking and writing alone.
/// Foundation's JSONSerialization reading the same bodies and writing each event back is the baseline,
/// measured in the same run.
enum TrackingCodecBench {
    static func run(bodiesPath: String, passes: Int) throws {
        let bodies = try String(contentsOfFile: bodiesPath, encoding: .utf8).split(separator: "\n").map { Array($0.utf8) }
        guard !bodies.isEmpty, passes > 0 else { throw BenchError("no bodies in \(bodiesPath), or passes < 1") }
        let read = bodies.map { body in (try? body.withUnsafeBytes { try TrackingCodec.readBatch($0) }) ?? [] }
        let events = read.flatMap { $0.compactMap { try? $0.get() } }
        guard let latest = events.map(\.occurredAt).max() else { throw BenchError("no events in \(bodiesPath)") }
        // Checked as of just after the latest event, so an old bodies file measures the same work.
        let now = latest.addingTimeInterval(1)
        print("tracking codec: \(bodies.count) bodies, \(events.count) events, median of \(passes) passes")

        let stages: [(name: String, pass: () -> Int)] = [
            ("read + check + write (POST /v1/events)", {
                // As EventIngest does: the batch's keys and messages in one buffer, each message a slice of it.
                var bytes = 0
                for body in bodies {
                    let batch = (try? body.withUnsafeBytes { try TrackingCodec.readBatch($0) }) ?? []
                    var buffer: [UInt8] = []
                    buffer.reserveCapacity(batch.count * 640 + 2_048)
                    var spans: [(key: Range<Int>, value: Range<Int>)] = []
                    spans.reserveCapacity(batch.count)
                    for case .success(let event) in batch where event.validationError(now: now) == nil {
                        let keyStart = buffer.count
                        buffer.append(contentsOf: event.deviceId.utf8)
                        let valueStart = buffer.count
                        TrackingCodec.appendMessage(event, to: &buffer)
                        spans.append((keyStart..<valueStart, valueStart..<buffer.count))
                    }
                    let messages = spans.map { KafkaOutgoingMessage(topic: "tracking.events", key: buffer[$0.key], value: buffer[$0.value]) }
                    bytes &+= messages.reduce(0) { $0 + $1.value.count }
                }
                return bytes
            }),
            ("read batches", {
                bodies.reduce(0) { total, body in total &+ ((try? body.withUnsafeBytes { try TrackingCodec.readBatch($0) }.count) ?? 0) }
            }),
            ("check", { events.reduce(0) { $0 &+ ($1.validationError(now: now) == nil ? 1 : 0) } }),
            ("write messages", { events.reduce(0) { $0 &+ TrackingCodec.writeMessage($1).count } }),
            ("baseline: JSONSerialization read + write", {
                var bytes = 0
                for body in bodies {
                    guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
                          let list = object["events"] as? [Any] else { continue }
                    for event in list {
                        bytes &+= (try? JSONSerialization.data(withJSONObject: ["data": event, "source": "feed"], options: [.sortedKeys]).count) ?? 0
                    }
                }
                return bytes
            }),
        ]
        var seconds = [[Double]](repeating: [], count: stages.count)
        for pass in 0..<passes {
            // Each pass in another order, so no stage always runs in another's wake.
            for offset in 0..<stages.count {
                let index = (pass + offset) % stages.count
                seconds[index].append(time(stages[index].pass))
            }
        }
        let perEvent = seconds.map { median($0) * 1e9 / Double(events.count) }
        for (index, stage) in stages.enumerated() {
            print("  " + stage.name.padding(toLength: 42, withPad: " ", startingAt: 0) + String(format: "%7.0f ns per event", perEvent[index]))
        }
        print(String(format: "ratio TrackingCodec/JSONSerialization time per event: %.3f", perEvent[0] / perEvent[stages.count - 1]))
    }

    private static func time(_ pass: () -> Int) -> Double {
        let start = ContinuousClock.now
        let result = pass()
        precondition(result > 0, "a pass did nothing")
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    private static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
}
