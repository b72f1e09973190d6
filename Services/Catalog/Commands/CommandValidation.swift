import Foundation
import Shared
import Synchronization

/// Field-level validation of command content. Messages state the rule, so the admin can show them
/// beside the field as they are.
enum CommandValidation {
    static let maxNameLength = 200

    static func validate(_ tour: TourContent) -> [FieldError] {
        var errors: [FieldError] = []
        requireText(tour.name, field: "name", label: "Tour's Name", max: maxNameLength, into: &errors)
        limit(tour.summary, field: "summary", label: "Summary", max: 1_000, into: &errors)
        limit(tour.purpose, field: "purpose", label: "Tour's Purpose", max: 4_000, into: &errors)
        // DESIGN.md, "A tour's look and route".
        if let cover = tour.coverImage {
            if !TextRules.isWebURL(cover) {
                errors.append(FieldError(field: "coverImage", message: "Cover picture must be an http or https URL"))
            }
            if isBlank(tour.coverImageAlt ?? "") {
                errors.append(FieldError(field: "coverImageAlt", message: "Say what the cover picture shows, for visitors who cannot see it"))
            }
        }
        limit(tour.coverImageAlt ?? "", field: "coverImageAlt", label: "Cover picture's alt text", max: 300, into: &errors)
        if let minutes = tour.estimatedMinutes, !TourContent.estimatedMinutesRange.contains(minutes) {
            errors.append(FieldError(field: "estimatedMinutes", message: "Estimated duration must be whole minutes, 1 to 1440 (24 hours)"))
        }
        if let color = tour.color, !isColor(color) {
            errors.append(FieldError(field: "color", message: "Colour must be # and six lower-case hex digits, such as #0b5cad"))
        }
        if let route = tour.route {
            if !(2...LineString.maxPositions).contains(route.coordinates.count) {
                errors.append(FieldError(field: "route", message: "A route has 2 to \(LineString.maxPositions) points, not \(route.coordinates.count)"))
            } else if let index = route.coordinates.firstIndex(where: { !$0.isValid }) {
                errors.append(FieldError(field: "route", message: "The route's point \(index + 1) is not a longitude from -180 to 180 and a latitude from -90 to 90"))
            }
        }
        return errors + translationErrors(tour, validate: validate)
    }

    static let maxLanguages = 50
    static let maxTranslationBytes = 256 * 1_024

    /// A translation's texts meet their field's own rules (DESIGN.md "Languages"), checked by validating the content
    /// as that language shows it; errors name `translations.<tag>.<field>`.
    static func translationErrors<Content: Translatable>(_ content: Content, validate: (Content) -> [FieldError]) -> [FieldError] {
        guard let translations = content.translations else { return [] }
        var errors: [FieldError] = []
        if translations.count > maxLanguages {
            errors.append(FieldError(field: "translations", message: "At most \(maxLanguages) languages, not \(translations.count)"))
        }
        // Each text is held to its field's limit; all of them together to what one message carries with room to spare.
        let bytes = translations.reduce(0) { sum, language in
            sum + language.key.utf8.count + language.value.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
        }
        if bytes > maxTranslationBytes {
            errors.append(FieldError(field: "translations", message: "Translations add up to \(bytes / 1_024) KiB; at most \(maxTranslationBytes / 1_024) KiB"))
        }
        for language in translations.keys.sorted() {
            guard LanguageTag.isWellFormed(language) else {
                errors.append(FieldError(field: "translations", message: "A translation's language must be a tag such as es or pt-BR, at most \(LanguageTag.maxBytes) bytes"))
                continue
            }
            let texts = translations[language] ?? [:]
            for field in texts.keys.sorted() where !Content.translatableFields.contains(field) {
                errors.append(FieldError(field: "translations.\(language)",
                                         message: "\(field) has no translation; these do: \(Content.translatableFields.joined(separator: ", "))"))
            }
            var shown = content.localized(to: language)
            shown.translations = nil
            // A list's item is reported by its field's name (`pictureAlts[1]` of the translation `pictureAlts`).
            for error in validate(shown) where texts[error.field] != nil || texts[String(error.field.prefix { $0 != "[" })] != nil {
                errors.append(FieldError(field: "translations.\(language).\(error.field)", message: "\(language): \(error.message)"))
            }
        }
        return errors
    }

    /// `#` and six hex digits, lower-case (the form of a stored colour).
    static func isColor(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.count == 7 && bytes[0] == UInt8(ascii: "#")
            && bytes.dropFirst().allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
    }

