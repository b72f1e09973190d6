/// RFC 4180 CSV: fields separated by commas, quoted with `"` when they hold commas, quotes (doubled) or
/// line breaks; lines end with CRLF or LF. Each record comes with the line it starts on, for error reports.
public enum CSV {
    public struct Record: Sendable, Equatable {
        public var line: Int
        public var fields: [String]
    }

    public struct ParseError: Error, CustomStringConvertible, Equatable {
        public var line: Int
        public var message: String
        public var description: String { "line \(line): \(message)" }
    }

    public static func parse(_ text: String) throws(ParseError) -> [Record] {
        var records: [Record] = []
        var fields: [String] = []
        var field = ""
        var line = 1
        var recordLine = 1
        var inQuotes = false
        var quoteOpenedOn = 1
        var fieldStarted = false
        var characters = text.makeIterator()
        var pending: Character? = nil

        func next() -> Character? {
            if let character = pending { pending = nil; return character }
            return characters.next()
        }

        func endRecord() {
            fields.append(field)
            // A blank line is no record.
            if !(fields.count == 1 && fields[0].isEmpty) { records.append(Record(line: recordLine, fields: fields)) }
            fields = []
            field = ""
            fieldStarted = false
        }

        while let character = next() {
            if inQuotes {
                if character == "\"" {
                    if let following = next() {
                        if following == "\"" { field.append("\"") } else { inQuotes = false; pending = following }
                    } else {
                        inQuotes = false
                    }
                } else {
                    if character == "\n" || character == "\r\n" { line += 1 }
                    field.append(character)
                }
                continue
            }
            switch character {
            case "\"" where !fieldStarted || field.isEmpty:
                inQuotes = true
                fieldStarted = true
                quoteOpenedOn = line
            case ",":
                fields.append(field)
                field = ""
                fieldStarted = false
            case "\n", "\r\n", "\r":
                endRecord()
                line += 1
                recordLine = line
            default:
                field.append(character)
                fieldStarted = true
            }
        }
        if inQuotes { throw ParseError(line: quoteOpenedOn, message: "a quoted field is never closed") }
        if !field.isEmpty || !fields.isEmpty { endRecord() }
        return records
    }
}
