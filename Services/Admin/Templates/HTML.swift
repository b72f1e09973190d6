import Shared

/// Markup that is safe to send: every `String` interpolated into an `HTML` literal is escaped, so a name
/// like `<script>alert(1)</script>` shows as text; only other `HTML` values go in as they are.
///
///     let row: HTML = "<td>\(tour.content.name)</td>"      // escaped
///     let page: HTML = "<tbody>\(rows)</tbody>"             // rows: HTML, inserted as is
struct HTML: Sendable, Equatable, ExpressibleByStringInterpolation, CustomStringConvertible {
    private(set) var rendered: String

    init(stringLiteral value: String) { rendered = value }

    init(stringInterpolation: Interpolation) { rendered = stringInterpolation.output }

    /// Markup from trusted code (a literal built elsewhere); never pass user input here.
    init(trusted markup: String) { rendered = markup }

    static let empty = HTML(trusted: "")

    var description: String { rendered }

    struct Interpolation: StringInterpolationProtocol {
        var output = ""

        init(literalCapacity: Int, interpolationCount: Int) { output.reserveCapacity(literalCapacity * 2) }

        mutating func appendLiteral(_ literal: String) { output += literal }

        /// Text: escaped.
        mutating func appendInterpolation(_ text: String) { output += escape(text) }

        mutating func appendInterpolation(_ text: String?) { output += escape(text ?? "") }

        mutating func appendInterpolation<T: BinaryInteger>(_ number: T) { output += String(number) }

        /// Markup: inserted as is.
        mutating func appendInterpolation(_ html: HTML) { output += html.rendered }

        mutating func appendInterpolation(_ html: HTML?) { output += html?.rendered ?? "" }

        /// A list of fragments, one after another.
        mutating func appendInterpolation(_ parts: [HTML]) { for part in parts { output += part.rendered } }
    }

    static func + (lhs: HTML, rhs: HTML) -> HTML { HTML(trusted: lhs.rendered + rhs.rendered) }

    static func += (lhs: inout HTML, rhs: HTML) { lhs.rendered += rhs.rendered }
}

extension Array where Element == HTML {
    func joined() -> HTML { HTML(trusted: map(\.rendered).joined()) }

    /// Fragments with `separator` between them (a literal separator is markup, e.g. ", " or "<br>").
    func joined(separator: HTML) -> HTML { HTML(trusted: map(\.rendered).joined(separator: separator.rendered)) }
}

/// The one escape function: text to HTML text or attribute value (attributes are always double-quoted).
func escape(_ text: String) -> String { MarkupEscaping.escape(text) }

