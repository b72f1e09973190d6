import Foundation
import Shared

/// What `GET /v1/changes` answers from (DESIGN.md, "Offline tours and changes"): each change this instance
/// published since its horizon, stamped with the time it was applied, with what it left on the feed.
///
/// `apply` notes each change in `ChangeLog.Pending` (the entity's kind and id, stamped with this instance's clock,
/// never going back); a publication takes those notes, resolves each against the state it publishes (on the feed
/// or not, and the version), and appends them here; the snapshot holds a copy of this log, so an answer agrees with
/// the content a reader sees. Entries are in stamp order, so the changes since a time are a suffix. The log keeps
/// whole chunks shared between the projection's copy and the snapshots' (a publication copies at most the tail),
/// and is compacted to the latest entry per entity once it has grown past twice what it held after the last
/// compaction. An entry takes 32 bytes.
struct ChangeLog: Sendable {
    /// The kinds `GET /v1/changes` names (categories are not one: the tree comes whole).
    enum Kind: UInt8, CaseIterable, Sendable {
        case tour, poi, page, event, person, featured, media

        var name: String {
            switch self {
            case .tour: "tour"
            case .poi: "poi"
            case .page: "page"
            case .event: "event"
            case .person: "person"
            case .featured: "featured"
            case .media: "media"
            }
        }
    }

    /// One entity's change as a publication resolved it.
    struct Entry: Sendable, Equatable {
        let id: UUID
        /// The stamp (milliseconds since 1970) above 8 bits holding the kind and, in the top one, whether the entity
        /// was off the feed after the change: one word instead of three, so an entry is 32 bytes, not 40.
        private let packed: UInt64
        /// Its version after the change (of the event that removed it, when it is gone).
        let version: Int

        init(time: Int64, kind: Kind, id: UUID, version: Int, deleted: Bool) {
            self.id = id
            self.version = version
            packed = UInt64(max(0, time)) << 8 | (deleted ? 0x80 : 0) | UInt64(kind.rawValue)
        }

        var time: Int64 { Int64(packed >> 8) }
        var kind: Kind { Kind(rawValue: UInt8(packed & 0x7F))! }
        var deleted: Bool { packed & 0x80 != 0 }
        var key: Key { Key(id: id, kind: kind) }
    }

    struct Key: Hashable, Sendable {
        let id: UUID
        let kind: Kind
    }

    /// An entity on the feed, for a reset's answer.
    struct Listed: Sendable, Equatable {
        let id: UUID
        let version: Int
    }

    /// What a publication takes from `Pending`.
    struct Batch: Sendable {
        /// A new horizon: the log starts again from it (what came before is in the content published with it).
        var horizon: Int64?
        var entries: [Entry]
    }

    /// Entries in a chunk; a full chunk is never changed, so copies of the log share it.
    static let chunkSize = 1_024
    /// The least length at which the log is compacted.
    static let minimumCompaction = 4 * chunkSize

    private final class Chunk: Sendable {
        let entries: [Entry]
        init(_ entries: [Entry]) { self.entries = entries }
    }

    private var chunks: [Chunk] = []
    private var tail: [Entry] = []
    private var compactAt = ChangeLog.minimumCompaction
    /// When this instance started logging: its first complete publication, or the one after it took in a new catalog
    /// snapshot. Nil before the first publication.
    private(set) var horizon: Int64?
    /// The published records on the feed by kind (`event`…`media`), for a reset's answer; tours and POIs are the snapshot's.
    private(set) var recordsOnFeed: [Kind: [Listed]] = [:]

    init() {}

    /// Entries held (some may be older entries of an entity that changed again).
    var count: Int { chunks.count * Self.chunkSize + tail.count }

    subscript(_ index: Int) -> Entry {
        index < chunks.count * Self.chunkSize ? chunks[index / Self.chunkSize].entries[index % Self.chunkSize]
            : tail[index - chunks.count * Self.chunkSize]
    }

    /// The newest stamp the log knows (its horizon when nothing changed since): what a phone gives back as `since`.
    var cursorTime: Int64 {
        let newest = count > 0 ? self[count - 1].time : 0
        return max(newest, horizon ?? 0)
    }

    // MARK: publishing

    /// Takes a publication's batch in: restarts at a new horizon, appends, and compacts when due.
    mutating func take(_ batch: Batch) {
        if let horizon = batch.horizon {
            self.horizon = horizon
            chunks = []
            tail = []
            compactAt = Self.minimumCompaction
        }
        append(batch.entries)
    }

    mutating func append(_ entries: [Entry]) {
        for entry in entries {
            tail.append(entry)
            if tail.count == Self.chunkSize {
                chunks.append(Chunk(tail))
                tail = []
                tail.reserveCapacity(Self.chunkSize)
            }
        }
        if count > compactAt { compact() }
    }

    /// Keeps only the latest entry of each entity, in order.
    mutating func compact() {
        var seen = Set<Key>(minimumCapacity: count / 2)
        var kept: [Entry] = []
        for index in stride(from: count - 1, through: 0, by: -1) {
            let entry = self[index]
            if seen.insert(entry.key).inserted { kept.append(entry) }
        }
        kept.reverse()
        chunks = stride(from: 0, to: kept.count - kept.count % Self.chunkSize, by: Self.chunkSize).map {
            Chunk(Array(kept[$0..<($0 + Self.chunkSize)]))
        }
        tail = Array(kept[(kept.count - kept.count % Self.chunkSize)...])
        compactAt = max(Self.minimumCompaction, 2 * kept.count)
    }

