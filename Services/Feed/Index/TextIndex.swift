import Foundation

/// Case- and accent-insensitive substring search over a few text fields per document, by trigram
/// postings. A query's trigrams narrow the candidates to documents holding all of them; each candidate
/// is then checked for the whole folded query.
///
/// Results come in name order, and a search stops at its `limit`-th match: a trigram's list holds the
/// ranks of its documents, where a `rank` is the document's place in (folded name, id) order, spread over 32
/// bits so a new document usually fits between its neighbours without renumbering the others. An
/// intersection of lists therefore walks documents in result order; a match's slot is looked up in the
/// ranked list of every document (`rank << 32 | slot`), so the lists, most of the index, hold 4 bytes per
/// entry, not 8. A value type: the projection mutates its copy, readers keep theirs.
struct TextIndex: Sendable {
    struct Document: Sendable {
        let id: UUID
        /// Folded name, then the other folded fields, separated by 0 so no match spans two fields.
        let haystack: [UInt8]
        /// Bytes of the folded name at the start of `haystack`.
        let nameLength: Int
        /// `rank << 32 | slot`; nil until `seal()` ranks the document.
        var posting: UInt64?
        /// Where the haystack's trigrams are in `unposted` until `seal()` posts them; empty once posted.
        var unposted: Range<Int32> = 0..<0

        var rank: UInt32? { posting.map { UInt32(truncatingIfNeeded: $0 >> 32) } }
    }

    /// By slot (slots are small and dense, reused after removal); nil for a free slot.
    private var documents: [Document?] = []
    private(set) var count = 0
    /// Trigram → ranks of the documents containing it, ascending.
    private var postings: [UInt32: [UInt32]] = [:]
    /// Every ranked document's posting, ascending: the result order itself, and the candidates of a
    /// query too short to have a trigram.
    private var everyDocument: [UInt64] = []
    /// Slots inserted since the last `seal()`, not yet ranked or posted.
    private var unranked: [Int32] = []
    /// The trigrams of the documents not yet posted: made as documents arrive, so that ranking a bulk load after its
    /// last document has only the lists to fill.
    private var unposted = UnpostedTrigrams()

    static let separator: UInt8 = 0
    /// How many of a query's trigram lists (the shortest) are intersected.
    static let intersectedLists = 4
    /// Ranks live in the posting's upper 32 bits.
    private static let rankLimit: UInt64 = 1 << 32

    /// Adds or replaces the document in `slot`. Searchable after `seal()`.
    mutating func insert(slot: Int32, id: UUID, name: String, fields: [String]) {
        remove(slot: slot)
        var haystack = TextFolding.fold(name)
        let nameLength = haystack.count
        for field in fields {
            haystack.append(Self.separator)
            haystack.append(contentsOf: TextFolding.fold(field))
        }
        if Int(slot) >= documents.count { documents.append(contentsOf: repeatElement(nil, count: Int(slot) - documents.count + 1)) }
        documents[Int(slot)] = Document(id: id, haystack: haystack.withExactCapacity(), nameLength: nameLength, posting: nil,
                                        unposted: unposted.append(Self.trigrams(of: haystack)))
        count += 1
        unranked.append(slot)
    }

    mutating func remove(slot: Int32) {
        guard Int(slot) < documents.count, let document = documents[Int(slot)] else { return }
        documents[Int(slot)] = nil
        count -= 1
        guard let posting = document.posting, let rank = document.rank else {
            unranked.removeAll { $0 == slot }
            return
        }
        for trigram in Self.trigrams(of: document.haystack) {
            guard var list = postings.removeValue(forKey: trigram) else { continue }
            if let index = Self.position(of: rank, in: list), list[index] == rank { list.remove(at: index) }
            if !list.isEmpty { postings[trigram] = list }
        }
        if let index = Self.position(of: posting, in: everyDocument), everyDocument[index] == posting { everyDocument.remove(at: index) }
    }

