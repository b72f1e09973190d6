import Foundation
import Shared
import Testing
@testable import Admin

@Suite("XLIFF")
struct XLIFFTests {
    @Test("what is written reads back equal, hostile text and control characters included")
    func roundTrip() throws {
        let units = [
            XLIFF.Unit(id: "poi/1/name", source: "Café <b> & \"quotes\" 'apostrophes' ]]> 日本 🏛️", target: "Cafetería & más", note: "Point of interest"),
            XLIFF.Unit(id: "tour/2/summary", source: "line\nbreak\ttab", target: nil, note: nil),
        ]
        let written = XLIFF.write(XLIFF.Document(sourceLanguage: "en", targetLanguage: "es", units: units))
        let read = try XLIFF.read(Array(written.utf8))
        #expect(read.sourceLanguage == "en" && read.targetLanguage == "es")
        #expect(read.units.map(\.id) == units.map(\.id))
        #expect(read.units.map(\.source) == units.map(\.source))
        #expect(read.units.map(\.target) == units.map(\.target))
        // XML 1.0 cannot hold most C0 controls: they are left out rather than written as a file no tool reads.
        #expect(XLIFF.escape("a\u{1}b\u{0}c") == "abc")
    }

    @Test("XLIFF 2.0, entities, character references and CDATA read as text")
    func version2() throws {
        let file = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!-- from a tool -->
            <xliff xmlns="urn:oasis:names:tc:xliff:document:2.0" version="2.0" srcLang="en" trgLang="pt-BR">
              <file id="f"><unit id="poi/1/name"><segment><source>Hall</source><target>Sal&#xE3;o &amp; <![CDATA[<pátio>]]> &#233;</target></segment></unit></file>
            </xliff>
            """
        let read = try XLIFF.read(Array(file.utf8))
        #expect(read.targetLanguage == "pt-BR")
        #expect(read.units == [XLIFF.Unit(id: "poi/1/name", source: "Hall", target: "Salão & <pátio> é")])
    }

    @Test("only a unit's own source and target count: not alt-trans or matches; a target marked not translated yet is none")
    func ownTextsOnly() throws {
        let file = """
            <xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2"><file source-language="en" target-language="es"><body>
            <trans-unit id="a"><source>Library</source><target>Biblioteca</target>
              <alt-trans><source>Library</source><target>Librería</target></alt-trans></trans-unit>
            <trans-unit id="b"><source>Hall</source><target state="needs-translation">Hall</target></trans-unit>
            </body></file></xliff>
            """
        let read = try XLIFF.read(Array(file.utf8))
        #expect(read.units.map(\.target) == ["Biblioteca", nil])
        let initial = """
            <xliff xmlns="urn:oasis:names:tc:xliff:document:2.0" version="2.0" srcLang="en" trgLang="es">
            <file id="f"><unit id="a"><segment state="initial"><source>Hall</source><target>Hall</target></segment></unit></file></xliff>
            """
        #expect(try XLIFF.read(Array(initial.utf8)).units.map(\.target) == [nil])
        let mixed = #"<xliff version="1.2"><file target-language="es"/><file target-language="fr"/></xliff>"#
        #expect(throws: XLIFF.ReadError.self) { try XLIFF.read(Array(mixed.utf8)) }
    }

    @Test("a form's translations replace the stored ones field by field; a language the form did not show is kept")
    func formOverStored() {
        let stored: Translations = ["es": ["name": "Biblioteca", "summary": "Libros"], "fr": ["name": "Bibliothèque"]]
        let posted = ["name@es": " Biblioteca Randall ", "summary@es": ""]
        #expect(TranslationFields.translations(posted, over: stored) == ["es": ["name": "Biblioteca Randall"], "fr": ["name": "Bibliothèque"]])
        #expect(TranslationFields.translations(["name@pt-br": "Biblioteca"], over: ["pt-BR": ["summary": "Livros"]])
                == ["pt-BR": ["name": "Biblioteca", "summary": "Livros"]], "one language whatever the case the form names it in")
    }

    @Test("refused with the reason: a DOCTYPE, inline markup, unbalanced tags, an unknown entity, bytes that are not UTF-8, no xliff")
    func refusals() {
        func reason(_ text: String) -> String? {
            do {
                _ = try XLIFF.read(Array(text.utf8))
                return nil
            } catch {
                return error.description
            }
        }
        #expect(reason(#"<!DOCTYPE x [<!ENTITY a "a">]><xliff version="1.2"/>"#)?.contains("DOCTYPE") == true)
        #expect(reason(#"<xliff version="1.2"><file><body><trans-unit id="a"><source>a <g id="1">b</g></source></trans-unit></body></file></xliff>"#)?
            .contains("unit a: <g> inside a source") == true)
        #expect(reason(#"<xliff version="1.2"><file></xliff>"#)?.contains("</xliff> closes <file>") == true)
        #expect(reason(#"<xliff version="1.2"><file><body><trans-unit id="a"><source>&nbsp;</source></trans-unit></body></file></xliff>"#)?
            .contains("unknown reference") == true)
        #expect(throws: XLIFF.ReadError.self) { try XLIFF.read([0x3C, 0x61, 0xFF, 0x3E]) }
        #expect(reason("<html></html>")?.contains("no <xliff>") == true)
        #expect(reason("<xliff version=\"1.2\">") != nil, "the file ends inside it")
    }
}
