import Foundation
import Hummingbird
import Metrics
import NIOCore
import Shared

/// The limits of a `POST /v1/events` body, read by `TrackingCodec.readBatch`.
enum EventBatch {
    static let maxEvents = TrackingCodec.maxEvents
    static let maxBytes = 1 << 20
}

/// `POST /v1/events` behind the HTTP layer: reads a batch, rejects bad events one by one with their
/// reason, holds each client address and each device to its rate, and produces the good events to
/// `tracking.events` keyed by deviceId. It returns only after the broker acknowledged every produced event (DESIGN.md
/// "Guarantees"); if the broker cannot, nothing is reported accepted.
final class EventIngest: Sendable {
    struct Outcome: Sendable, Equatable {
        struct Rejection: Sendable, Equatable {
            let index: Int
            let reason: String
        }
        let accepted: Int
        let rejected: [Rejection]
    }

    private let producer: KafkaProducer
    private let topic: String
    /// Per device id: what the phone says it is.
    let rateLimiter: EventRateLimiter
    /// Per client address (`clientKey`): device ids are the phone's to choose, the address is not.
    let clientRateLimiter: EventRateLimiter
    private let acceptedCounter = Counter(label: "itour_feed_events_accepted_total", help: "Tracking events accepted and handed to the broker.")
    private let rejectedCounter = Counter(label: "itour_feed_events_rejected_total", help: "Tracking events rejected as invalid.")
    private let rateLimitedCounter = Counter(label: "itour_feed_events_rate_limited_total",
                                             help: "Tracking events refused over a device's or a client address's allowance.")
    private let unavailableCounter = Counter(label: "itour_feed_events_unavailable_total",
                                             help: "Valid tracking events refused because the broker did not take them.")

    /// Seconds a phone is asked to wait when the broker is unreachable.
    static let brokerRetryAfterSeconds = 5

    /// Per client address: how many different device ids it may bring an hour.
    let newDevices: NewDeviceLimiter
    /// Nil when the tours, POIs and records an event names exist; else why not (the projection's
    /// `unknownReference`, once it has loaded). Nil: not checked.
    private let unknownReference: (@Sendable (TrackingEvent) -> String?)?

    init(producer: KafkaProducer, topic: String, rateLimiter: EventRateLimiter, clientRateLimiter: EventRateLimiter,
         newDevices: NewDeviceLimiter = NewDeviceLimiter(devicesPerHour: 0), unknownReference: (@Sendable (TrackingEvent) -> String?)? = nil) {
        self.producer = producer
        self.topic = topic
        self.rateLimiter = rateLimiter
        self.clientRateLimiter = clientRateLimiter
        self.newDevices = newDevices
        self.unknownReference = unknownReference
    }