    /// Ranks and posts the documents inserted since the last call. A few new documents take ranks between
    /// their neighbours' and go into the lists in place; a bulk load, or a spot where ranks ran out, ranks
    /// every document afresh.
    mutating func seal() {
        guard !unranked.isEmpty else {
            // Documents inserted and removed again since the last call left their trigrams behind.
            if !unposted.isEmpty { unposted = UnpostedTrigrams() }
            return
        }
        defer {
            for slot in unranked where documents[Int(slot)] != nil { documents[Int(slot)]!.unposted = 0..<0 }
            unranked = []
            unposted = UnpostedTrigrams()
        }
        if unranked.count * 8 > count { return renumber() }
        for slot in unranked {
            guard let document = documents[Int(slot)] else { continue }
            // The first ranked document that sorts after this one.
            var low = 0, high = everyDocument.count
            while low < high {
                let middle = (low + high) / 2
                if Self.precedes(self.document(everyDocument[middle]), document) { low = middle + 1 } else { high = middle }
            }
            let below = low == 0 ? 0 : everyDocument[low - 1] >> 32
            let above = low == everyDocument.count ? Self.rankLimit : everyDocument[low] >> 32
            // Renumbering rebuilds every list, including what this loop has posted so far.
            guard above - below >= 2 else { return renumber() }
            let rank = below + (above - below) / 2
            let posting = rank << 32 | UInt64(UInt32(bitPattern: slot))
            everyDocument.insert(posting, at: low)
            documents[Int(slot)]?.posting = posting
            for trigram in trigrams(of: document) {
                var list = postings.removeValue(forKey: trigram) ?? []
                list.insert(UInt32(rank), at: Self.position(of: UInt32(rank), in: list) ?? list.count)
                postings[trigram] = list
            }
        }
    }

    /// Ranks every document evenly over the rank space, in result order, and rebuilds the lists (appended
    /// to in that order, so they come out sorted).
    private mutating func renumber() {
        var slots: [Int32] = []
        slots.reserveCapacity(count)
        for (slot, document) in documents.enumerated() where document != nil { slots.append(Int32(slot)) }
        slots.sort { Self.precedes(self.documents[Int($0)]!, self.documents[Int($1)]!) }
        let step = Self.rankLimit / UInt64(slots.count + 1)
        everyDocument.removeAll(keepingCapacity: true)
        everyDocument.reserveCapacity(slots.count)
        for (index, slot) in slots.enumerated() {
            let posting = UInt64(index + 1) * step << 32 | UInt64(UInt32(bitPattern: slot))
            documents[Int(slot)]!.posting = posting
            everyDocument.append(posting)
        }
        postings = [:]  // the old lists go before the new are made
        // Every document's trigrams as numbers, those of documents posted before made again.
        var ranges: [Range<Int32>] = []
        ranges.reserveCapacity(slots.count)
        for slot in slots {
            var range = documents[Int(slot)]!.unposted
            if range.isEmpty { range = unposted.append(Self.trigrams(of: documents[Int(slot)]!.haystack)) }
            documents[Int(slot)]!.unposted = 0..<0
            ranges.append(range)
        }
        postings = unposted.lists(of: ranges, ranks: everyDocument.lazy.map { UInt32(truncatingIfNeeded: $0 >> 32) })
    }

    /// A document's trigrams: as made when it arrived, or made again from its haystack.
    private func trigrams(of document: Document) -> [UInt32] {
        document.unposted.isEmpty ? Self.trigrams(of: document.haystack) : unposted.trigrams(in: document.unposted)
    }

    /// Trigrams of documents, one document's after another, each as a number counting the distinct trigrams from 0,
    /// so that the lists of a bulk load are counted and filled by number, not looked up by trigram for each posting.
    private struct UnpostedTrigrams: Sendable {
        private var numbers: [UInt32] = []
        /// The trigram of each number.
        private var trigramOf: [UInt32] = []
        private var numberOf: [UInt32: UInt32] = [:]

        var isEmpty: Bool { numbers.isEmpty }

        /// Appends a document's trigrams; returns where they are.
        mutating func append(_ trigrams: [UInt32]) -> Range<Int32> {
            let start = Int32(numbers.count)
            for trigram in trigrams {
                if let number = numberOf[trigram] {
                    numbers.append(number)
                } else {
                    let number = UInt32(trigramOf.count)
                    trigramOf.append(trigram)
                    numberOf[trigram] = number
                    numbers.append(number)
                }
            }
            return start..<Int32(numbers.count)
        }