    static func validate(_ poi: PoiContent) -> [FieldError] {
        var errors: [FieldError] = []
        requireText(poi.name, field: "name", label: "Name", max: maxNameLength, into: &errors)
        limit(poi.summary, field: "summary", label: "Summary", max: 1_000, into: &errors)
        limit(poi.description, field: "description", label: "Description", max: 20_000, into: &errors)
        if !(poi.latitude.isFinite && (-90...90).contains(poi.latitude)) {
            errors.append(FieldError(field: "latitude", message: "Latitude must be between -90 and 90"))
        }
        if !(poi.longitude.isFinite && (-180...180).contains(poi.longitude)) {
            errors.append(FieldError(field: "longitude", message: "Longitude must be between -180 and 180"))
        }
        if poi.categories.count > 10 {
            errors.append(FieldError(field: "categories", message: "A POI can be in at most 10 categories"))
        }
        // The main category's errors name `category`; the others' `categories`.
        for (index, category) in poi.categories.enumerated() {
            let parts = category.split(separator: "/", omittingEmptySubsequences: false)
            if isLonger(category, than: 200) || parts.contains(where: { isBlank($0, newlinesAreBlank: false) }) || hasControlCharacters(category) {
                errors.append(FieldError(field: index == 0 ? "category" : "categories",
                                         message: "Category must be a path like Shop/Fashion, at most 200 characters"))
            }
        }
        if poi.buildings.count > 100
            || poi.buildings.contains(where: { isBlank($0, newlinesAreBlank: false) || isLonger($0, than: maxNameLength) || hasControlCharacters($0) }) {
            errors.append(FieldError(field: "buildings", message: "Buildings must be at most 100 non-empty names of at most 200 characters"))
        }
        for (index, picture) in poi.pictures.enumerated() where !TextRules.isWebURL(picture) {
            errors.append(FieldError(field: "pictures[\(index)]", message: "Picture must be an http or https URL"))
        }
        if poi.links.count > 100 {
            errors.append(FieldError(field: "links", message: "A POI can have at most 100 links"))
        }
        for (index, link) in poi.links.enumerated() {
            requireText(link.name, field: "links[\(index)].name", label: "Link Name", max: maxNameLength, into: &errors)
            if !TextRules.isWebURL(link.url) {
                errors.append(FieldError(field: "links[\(index)].url", message: "URL must be an http or https URL"))
            }
        }
        if let website = poi.website, !website.isEmpty, !TextRules.isWebURL(website) {
            errors.append(FieldError(field: "website", message: "Website must be an http or https URL"))
        }
        limit(poi.address ?? "", field: "address", label: "Address", max: 500, into: &errors)
        limit(poi.phone ?? "", field: "phone", label: "Phone", max: 50, into: &errors)
        limit(poi.openingHours ?? "", field: "openingHours", label: "Opening hours", max: 500, into: &errors)
        if let hours = poi.openingHours, !isBlank(hours, newlinesAreBlank: true), !isLonger(hours, than: 500), let message = openingHoursMistake(hours) {
            errors.append(FieldError(field: "openingHours", message: message))
        }
        if let level = poi.priceLevel, !(0...4).contains(level) {
            errors.append(FieldError(field: "priceLevel", message: "Price level must be 0 (free) to 4 (very expensive)"))
        }
        limit(poi.accessibility ?? "", field: "accessibility", label: "Accessibility", max: 2_000, into: &errors)
        if poi.pictureAlts.count > poi.pictures.count {
            errors.append(FieldError(field: "pictureAlts", message: "There are more alt texts (\(poi.pictureAlts.count)) than pictures (\(poi.pictures.count))"))
        }
        for (index, alt) in poi.pictureAlts.enumerated() {
            limit(alt, field: "pictureAlts[\(index)]", label: "Alt text", max: 300, into: &errors)
        }
        if let radius = poi.triggerRadiusMeters, !PoiContent.triggerRadiusRange.contains(radius) {
            errors.append(FieldError(field: "triggerRadiusMeters", message: "Trigger radius must be 5 to 500 metres"))
        }
        if let narration = poi.narration, !MediaHash.isValid(narration) {
            errors.append(FieldError(field: "narration", message: "Narration must be the sha256 of a library audio file: 64 lower-case hex digits"))
        }
        return errors + translationErrors(poi, validate: validate)
    }

