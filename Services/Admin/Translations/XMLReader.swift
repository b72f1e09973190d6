/// A small pull reader of well-formed XML, enough for translation files: elements, attributes, text, the five named
/// entities and character references, CDATA; comments and processing instructions skipped. A DOCTYPE is refused (no
/// entity definitions, so no entity expansion), as is anything not well-formed or not UTF-8.
struct XMLReader {
    enum Event: Equatable {
        case start(name: String, attributes: [String: String], selfClosing: Bool)
        case end(name: String)
        case text(String)
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private let bytes: [UInt8]
    private var at = 0
    private var open: [String] = []
    private var pendingEnd: String?
    private var sawRoot = false
    private let valid: Bool

    init(_ bytes: [UInt8]) {
        var bytes = bytes
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        self.bytes = bytes
        valid = String(validating: bytes, as: UTF8.self) != nil
    }

    /// The next event, nil at the end of the document.
    mutating func next() throws(Failure) -> Event? {
        guard valid else { throw Failure(description: "the file is not UTF-8") }
        if let name = pendingEnd {
            pendingEnd = nil
            return try close(name)
        }
        while at < bytes.count {
            if bytes[at] != UInt8(ascii: "<") {
                let text = try readText()
                if open.isEmpty {
                    guard text.allSatisfy(\.isWhitespace) else { throw fail("text outside the root element") }
                    continue
                }
                return .text(text)
            }
            if starts(with: "<!--") {
                try skip(past: "-->")
            } else if starts(with: "<?") {
                try skip(past: "?>")
            } else if starts(with: "<![CDATA[") {
                guard !open.isEmpty else { throw fail("CDATA outside the root element") }
                at += 9
                let start = at
                try skip(past: "]]>")
                return .text(String(decoding: bytes[start..<(at - 3)], as: UTF8.self))
            } else if starts(with: "<!") {
                throw fail("a DOCTYPE or declaration is not taken")
            } else if starts(with: "</") {
                at += 2
                let name = try readName()
                skipSpace()
                try expect(">")
                return try close(name)
            } else {
                at += 1
                let name = try readName()
                guard !(open.isEmpty && sawRoot) else { throw fail("a second root element") }
                var attributes: [String: String] = [:]
                while true {
                    skipSpace()
                    guard at < bytes.count else { throw fail("the file ends inside <\(name)>") }
                    if bytes[at] == UInt8(ascii: "/") {
                        at += 1
                        try expect(">")
                        sawRoot = true
                        open.append(name)
                        pendingEnd = name
                        return .start(name: name, attributes: attributes, selfClosing: true)
                    }
                    if bytes[at] == UInt8(ascii: ">") {
                        at += 1
                        sawRoot = true
                        open.append(name)
                        return .start(name: name, attributes: attributes, selfClosing: false)
                    }
                    let attribute = try readName()
                    skipSpace()
                    try expect("=")
                    skipSpace()
                    guard at < bytes.count, bytes[at] == UInt8(ascii: "\"") || bytes[at] == UInt8(ascii: "'") else {
                        throw fail("attribute \(attribute) has no quoted value")
                    }
                    let quote = bytes[at]
                    at += 1
                    guard let end = bytes[at...].firstIndex(of: quote) else { throw fail("attribute \(attribute) is not closed") }
                    let raw = bytes[at..<end]
                    guard !raw.contains(UInt8(ascii: "<")) else { throw fail("< in the value of attribute \(attribute)") }
                    guard attributes.updateValue(try decode(raw), forKey: attribute) == nil else { throw fail("attribute \(attribute) twice") }
                    at = end + 1
                }
            }
        }
        guard open.isEmpty else { throw fail("the file ends inside <\(open.last!)>") }
        guard sawRoot else { throw fail("the file has no element") }
        return nil
    }

    private mutating func close(_ name: String) throws(Failure) -> Event {
        guard open.last == name else { throw fail("</\(name)> closes <\(open.last ?? "nothing")>") }
        open.removeLast()
        return .end(name: name)
    }

    private func starts(with prefix: StaticString) -> Bool {
        let count = prefix.utf8CodeUnitCount
        guard at + count <= bytes.count else { return false }
        for index in 0..<count where bytes[at + index] != prefix.utf8Start[index] { return false }
        return true
    }

    private mutating func skip(past end: StaticString) throws(Failure) {
        while at < bytes.count {
            if starts(with: end) {
                at += end.utf8CodeUnitCount
                return
            }
            at += 1
        }
        throw fail("the file ends inside a comment, instruction or CDATA section")
    }

    private mutating func skipSpace() {
        while at < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[at]) { at += 1 }
    }

    private mutating func expect(_ character: Character) throws(Failure) {
        guard at < bytes.count, bytes[at] == character.asciiValue! else { throw fail("expected \(character)") }
        at += 1
    }

    private mutating func readName() throws(Failure) -> String {
        let start = at
        while at < bytes.count, !([0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: ">"), UInt8(ascii: "/"), UInt8(ascii: "="), UInt8(ascii: "<")].contains(bytes[at])) {
            at += 1
        }
        guard at > start else { throw fail("a name is missing") }
        return String(decoding: bytes[start..<at], as: UTF8.self)
    }

    private mutating func readText() throws(Failure) -> String {
        let start = at
        while at < bytes.count, bytes[at] != UInt8(ascii: "<") { at += 1 }
        return try decode(bytes[start..<at])
    }

    /// Entity and character references resolved.
    private func decode(_ raw: ArraySlice<UInt8>) throws(Failure) -> String {
        guard raw.contains(UInt8(ascii: "&")) else { return String(decoding: raw, as: UTF8.self) }
        var out = ""
        var index = raw.startIndex
        while index < raw.endIndex {
            guard let amp = raw[index...].firstIndex(of: UInt8(ascii: "&")) else {
                out += String(decoding: raw[index...], as: UTF8.self)
                break
            }
            out += String(decoding: raw[index..<amp], as: UTF8.self)
            guard let semicolon = raw[amp...].firstIndex(of: UInt8(ascii: ";")), semicolon - amp <= 12 else { throw fail("an & that starts no reference") }
            let name = String(decoding: raw[(amp + 1)..<semicolon], as: UTF8.self)
            switch name {
            case "lt": out += "<"
            case "gt": out += ">"
            case "amp": out += "&"
            case "quot": out += "\""
            case "apos": out += "'"
            default:
                let number: UInt32? = name.hasPrefix("#x") ? UInt32(name.dropFirst(2), radix: 16) : name.hasPrefix("#") ? UInt32(name.dropFirst(), radix: 10) : nil
                guard let number, let scalar = Unicode.Scalar(number), number >= 0x20 || [0x09, 0x0A, 0x0D].contains(number) else {
                    throw fail("unknown reference &\(name);")
                }
                out.unicodeScalars.append(scalar)
            }
            index = semicolon + 1
        }
        return out
    }

    private func fail(_ what: String) -> Failure {
        // The line, for a person looking at the file.
        let line = bytes[..<min(at, bytes.count)].reduce(1) { $0 + ($1 == 0x0A ? 1 : 0) }
        return Failure(description: "line \(line): \(what)")
    }
}
