import Foundation
import Shared

/// Translation exchange files for agencies (DESIGN.md "Languages"): written as XLIFF 1.2, read as XLIFF 1.2 (or 1.1)
/// and 2.0, whichever a translation tool sends back. A unit is one field of one tour or POI, its id `tour/<uuid>/name`;
/// its source is the site language's text, its target the translation (kept when there is one, so a file going out
/// again shows what was done).
enum XLIFF {
    struct Unit: Equatable, Sendable {
        var id: String
        var source: String
        var target: String?
        /// What the unit is, for the translator: "Tour: Students Tour, name".
        var note: String?
    }

    struct Document: Equatable, Sendable {
        var sourceLanguage: String
        var targetLanguage: String?
        var units: [Unit]
    }

    struct ReadError: Error, CustomStringConvertible {
        let description: String
    }

    static let maxBytes = 16 << 20

    /// XLIFF 1.2, one `<file>`, text only (no inline markup: the content is plain text).
    static func write(_ document: Document) -> String {
        var xml = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        xml += #"<xliff xmlns="urn:oasis:names:tc:xliff:document:1.2" version="1.2">"# + "\n"
        xml += #"  <file original="itour-catalog" datatype="plaintext" source-language="\#(escape(document.sourceLanguage))""#
        if let target = document.targetLanguage { xml += #" target-language="\#(escape(target))""# }
        xml += ">\n    <body>\n"
        for unit in document.units {
            xml += #"      <trans-unit id="\#(escape(unit.id))" xml:space="preserve">"# + "\n"
            xml += "        <source>\(escape(unit.source))</source>\n"
            if let target = unit.target { xml += "        <target>\(escape(target))</target>\n" }
            if let note = unit.note { xml += "        <note>\(escape(note))</note>\n" }
            xml += "      </trans-unit>\n"
        }
        xml += "    </body>\n  </file>\n</xliff>\n"
        return xml
    }

    /// The units of an XLIFF 1.x or 2.0 file, with its languages. Refuses what is not XLIFF, and inline markup in a
    /// source or target (a tag inside the text), naming the unit. Only a unit's own source and target are read (not those of
    /// `<alt-trans>` or match suggestions), and a target a tool marks as not translated yet (1.2 `state="new"` or
    /// `"needs-translation"`, a 2.0 segment in `state="initial"`) is no target.
    static func read(_ bytes: [UInt8]) throws(ReadError) -> Document {
        guard bytes.count <= maxBytes else { throw ReadError(description: "the file is larger than \(maxBytes >> 20) MiB") }
        var reader = XMLReader(bytes)
        var document: Document?
        var version2 = false
        var unit: Unit?
        var text: String?
        var textOf: String?
        /// The open elements' local names.
        var open: [String] = []
        var untranslatedSegment = false
        do {
            while let event = try reader.next() {
                switch event {
                case .start(let name, let attributes, let selfClosing):
                    let local = Self.localName(name)
                    let parent = open.last
                    open.append(local)
                    if textOf != nil {
                        // Inline markup inside a source or target.
                        throw ReadError(description: "unit \(unit?.id ?? "?"): <\(local)> inside a \(textOf!): only plain text is taken")
                    }
                    switch local {
                    case "xliff":
                        version2 = (attributes["version"] ?? "").hasPrefix("2")
                        if version2 {
                            document = Document(sourceLanguage: attributes["srcLang"] ?? "", targetLanguage: attributes["trgLang"], units: [])
                        } else {
                            document = Document(sourceLanguage: "", targetLanguage: nil, units: [])
                        }
                    case "file" where !version2:
                        guard document != nil else { throw ReadError(description: "not an XLIFF file: <file> outside <xliff>") }
                        if let source = attributes["source-language"] { document!.sourceLanguage = source }
                        if let target = attributes["target-language"] {
                            if let earlier = document!.targetLanguage, !LanguageTag.equal(earlier, target) {
                                throw ReadError(description: "its files are in two target languages, \(earlier) and \(target): send one language per file")
                            }
                            document!.targetLanguage = target
                        }
                    case "segment" where version2:
                        untranslatedSegment = attributes["state"] == "initial"
                    case "trans-unit" where !version2, "unit" where version2:
                        guard document != nil else { throw ReadError(description: "not an XLIFF file: a unit outside <xliff>") }
                        unit = Unit(id: attributes["id"] ?? "", source: "", target: nil)
                        if selfClosing { unit = nil }
                    case "source", "target":
                        // A unit's own text only: in 1.2 right under its trans-unit, in 2.0 under a segment.
                        guard unit != nil, parent == (version2 ? "segment" : "trans-unit") else { continue }
                        if local == "target" && (untranslatedSegment || ["new", "needs-translation"].contains(attributes["state"] ?? "")) { continue }
                        if selfClosing {
                            if local == "target" { unit!.target = "" }
                        } else {
                            textOf = local
                            text = ""
                        }
                    default:
                        continue
                    }
                case .text(let value):
                    if textOf != nil { text! += value }
                case .end(let name):
                    let local = Self.localName(name)
                    open.removeLast()
                    if let current = textOf, local == current {
                        if current == "source" { unit!.source += text ?? "" } else { unit!.target = (unit!.target ?? "") + (text ?? "") }
                        textOf = nil
                        text = nil
                    } else if (local == "trans-unit" && !version2) || (local == "unit" && version2), let finished = unit {
                        document!.units.append(finished)
                        unit = nil
                    }
                }
            }
        } catch let error as XMLReader.Failure {
            throw ReadError(description: "not well-formed XML: \(error.description)")
        } catch let error as ReadError {
            throw error
        } catch {
            throw ReadError(description: "\(error)")
        }
        guard let document else { throw ReadError(description: "not an XLIFF file: it has no <xliff> element") }
        return document
    }

    private static func localName(_ name: String) -> String {
        name.split(separator: ":").last.map(String.init) ?? name
    }

    static func escape(_ text: String) -> String { MarkupEscaping.xml(text) }
}