    /// What is wrong with opening hours, nil when they read. Remembered per text of up to 512 bytes (a character
    /// can take any number): an import's POIs share a few texts, and reading each one's anew was a large part of
    /// catalog's work on a city (docs/BENCHMARKS.md, "Catalog's import").
    static func openingHoursMistake(_ hours: String) -> String? {
        let remembered = hours.utf8.count <= 512
        if remembered, let known = openingHoursVerdicts.withLock({ $0[hours] }) { return known }
        let mistake: String?
        do throws(OpeningHours.SyntaxError) {
            _ = try OpeningHours(parsing: hours)
            mistake = nil
        } catch {
            mistake = error.message
        }
        guard remembered else { return mistake }
        openingHoursVerdicts.withLock { verdicts in
            if verdicts.count >= maxRememberedOpeningHours { verdicts.removeAll(keepingCapacity: true) }
            verdicts[hours] = .some(mistake)
        }
        return mistake
    }

    private static let maxRememberedOpeningHours = 4_096
    private static let openingHoursVerdicts = Mutex<[String: String?]>([:])

    static let maxCategoryNameLength = 100

    static func validate(_ category: CategoryContent) -> [FieldError] {
        var errors: [FieldError] = []
        requireText(category.name, field: "name", label: "Category name", max: maxCategoryNameLength, into: &errors)
        if category.name.contains("/") {
            errors.append(FieldError(field: "name", message: "Category name must not contain \"/\" (it separates the levels of a path)"))
        }
        return errors + translationErrors(category, validate: validate)
    }

    /// Characters RFC 3986 allows in a URI as they are (unreserved, reserved, and `%` of an existing escape).
    static let uriCharacterText = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#[]@!$&'()*+,;=%"
    static let uriCharacters = CharacterSet(charactersIn: uriCharacterText)
    /// The same characters by byte, to pass over a URL with nothing to encode (most) without Foundation.
    static let isURIByte: [Bool] = (0..<256).map { byte in uriCharacterText.utf8.contains(UInt8(byte)) }

    /// Percent-encodes what a URI cannot hold as is (`<`, spaces, non-ASCII…), so every stored link, picture
    /// and website is a valid URI that phones and the feed's `format: uri` can rely on.
    static func encodeURLs(_ poi: inout PoiContent) {
        func encoded(_ text: String) -> String {
            if text.utf8.allSatisfy({ isURIByte[Int($0)] }) { return text }
            return text.addingPercentEncoding(withAllowedCharacters: uriCharacters) ?? text
        }
        for index in poi.links.indices { poi.links[index].url = encoded(poi.links[index].url) }
        poi.pictures = poi.pictures.map(encoded)
        poi.website = poi.website.map(encoded)
    }

    static func requireText(_ value: String, field: String, label: String, max: Int, into errors: inout [FieldError]) {
        if isBlank(value) {
            errors.append(FieldError(field: field, message: "\(label) is required"))
        } else {
            limit(value, field: field, label: label, max: max, into: &errors)
        }
    }

    static func limit(_ value: String, field: String, label: String, max: Int, into errors: inout [FieldError]) {
        if isLonger(value, than: max) {
            errors.append(FieldError(field: field, message: TextRules.tooLong(label, characters: max, value)))
        } else if hasControlCharacters(value) {
            errors.append(FieldError(field: field, message: "\(label) must not contain control characters"))
        }
    }

    /// Whether the text is empty or only whitespace: `trimmingCharacters(in: .whitespacesAndNewlines).isEmpty`
    /// (`.whitespaces` when newlines are not blank), without Foundation's NSString bridge, which was a tenth of
    /// an import's time in catalog.
    static func isBlank(_ text: some StringProtocol, newlinesAreBlank: Bool = true) -> Bool {
        text.unicodeScalars.allSatisfy { scalar in
            // Foundation's sets also hold U+200B ZERO WIDTH SPACE (a space separator in older Unicode).
            guard scalar.properties.isWhitespace || scalar.value == 0x200B else { return false }
            // CharacterSet.newlines: U+000A–U+000D, U+0085, U+2028, U+2029; the rest of White_Space is `.whitespaces`.
            let isNewline = (0x0A...0x0D).contains(scalar.value) || scalar.value == 0x85 || scalar.value == 0x2028 || scalar.value == 0x2029
            return newlinesAreBlank || !isNewline
        }
    }

    /// Whether the text is over `max` characters or their bytes (TextRules.exceeds).
    static func isLonger(_ value: some StringProtocol, than max: Int) -> Bool {
        TextRules.exceeds(value, characters: max)
    }

    /// NUL and the other C0 controls but tab and line breaks: Postgres cannot store NUL in text or jsonb,
    /// and the rest have no business in content. All are ASCII, and in UTF-8 an ASCII byte is only ever itself.
    static func hasControlCharacters(_ value: some StringProtocol) -> Bool {
        value.utf8.contains { $0 < 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D || $0 == 0x7F }
    }
}
