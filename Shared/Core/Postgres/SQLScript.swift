/// Splits a migration script into statements, because postgres-nio sends each query as one prepared
/// statement. Semicolons inside quotes ('…', "…"), dollar-quoted bodies ($$…$$, $tag$…$tag$) and comments
/// do not split.
public enum SQLScript {
    public static func statements(_ script: String) -> [String] {
        var statements: [String] = []
        var current = ""
        let characters = Array(script)
        var index = 0
        func flush() {
            let statement = current.trimmingCharacters(in: .whitespacesAndNewlines)
            if !statement.isEmpty && !statement.split(separator: "\n").allSatisfy({ $0.trimmingCharacters(in: .whitespaces).hasPrefix("--") }) {
                statements.append(statement)
            }
            current = ""
        }
        while index < characters.count {
            let character = characters[index]
            switch character {
            case "'", "\"":
                // Quoted text runs to the matching quote; a doubled quote is an escaped one and continues it.
                var end = index + 1
                while end < characters.count {
                    if characters[end] == character {
                        if end + 1 < characters.count && characters[end + 1] == character { end += 2; continue }
                        break
                    }
                    end += 1
                }
                current += String(characters[index...min(end, characters.count - 1)])
                index = end + 1
            case "-" where index + 1 < characters.count && characters[index + 1] == "-":
                var end = index
                while end < characters.count && characters[end] != "\n" { end += 1 }
                current += String(characters[index..<end])
                index = end
            case "$":
                // A dollar quote's tag: $$ or $name$.
                var end = index + 1
                while end < characters.count && (characters[end].isLetter || characters[end].isNumber || characters[end] == "_") { end += 1 }
                guard end < characters.count && characters[end] == "$" else {
                    current.append(character)
                    index += 1
                    continue
                }
                let tag = String(characters[index...end])
                let rest = String(characters[(end + 1)...])
                if let close = rest.range(of: tag) {
                    let body = tag + String(rest[..<close.upperBound])
                    current += body
                    index += body.count
                } else {
                    current += String(characters[index...])
                    index = characters.count
                }
            case ";":
                flush()
                index += 1
            default:
                current.append(character)
                index += 1
            }
        }
        flush()
        return statements
    }
}
