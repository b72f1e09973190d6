import Foundation

/// Case- and accent-insensitive substring search over a few text fields per document, by trigram
/// postings. A query's trigrams narrow the candidates to documents holding all of them; each candidate
/// is then checked for the whole folded query. Results come in name order: every posting is
/// `nameKey << 32 | slot`, where `nameKey` is the first four bytes of the folded name, so the intersection
/// walks documents roughly alphabetically and can stop once it has `limit` matches (plus any that tie
/// on those four bytes, sorted exactly at the end). A value type: the projection mutates its copy,
/// readers keep theirs.
struct TextIndex: Sendable {
    struct Document: Sendable {
        let id: UUID
        let foldedName: [UInt8]
        /// Folded fields separated by 0, so no match spans two fields.
        let haystack: [UInt8]
        let posting: UInt64
    }

    /// By slot (slots are small and dense, reused after removal); nil for a free slot.
    private var documents: [Document?] = []
    private(set) var count = 0
    /// By slot: folded name bytes 4 to 11, big-endian, zero-padded. Orders two documents whose name keys
    /// tie without touching either document (a common first word ties thousands of names).
    private var secondNameKeys: [UInt64] = []
    private var postings: [UInt32: [UInt64]] = [:]
    /// Every document, for queries too short to have a trigram.
    private var everyDocument: [UInt64] = []
    /// Lists appended to out of order since the last `seal()`.
    private var unsortedTrigrams: Set<UInt32> = []
    private var everyDocumentUnsorted = false

    static let separator: UInt8 = 0
    /// How many of a query's trigram lists (the shortest) are intersected.
    static let intersectedLists = 4

    /// Adds or replaces the document in `slot`. Call `seal()` before searching.
    mutating func insert(slot: Int32, id: UUID, name: String, fields: [String]) {
        remove(slot: slot)
        let foldedName = TextFolding.fold(name)
        var haystack = foldedName
        for field in fields {
            haystack.append(Self.separator)
            haystack.append(contentsOf: TextFolding.fold(field))
        }
        let posting = Self.nameKey(foldedName) << 32 | UInt64(UInt32(bitPattern: slot))
        if Int(slot) >= documents.count { documents.append(contentsOf: repeatElement(nil, count: Int(slot) - documents.count + 1)) }
        documents[Int(slot)] = Document(id: id, foldedName: foldedName, haystack: haystack, posting: posting)
        if Int(slot) >= secondNameKeys.count { secondNameKeys.append(contentsOf: repeatElement(0, count: Int(slot) - secondNameKeys.count + 1)) }
        secondNameKeys[Int(slot)] = Self.nameKey(foldedName, from: 4, bytes: 8)
        count += 1
        for trigram in Self.trigrams(of: haystack) {
            let list = postings[trigram]
            if let last = list?.last, last > posting { unsortedTrigrams.insert(trigram) }
            postings[trigram, default: []].append(posting)
        }
        if let last = everyDocument.last, last > posting { everyDocumentUnsorted = true }
        everyDocument.append(posting)
    }

    mutating func remove(slot: Int32) {
        guard Int(slot) < documents.count, let document = documents[Int(slot)] else { return }
        documents[Int(slot)] = nil
        count -= 1
        for trigram in Self.trigrams(of: document.haystack) {
            guard var list = postings.removeValue(forKey: trigram) else { continue }
            Self.remove(document.posting, from: &list, sorted: !unsortedTrigrams.contains(trigram))
            if !list.isEmpty { postings[trigram] = list }
        }
        Self.remove(document.posting, from: &everyDocument, sorted: !everyDocumentUnsorted)
    }

    /// Restores posting order after inserts; cheap when nothing was inserted out of order.
    mutating func seal() {
        for trigram in unsortedTrigrams {
            postings[trigram]?.sort()
        }
        unsortedTrigrams.removeAll()
        if everyDocumentUnsorted { everyDocument.sort() }
        everyDocumentUnsorted = false
    }

    /// Slots of the documents containing `query` (folded), in name order, at most `limit`.
    func search(_ query: String, limit: Int) -> [Int32] {
        search(folded: TextFolding.fold(query), limit: limit)
    }

    func search(folded query: [UInt8], limit: Int) -> [Int32] {
        guard !query.isEmpty, limit > 0 else { return [] }
        var lists: [[UInt64]] = []
        if query.count < 3 {
            lists = [everyDocument]
        } else {
            for trigram in Set(Self.trigrams(of: query)) {
                guard let list = postings[trigram] else { return [] }
                lists.append(list)
            }
            // The rarest few trigrams narrow the candidates about as well as all of them (the substring
            // check is exact anyway), and a long query would otherwise pay for every list per candidate.
            lists.sort { $0.count < $1.count }
            if lists.count > Self.intersectedLists { lists.removeLast(lists.count - Self.intersectedLists) }
        }
        // The best `limit` matches so far, in order. Once full, only documents whose name key ties with
        // the last one taken can still enter, and a tied candidate that sorts after the current last is
        // skipped before the substring check (names often share a prefix).
        var best: [Document] = []
        best.reserveCapacity(limit + 1)
        var cutoffKey: UInt64?
        // Leapfrog intersection: every list gallops to the largest posting any list is on, so a long list
        // skips the runs a shorter one does not have (instead of probing the others for each of its postings).
        var cursors = [Int](repeating: 0, count: lists.count)
        guard var target = lists[0].first else { return [] }
        search: while true {
            if let cutoffKey, target >> 32 != cutoffKey { break }
            // Full, and this document sorts after the last one kept: step past it before any intersecting.
            if best.count == limit, sortsAfter(target, best[best.count - 1]) {
                _ = Self.advance(&cursors[0], in: lists[0], to: target &+ 1)
                guard cursors[0] < lists[0].count else { break }
                target = lists[0][cursors[0]]
                continue
            }
            for index in lists.indices where !Self.advance(&cursors[index], in: lists[index], to: target) {
                guard cursors[index] < lists[index].count else { break search }
                target = lists[index][cursors[index]]
                continue search
            }
            if let document = documents[Int(UInt32(truncatingIfNeeded: target))], Self.contains(document.haystack, query) {
                let position = best.firstIndex { Self.precedes(document, $0) } ?? best.count
                best.insert(document, at: position)
                if best.count > limit { best.removeLast() }
                if best.count == limit, cutoffKey == nil { cutoffKey = target >> 32 }
            }
            cursors[0] += 1
            guard cursors[0] < lists[0].count else { break }
            target = lists[0][cursors[0]]
        }
        return best.map { Int32(bitPattern: UInt32(truncatingIfNeeded: $0.posting)) }
    }