    /// What a client address is limited by, for the route and the pipeline alike: an IPv4 address; an IPv6
    /// address's /64 (what one subscriber is given: limiting single addresses would let it use 2^64 of them),
    /// an IPv4-mapped one as IPv4; "unknown" when the channel has no peer address.
    static func clientKey(_ address: SocketAddress?) -> String {
        switch address {
        case .v4:
            return address?.ipAddress ?? "unknown"
        case .v6(let v6):
            var raw = v6.address.sin6_addr
            let bytes = withUnsafeBytes(of: &raw) { Array($0) }
            if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
                return bytes[12..<16].map(String.init).joined(separator: ".")
            }
            return stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
                .joined(separator: ":") + "::/64"
        default:
            return "unknown"
        }
    }

    /// `submit`, awaited.
    func ingest(_ body: ByteBuffer, client: String, now: Date = Date()) async throws -> Outcome {
        try await withCheckedThrowingContinuation { continuation in
            submit(body, client: client, now: now) { continuation.resume(with: $0) }
        }
    }

    /// Answers a batch: `completion` gets the outcome once the broker acknowledged every accepted event,
    /// or the problem to answer (400 not a batch, 429 over a device's rate, 503 the broker did not
    /// acknowledge). `client` is the sender's `clientKey`. Reading and checks run on the caller's thread;
    /// `completion` runs once, on librdkafka's poll thread, or at once when nothing is to be produced.
    func submit(_ body: ByteBuffer, client: String, now: Date = Date(), completion: @escaping @Sendable (Result<Outcome, Problem>) -> Void) {
        let batch: Batch
        do {
            batch = try prepare(body, client: client, now: now)
        } catch {
            return completion(.failure(error))
        }
        let outcome = Outcome(accepted: batch.messages.count, rejected: batch.rejected)
        guard !batch.messages.isEmpty else {
            rejectedCounter.increment(by: outcome.rejected.count)
            return completion(.success(outcome))
        }
        // The callback keeps what it needs only: the messages are freed here, not on the poll thread.
        let perDevice = batch.perDevice, clientCharge = batch.clientCharge
        producer.send(batch.messages) { [self] result in
            switch result {
            case .success:
                acceptedCounter.increment(by: outcome.accepted)
                rejectedCounter.increment(by: outcome.rejected.count)
                completion(.success(outcome))
            case .failure(let error):
                rateLimiter.refund(perDevice)
                clientRateLimiter.refund(client, clientCharge)
                unavailableCounter.increment(by: outcome.accepted)
                let reason = (error as? KafkaError)?.message ?? "\(error)"
                completion(.failure(.unavailable("the event broker did not acknowledge the events (\(reason)); none were accepted, send the batch again",
                                                 retryAfterSeconds: Self.brokerRetryAfterSeconds)))
            }
        }
    }

    /// What a batch sends and answers, once read and checked.
    private struct Batch {
        let messages: [KafkaOutgoingMessage]
        let rejected: [Outcome.Rejection]
        let perDevice: [String: Int]
        /// What the client address was charged: every element, and at least one.
        let clientCharge: Int
    }

    private func prepare(_ body: ByteBuffer, client: String, now: Date) throws(Problem) -> Batch {
        // The client address pays one event's worth before the body is read, so batches that fail to read are
        // charged too; the rest of its elements (valid or not) once their number is known.
        do {
            try clientRateLimiter.take(client, 1)
        } catch {
            rateLimitedCounter.increment()
            throw clientLimited(error)
        }
        let parsed = body.withUnsafeReadableBytes { bytes in
            Result { () throws(TrackingCodec.BatchFailure) in try TrackingCodec.readBatch(bytes) }
        }
        let candidates: [Result<TrackingEvent, TrackingCodec.Rejection>]
        switch parsed {
        case .success(let elements): candidates = elements
        case .failure(.tooManyEvents):
            throw Problem.badRequest("a batch holds at most \(EventBatch.maxEvents) events; this one has more. Split it.")
        case .failure(let error):
            throw Problem.badRequest("the body must be a JSON object {\"events\": [...]}: \(Self.describe(error))")
        }

        let clientCharge = max(1, candidates.count)
        if clientCharge > 1 {
            do {
                try clientRateLimiter.take(client, clientCharge - 1)
            } catch {
                clientRateLimiter.refund(client, 1)  // refused whole: resending it costs what it would have
                rateLimitedCounter.increment(by: candidates.count)
                throw clientLimited(error)
            }
        }

        // One pass: each valid event is written as its message at once, rather than kept and copied
        // (a batch refused over a device's allowance wastes that writing; it is the rare case). Keys and
        // messages go into one buffer the batch's messages share: two allocations per event fewer, which
        // mattered most beside a city's worth of heap, where small allocations leave malloc's thread cache.
        var rejected: [Outcome.Rejection] = []
        var buffer: [UInt8] = []
        // About 600 bytes an ordinary event takes, and room for the bound one message is written under.
        buffer.reserveCapacity(candidates.count * 640 + 2_048)
        var spans: [(key: Range<Int>, value: Range<Int>)] = []
        spans.reserveCapacity(candidates.count)
        var perDevice: [String: Int] = [:]  // counted only when a limit is set
        let countsDevices = rateLimiter.isLimiting
        for index in candidates.indices {
            switch candidates[index] {
            case .failure(let rejection):
                rejected.append(.init(index: index, reason: rejection.reason))
            case .success(let event):
                if let reason = event.validationError(now: now) ?? unknownReference?(event) {
                    rejected.append(.init(index: index, reason: reason))
                    continue
                }
                guard newDevices.admits(event.deviceId, client: client) else {
                    rejected.append(.init(index: index, reason: "this client address brought more than \(newDevices.devicesPerHour) device ids this hour"))
                    continue
                }
                if countsDevices { perDevice[event.deviceId, default: 0] += 1 }
                // No request-id header per message: nothing downstream reads it, and librdkafka and the broker
                // paid for one on every event (about a tenth of the batch's cost).
                let keyStart = buffer.count
                buffer.append(contentsOf: event.deviceId.utf8)
                let valueStart = buffer.count
                TrackingCodec.appendMessage(event, to: &buffer)
                spans.append((keyStart..<valueStart, valueStart..<buffer.count))
            }
        }
        let messages = spans.map { KafkaOutgoingMessage(topic: topic, key: buffer[$0.key], value: buffer[$0.value]) }

        do {
            try rateLimiter.take(perDevice)
        } catch {
            clientRateLimiter.refund(client, clientCharge)
            rateLimitedCounter.increment(by: messages.count)
            let detail = error.batchExceedsAllowance
                ? "device \(QueryParameters.shown(error.key)) sent more events in one batch than its allowance of \(rateLimiter.eventsPerMinute) per minute; send smaller batches"
                : "device \(QueryParameters.shown(error.key)) is over its allowance of \(rateLimiter.eventsPerMinute) events per minute; retry after \(error.retryAfterSeconds) s"
            throw Problem(.tooManyRequests, detail, headers: [.retryAfter: String(error.retryAfterSeconds)])
        }
        return Batch(messages: messages, rejected: rejected, perDevice: perDevice, clientCharge: clientCharge)
    }

    private func clientLimited(_ error: EventRateLimiter.Limited) -> Problem {
        let allowance = clientRateLimiter.eventsPerMinute
        let detail = error.batchExceedsAllowance
            ? "this batch holds more events than the allowance of a client address (\(allowance) per minute); send smaller batches"
            : "this client address (\(error.key)) is over its allowance of \(allowance) events per minute, whatever devices they are from; retry after \(error.retryAfterSeconds) s"
        return Problem(.tooManyRequests, detail, headers: [.retryAfter: String(error.retryAfterSeconds)])
    }

    private static func describe(_ error: TrackingCodec.BatchFailure) -> String {
        switch error {
        case .malformed(let where_): "malformed JSON (\(where_))"
        case .notAnObject: "the body is not a JSON object"
        case .missingEvents: "missing field events"
        case .eventsNotAnArray: "events must be an array"
        case .tooManyEvents: "more than \(EventBatch.maxEvents) events"
        }
    }
}
