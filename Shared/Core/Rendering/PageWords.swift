/// The words the POI page writes around a POI's own texts (headings, labels, day names), in the page's language where
/// the suite has them, else in English (DESIGN.md "Languages"). Staff translate content; these few words are ours.
public struct PageWords: Sendable {
    /// The tag of the language these words are in.
    public let language: String
    let buildings, onTheTours, narration, transcript, visiting, address, phone, openingHours, closed, price, free, accessibility,
        website, more: String
    /// Monday first, then public holidays (`OpeningHours.Day` order).
    let days: [String]
    /// A link's type (`MediaType`) as its list names it.
    let linkTypes: [MediaType: String]

    public static let english = PageWords(
        language: "en", buildings: "Buildings", onTheTours: "On the tours", narration: "Narration", transcript: "Transcript",
        visiting: "Visiting", address: "Address", phone: "Phone", openingHours: "Opening hours", closed: "Closed", price: "Price", free: "Free",
        accessibility: "Accessibility", website: "Website", more: "More",
        days: OpeningHours.Day.allCases.map(\.name),
        linkTypes: [.page: "page", .video: "video", .audio: "audio", .image: "image"])

    static let all: [PageWords] = [
        english,
        PageWords(language: "es", buildings: "Edificios", onTheTours: "En los recorridos", narration: "Narración", transcript: "Transcripción",
                  visiting: "Visita", address: "Dirección", phone: "Teléfono", openingHours: "Horario", closed: "Cerrado", price: "Precio",
                  free: "Gratis", accessibility: "Accesibilidad", website: "Sitio web", more: "Más",
                  days: ["lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo", "festivos"],
                  linkTypes: [.page: "página", .video: "vídeo", .audio: "audio", .image: "imagen"]),
        PageWords(language: "fr", buildings: "Bâtiments", onTheTours: "Dans les visites", narration: "Narration", transcript: "Transcription",
                  visiting: "Visite", address: "Adresse", phone: "Téléphone", openingHours: "Horaires", closed: "Fermé", price: "Prix",
                  free: "Gratuit", accessibility: "Accessibilité", website: "Site web", more: "Plus",
                  days: ["lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche", "jours fériés"],
                  linkTypes: [.page: "page", .video: "vidéo", .audio: "audio", .image: "image"]),
        PageWords(language: "de", buildings: "Gebäude", onTheTours: "Auf den Touren", narration: "Erzählung", transcript: "Transkript",
                  visiting: "Besuch", address: "Adresse", phone: "Telefon", openingHours: "Öffnungszeiten", closed: "Geschlossen", price: "Preis",
                  free: "Kostenlos", accessibility: "Barrierefreiheit", website: "Website", more: "Mehr",
                  days: ["Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag", "Sonntag", "Feiertage"],
                  linkTypes: [.page: "Seite", .video: "Video", .audio: "Audio", .image: "Bild"]),
        PageWords(language: "pt", buildings: "Edifícios", onTheTours: "Nos passeios", narration: "Narração", transcript: "Transcrição",
                  visiting: "Visita", address: "Endereço", phone: "Telefone", openingHours: "Horário", closed: "Fechado", price: "Preço",
                  free: "Grátis", accessibility: "Acessibilidade", website: "Site", more: "Mais",
                  days: ["segunda-feira", "terça-feira", "quarta-feira", "quinta-feira", "sexta-feira", "sábado", "domingo", "feriados"],
                  linkTypes: [.page: "página", .video: "vídeo", .audio: "áudio", .image: "imagem"]),
    ]

    /// The words for `language` by RFC 4647 lookup (`es-MX` → `es`), English when the suite has none.
    public static func of(_ language: String) -> PageWords {
        var range = Substring(language)
        while true {
            if let words = all.first(where: { LanguageTag.equal($0.language, range) }) { return words }
            guard let dash = range.lastIndex(of: "-") else { return english }
            range = range[..<dash]
        }
    }

    func day(_ day: OpeningHours.Day) -> String { days[day.rawValue] }
}