    /// Whether the document of `posting` sorts after `last`: by name key, then the next eight name bytes,
    /// and only when those tie too by the documents themselves.
    private func sortsAfter(_ posting: UInt64, _ last: Document) -> Bool {
        let key = posting >> 32, lastKey = last.posting >> 32
        if key != lastKey { return key > lastKey }
        let slot = Int(UInt32(truncatingIfNeeded: posting)), lastSlot = Int(UInt32(truncatingIfNeeded: last.posting))
        let second = secondNameKeys[slot], lastSecond = secondNameKeys[lastSlot]
        if second != lastSecond { return second > lastSecond }
        guard let document = documents[slot] else { return true }
        return !Self.precedes(document, last)
    }

    /// Result order: folded name, then id.
    private static func precedes(_ a: Document, _ b: Document) -> Bool {
        // memcmp, not the generic sequence comparisons: a query whose matches share their first four name
        // bytes compares every tied candidate with the last result kept.
        let order = a.foldedName.withUnsafeBufferPointer { left in
            b.foldedName.withUnsafeBufferPointer { right in
                let common = min(left.count, right.count)
                let bytes = common == 0 ? 0 : memcmp(left.baseAddress!, right.baseAddress!, common)
                return bytes != 0 ? Int(bytes) : left.count - right.count
            }
        }
        if order != 0 { return order < 0 }
        return a.id.uuidString < b.id.uuidString
    }

    // MARK: helpers

    /// The first four folded name bytes, big-endian, so integer order is name order on those bytes.
    static func nameKey(_ foldedName: [UInt8]) -> UInt64 {
        nameKey(foldedName, from: 0, bytes: 4)
    }

    /// `bytes` folded name bytes from `start`, big-endian, zero-padded past the end.
    static func nameKey(_ foldedName: [UInt8], from start: Int, bytes: Int) -> UInt64 {
        var key: UInt64 = 0
        for index in start..<(start + bytes) {
            key = key << 8 | UInt64(index < foldedName.count ? foldedName[index] : 0)
        }
        return key
    }

    /// Distinct trigrams of the text, none spanning a field separator.
    static func trigrams(of text: [UInt8]) -> [UInt32] {
        guard text.count >= 3 else { return [] }
        var seen = Set<UInt32>()
        seen.reserveCapacity(text.count)
        var result: [UInt32] = []
        result.reserveCapacity(text.count)
        for start in 0...(text.count - 3) {
            let a = text[start], b = text[start + 1], c = text[start + 2]
            if a == separator || b == separator || c == separator { continue }
            let trigram = UInt32(a) << 16 | UInt32(b) << 8 | UInt32(c)
            if seen.insert(trigram).inserted { result.append(trigram) }
        }
        return result
    }

    /// Moves `cursor` to the first element of the sorted `list` not below `target` (galloping, then
    /// binary search); true when that element is `target`.
    private static func advance(_ cursor: inout Int, in list: [UInt64], to target: UInt64) -> Bool {
        var low = cursor, step = 1
        var high = cursor
        while high < list.count && list[high] < target {
            low = high + 1
            high += step
            step *= 2
        }
        high = min(high, list.count)
        while low < high {
            let middle = (low + high) / 2
            if list[middle] < target { low = middle + 1 } else { high = middle }
        }
        cursor = low
        return low < list.count && list[low] == target
    }

    private static func remove(_ posting: UInt64, from list: inout [UInt64], sorted: Bool) {
        if sorted {
            var low = 0, high = list.count
            while low < high {
                let middle = (low + high) / 2
                if list[middle] < posting { low = middle + 1 } else { high = middle }
            }
            if low < list.count && list[low] == posting { list.remove(at: low) }
        } else if let index = list.firstIndex(of: posting) {
            list.remove(at: index)
        }
    }

    /// Whether `needle` occurs in `haystack`: memchr to each candidate first byte, memcmp for the rest.
    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= haystack.count else { return needle.isEmpty }
        return haystack.withUnsafeBufferPointer { hay in
            needle.withUnsafeBufferPointer { pin in
                guard let start = hay.baseAddress, let pattern = pin.baseAddress else { return false }
                let lastStart = hay.count - pin.count
                var offset = 0
                while offset <= lastStart {
                    guard let found = memchr(start + offset, Int32(pattern.pointee), lastStart - offset + 1) else { return false }
                    offset = start.distance(to: found.assumingMemoryBound(to: UInt8.self))
                    if memcmp(start + offset, pattern, pin.count) == 0 { return true }
                    offset += 1
                }
                return false
            }
        }
    }
}