        func trigrams(in range: Range<Int32>) -> [UInt32] {
            numbers[Int(range.lowerBound)..<Int(range.upperBound)].map { trigramOf[Int($0)] }
        }

        /// The lists of the documents whose trigrams are at `ranges`, with the documents' `ranks`, in that order.
        func lists(of ranges: [Range<Int32>], ranks: some Sequence<UInt32>) -> [UInt32: [UInt32]] {
            var counts = [Int](repeating: 0, count: trigramOf.count)
            for range in ranges {
                for number in numbers[Int(range.lowerBound)..<Int(range.upperBound)] { counts[Int(number)] += 1 }
            }
            // Each list allocated at its size, so none is regrown or copied to be trimmed.
            var lists = counts.map { count in
                var list: [UInt32] = []
                list.reserveCapacity(count)
                return list
            }
            for (range, rank) in zip(ranges, ranks) {
                for number in numbers[Int(range.lowerBound)..<Int(range.upperBound)] { lists[Int(number)].append(rank) }
            }
            var postings: [UInt32: [UInt32]] = [:]
            postings.reserveCapacity(lists.count)
            for (number, list) in lists.enumerated() where !list.isEmpty { postings[trigramOf[number]] = list }
            return postings
        }
    }

    /// Slots of the documents containing `query` (folded), in name order, at most `limit`.
    func search(_ query: String, limit: Int) -> [Int32] {
        search(folded: TextFolding.fold(query), limit: limit)
    }

    func search(folded query: [UInt8], limit: Int) -> [Int32] {
        guard !query.isEmpty, limit > 0 else { return [] }
        var found: [Int32] = []
        found.reserveCapacity(min(limit, 64))
        /// Keeps the slot if its document holds the query; true once `limit` are found.
        func check(_ slot: Int32) -> Bool {
            if let document = documents[Int(slot)], Self.contains(document.haystack, query) { found.append(slot) }
            return found.count == limit
        }
        guard query.count >= 3 else {
            for posting in everyDocument where check(Self.slot(of: posting)) { break }
            return found
        }
        var lists: [[UInt32]] = []
        for trigram in Self.trigrams(of: query) {
            guard let list = postings[trigram] else { return [] }
            lists.append(list)
        }
        // The rarest few trigrams narrow the candidates about as well as all of them (the substring
        // check is exact anyway), and a long query would otherwise pay for every list per candidate.
        lists.sort { $0.count < $1.count }
        if lists.count > Self.intersectedLists { lists.removeLast(lists.count - Self.intersectedLists) }
        // Leapfrog intersection: every list gallops to the largest posting any list is on, so a long list
        // skips the runs a shorter one does not have (instead of probing the others for each of its postings).
        var cursors = [Int](repeating: 0, count: lists.count)
        guard var target = lists[0].first else { return [] }
        search: while true {
            for index in lists.indices where !Self.advance(&cursors[index], in: lists[index], to: target) {
                guard cursors[index] < lists[index].count else { break search }
                target = lists[index][cursors[index]]
                continue search
            }
            if let index = Self.position(of: UInt64(target) << 32, in: everyDocument), everyDocument[index] >> 32 == UInt64(target),
               check(Self.slot(of: everyDocument[index])) { break }
            cursors[0] += 1
            guard cursors[0] < lists[0].count else { break }
            target = lists[0][cursors[0]]
        }
        return found
    }

    // MARK: name order

    /// Where a document stands in result order (folded name, then id): a browse resumes after it.
    struct NamePosition: Sendable, Equatable {
        let foldedName: [UInt8]
        let id: UUID
    }

    func namePosition(ofSlot slot: Int32) -> NamePosition? {
        guard slot >= 0, Int(slot) < documents.count, let document = documents[Int(slot)] else { return nil }
        return NamePosition(foldedName: Array(document.haystack[..<document.nameLength]), id: document.id)
    }