    /// The records of a kind on the feed now (a publication sets each kind that changed).
    mutating func setRecordsOnFeed(_ kind: Kind, _ records: [Listed]) {
        recordsOnFeed[kind] = records
    }

    // MARK: answering

    /// Whether the log answers for `time` (else the phone must start again): it is not older than the horizon.
    func covers(_ time: Int64) -> Bool {
        guard let horizon else { return false }
        return time >= horizon
    }

    /// The latest entry of each entity stamped at `time` or later, oldest first.
    func changes(since time: Int64) -> [Entry] {
        // Stamps never go back, so the entries since `time` are a suffix.
        var low = 0, high = count
        while low < high {
            let middle = (low + high) / 2
            if self[middle].time < time { low = middle + 1 } else { high = middle }
        }
        var seen = Set<Key>()
        var found: [Entry] = []
        for index in stride(from: count - 1, through: low, by: -1) {
            let entry = self[index]
            if seen.insert(entry.key).inserted { found.append(entry) }
        }
        return found.reversed()
    }

    // MARK: noting changes

    /// The changes `apply` noted since the last publication, stamped; the entities' state (`EntityState`) holds it.
    struct Pending {
        private struct Note {
            let id: UUID
            let time: Int64
            let kind: Kind
        }

        private var notes: [Note] = []
        private var lastTime: Int64 = 0
        /// Nil until the first publication: until then every entity is published with its first state, not as a change.
        private var horizon: Int64?
        private var newHorizonAsked = false

        /// This instance's clock in milliseconds, never going back (so the changes since a stamp are a suffix).
        private mutating func now() -> Int64 {
            lastTime = max(lastTime, Int64((Date().timeIntervalSince1970 * 1_000).rounded(.down)))
            return lastTime
        }

        /// Notes a change of the entity, stamped now; nothing before the first publication.
        mutating func note(_ kind: Kind, _ id: UUID) {
            guard horizon != nil else { return }
            notes.append(Note(id: id, time: now(), kind: kind))
        }

        /// After a new catalog snapshot was taken in: the next publication starts the log again (what the feed missed
        /// meanwhile may be missing from its notes).
        mutating func askNewHorizon() {
            if horizon != nil { newHorizonAsked = true }
        }

        /// What a publication takes: a new horizon on the first one or when asked, and each noted entity's latest note,
        /// resolved by `state` against the state it publishes (nil for an entity never seen, such as a tour's stop that has
        /// not arrived: it was never on the feed); nil when there is nothing.
        mutating func take(resolving state: (Kind, UUID) -> (version: Int, onFeed: Bool)?) -> Batch? {
            if horizon == nil || newHorizonAsked {
                let horizon = now()
                self.horizon = horizon
                newHorizonAsked = false
                notes = []
                return Batch(horizon: horizon, entries: [])
            }
            guard !notes.isEmpty else { return nil }
            var seen = Set<Key>(minimumCapacity: notes.count)
            var entries: [Entry] = []
            for note in notes.reversed() where seen.insert(Key(id: note.id, kind: note.kind)).inserted {
                guard let resolved = state(note.kind, note.id) else { continue }
                entries.append(Entry(time: note.time, kind: note.kind, id: note.id, version: resolved.version, deleted: !resolved.onFeed))
            }
            notes = []
            return Batch(horizon: nil, entries: entries.reversed())
        }
    }
}

/// The cursor of `GET /v1/changes`: a stamp of the log, base64url (no padding) of its milliseconds as 8 big-endian
/// bytes, 11 characters. Opaque to phones; any 11 characters of that alphabet read as a time.
enum ChangesCursor {
    static let pattern = "^[A-Za-z0-9_-]{11}$"

    static func text(_ time: Int64) -> String {
        var value = UInt64(bitPattern: time)
        var bytes = [UInt8](repeating: 0, count: 8)
        for index in (0..<8).reversed() {
            bytes[index] = UInt8(truncatingIfNeeded: value)
            value >>= 8
        }
        return Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The time a cursor names; nil when it is not 11 base64url characters. One past the range of times (not made here)
    /// reads as the latest time.
    static func time(_ text: String) -> Int64? {
        guard text.utf8.count == 11 else { return nil }
        var value: UInt64 = 0
        for (position, character) in text.utf8.enumerated() {
            let digit: UInt64
            switch character {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): digit = UInt64(character - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): digit = UInt64(character - UInt8(ascii: "a") + 26)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt64(character - UInt8(ascii: "0") + 52)
            case UInt8(ascii: "-"): digit = 62
            case UInt8(ascii: "_"): digit = 63
            default: return nil
            }
            // 10 characters carry 60 bits, the last one 4 more and 2 of padding.
            value = position < 10 ? value << 6 | digit : value << 4 | digit >> 2
        }
        return Int64(clamping: value)
    }
}