    /// Calls `body` with the slot of each ranked document in name order, from the first that sorts after
    /// `position` (from the first of all when nil), until `body` returns false.
    func walkInNameOrder(after position: NamePosition?, _ body: (Int32) -> Bool) {
        var start = 0
        if let position {
            var low = 0, high = everyDocument.count
            while low < high {
                let middle = (low + high) / 2
                let document = self.document(everyDocument[middle])
                let documentFirst = document.haystack.withUnsafeBufferPointer { name in
                    position.foldedName.withUnsafeBufferPointer { other in
                        Self.precedes(name, document.nameLength, document.id, other, position.foldedName.count, position.id)
                    }
                }
                // Documents equal to the position were shown already.
                if documentFirst || document.id == position.id && document.haystack[..<document.nameLength].elementsEqual(position.foldedName) {
                    low = middle + 1
                } else {
                    high = middle
                }
            }
            start = low
        }
        for posting in everyDocument[start...] where !body(Self.slot(of: posting)) { break }
    }

    /// The ranked document of a posting.
    private func document(_ posting: UInt64) -> Document {
        documents[Int(Self.slot(of: posting))]!
    }

    private static func slot(of posting: UInt64) -> Int32 {
        Int32(bitPattern: UInt32(truncatingIfNeeded: posting))
    }

    /// Result order: folded name, then id.
    private static func precedes(_ a: Document, _ b: Document) -> Bool {
        a.haystack.withUnsafeBufferPointer { left in
            b.haystack.withUnsafeBufferPointer { right in precedes(left, a.nameLength, a.id, right, b.nameLength, b.id) }
        }
    }

    /// Whether the folded name `a` (its first `aLength` bytes) with id `aId` comes before `b` with `bId`.
    private static func precedes(_ a: UnsafeBufferPointer<UInt8>, _ aLength: Int, _ aId: UUID,
                                 _ b: UnsafeBufferPointer<UInt8>, _ bLength: Int, _ bId: UUID) -> Bool {
        // memcmp, not the generic sequence comparison: ranking a bulk load sorts every document by name.
        let common = min(aLength, bLength)
        let bytes = common == 0 ? 0 : memcmp(a.baseAddress!, b.baseAddress!, common)
        let order = bytes != 0 ? Int(bytes) : aLength - bLength
        if order != 0 { return order < 0 }
        return aId < bId
    }

    // MARK: helpers

    /// Distinct trigrams of the text, none spanning a field separator.
    static func trigrams(of text: [UInt8]) -> [UInt32] {
        guard text.count >= 3 else { return [] }
        var result: [UInt32] = []
        result.reserveCapacity(text.count - 2)
        text.withUnsafeBufferPointer { text in
            for start in 0...(text.count - 3) {
                let a = text[start], b = text[start + 1], c = text[start + 2]
                if a == separator || b == separator || c == separator { continue }
                result.append(UInt32(a) << 16 | UInt32(b) << 8 | UInt32(c))
            }
        }
        // Sorted and unique: cheaper than a set for a field's worth of trigrams, and every document's are made
        // when a catalog is indexed.
        result.sort()
        var unique = 0
        for index in result.indices where unique == 0 || result[unique - 1] != result[index] {
            result[unique] = result[index]
            unique += 1
        }
        result.removeLast(result.count - unique)
        return result
    }

    /// Moves `cursor` to the first element of the sorted `list` not below `target` (galloping, then
    /// binary search); true when that element is `target`.
    private static func advance(_ cursor: inout Int, in list: [UInt32], to target: UInt32) -> Bool {
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

    /// Index of the first element of the sorted `list` not below `posting`; nil when there is none.
    private static func position<Posting: FixedWidthInteger>(of posting: Posting, in list: [Posting]) -> Int? {
        var low = 0, high = list.count
        while low < high {
            let middle = (low + high) / 2
            if list[middle] < posting { low = middle + 1 } else { high = middle }
        }
        return low < list.count ? low : nil
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

extension Array {
    /// The elements in storage of their own size. Built by appending, an array keeps up to half its storage unused,
    /// and the index keeps its lists and haystacks for as long as the snapshot lives. (Capacity is what malloc gave,
    /// a little over the count asked for: only a real surplus is worth a copy.)
    fileprivate func withExactCapacity() -> [Element] {
        guard capacity - count > Swift.max(8, count / 8) else { return self }
        return [Element](unsafeUninitializedCapacity: count) { buffer, initialized in
            initialized = buffer.initialize(fromContentsOf: self)
        }
    }
}
