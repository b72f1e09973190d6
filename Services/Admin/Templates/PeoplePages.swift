import Foundation
import Shared

/// What the person form holds, as typed (DESIGN.md, "People").
struct PersonForm: AdminRecordForm, TranslatingForm {
    var name = ""
    var role = ""
    var department = ""
    var email = ""
    var phone = ""
    var officePoiId = ""
    var officeText = ""
    /// One per line.
    var interests = ""
    var profileUrl = ""
    var photoUrl = ""
    /// Translations by form name, `role@es` (DESIGN.md "Languages").
    var translations: [String: String] = [:]
    var version: Int?

    static let fields: Set<String> = ["name", "role", "department", "email", "phone", "officePoiId", "officeText", "interests", "profileUrl",
                                      "photoUrl"]

    static let translatedFields = [TranslationFields.Field(name: "role", label: "Role", rows: 1), .init(name: "department", label: "Department", rows: 1)]
    var siteTexts: [String: String] { ["role": role, "department": department] }

    init() {}

    init(_ person: PersonState) {
        let content = person.content
        name = content.name
        role = content.role
        department = content.department
        email = content.email ?? ""
        phone = content.phone ?? ""
        officePoiId = content.officePoiId?.uuidString.lowercased() ?? ""
        officeText = content.officeText ?? ""
        interests = content.interests.joined(separator: "\n")
        profileUrl = content.profileUrl ?? ""
        photoUrl = content.photoUrl ?? ""
        translations = TranslationFields.values(content.translations)
        version = person.version
    }

    init(_ form: FormData) {
        name = form["name"]
        role = form["role"]
        department = form["department"]
        email = form["email"]
        phone = form["phone"]
        officePoiId = form["officePoiId"]
        officeText = form["officeText"]
        interests = form["interests"]
        profileUrl = form["profileUrl"]
        photoUrl = form["photoUrl"]
        translations = TranslationFields.values(form, fields: PersonContent.translatableFields)
        version = form.int("version")
    }

    func content() -> Result<PersonContent, FieldErrors> { content(replacing: nil) }

    func content(replacing stored: PersonContent?) -> Result<PersonContent, FieldErrors> {
        func trimmed(_ text: String) -> String { text.trimmingCharacters(in: .whitespacesAndNewlines) }
        func optional(_ text: String) -> String? { trimmed(text).isEmpty ? nil : trimmed(text) }
        var office: UUID?
        if let text = optional(officePoiId) {
            guard let id = UUID(uuidString: text) else { return .failure(FieldErrors(byField: ["officePoiId": "Choose a point of interest from the list"])) }
            office = id
        }
        return .success(PersonContent(
            name: trimmed(name), role: trimmed(role), department: trimmed(department), email: optional(email), phone: optional(phone),
            officePoiId: office, officeText: optional(officeText),
            interests: interests.split(whereSeparator: \.isNewline).map { trimmed(String($0)) }.filter { !$0.isEmpty },
            profileUrl: optional(profileUrl), photoUrl: optional(photoUrl),
            translations: TranslationFields.translations(translations, over: stored?.translations)))
    }
}

/// The people directory's pages (owners).
enum PeoplePages: AdminRecordKind {
    static var path: String { "/people" }
    static var section: String { "People" }
    static var task: String { "manage the people directory" }
    static var createTitle: String { "Add Person" }
    static var manageTitle: String { "Edit Person" }
    static var deleteTitle: String { "Delete Person" }
    static var notFound: String { "There is no such person." }
    static var publishedNotice: String { "personpublished" }
    static var unpublishedNotice: String { "personunpublished" }

    static func newForm(_ catalog: AdminCatalogProjection.Content) -> PersonForm { PersonForm() }

    static func list(_ catalog: AdminCatalogProjection.Content, search: ListSearch, csrf: String, languages: SiteLanguages) -> HTML {
        let people = catalog.sortedPeople.filter { search.matches($0.content.name, $0.content.role, $0.content.department) }
        let rows: [HTML] = people.map { person in
            let path = "/people/\(person.id.uuidString.lowercased())"
            return """
                <tr><td><a href="\(path)">\(person.content.name)</a></td><td>\(person.content.role)</td><td>\(person.content.department)</td>
                <td>\(person.status == .published ? "Published" : "Draft")</td>\(TranslationFields.missingCell(person.content, languages: languages))
                <td><a href="\(path)">Edit</a> <a class="danger" href="\(path)/delete">Delete</a></td></tr>
                """
        }
        let table: HTML = search.outcome(rows.count, "person", plural: "people", none: "No one yet.") + (rows.isEmpty ? .empty : """
            <table><thead><tr><th scope="col">Name</th><th scope="col">Role</th><th scope="col">Department</th><th scope="col">Status</th>
            \(TranslationFields.missingHeader(languages))<th scope="col">Actions</th></tr></thead><tbody>\(rows)</tbody></table>
            """ as HTML)
        return """
            <h1>People</h1>
            <p>The staff directory phones show (<code>/v1/people</code> on the feed), once published.</p>
            <p><a class="button primary" href="/people/new">Add Person</a></p>
            \(search.form(action: "/people", label: "Search people (name, role or department)"))
            \(table)
            """
    }

    static func form(_ model: RecordFormModel<Self>) -> HTML {
        let form = model.form, errors = model.errors
        let offices = [(value: "", label: "(none: use the text below)")] + model.catalog.placeOptions
        let fields: HTML = Forms.text("Name", name: "name", value: form.name, error: errors["name"], required: true)
            + Forms.text("Role", name: "role", value: form.role, error: errors["role"], hint: "e.g. Director of Admissions")
            + Forms.text("Department", name: "department", value: form.department, error: errors["department"])
            + Forms.text("Email", name: "email", value: form.email, error: errors["email"], type: "email")
            + Forms.text("Phone", name: "phone", value: form.phone, error: errors["phone"], type: "tel")
            + Forms.select("Office", name: "officePoiId", options: offices, selected: form.officePoiId, error: errors["officePoiId"])
            + Forms.text("Office (text)", name: "officeText", value: form.officeText, error: errors["officeText"],
                         hint: "A room or an address, when the office is no point of interest.")
            + Forms.textarea("Interests", name: "interests", value: form.interests, error: errors["interests"], rows: 3, hint: "One per line.")
            + Forms.text("Profile link", name: "profileUrl", value: form.profileUrl, error: errors["profileUrl"], type: "url")
            + Forms.text("Photo link", name: "photoUrl", value: form.photoUrl, error: errors["photoUrl"], type: "url")
        var status: HTML = model.record.map {
            RecordPages.statusBox(of: $0, at: path, csrf: model.csrf, published: "<strong>Published:</strong> in the phones' directory.",
                                  draft: "<strong>Draft:</strong> not in the phones' directory yet.")
        } ?? .empty
        // Why phones show no office: the feed names only a place it shows.
        if let content = model.record?.content, let office = content.officePoiId, !model.catalog.isOnPhones(office) {
            let name = model.catalog.pois[office]?.content.name ?? "the chosen point of interest"
            let instead = (content.officeText ?? "").isEmpty ? "no office" : "“\(content.officeText ?? "")” (Office (text))"
            status += """
                <p class="notice warning" role="status">The office, “\(name)”, is not on phones yet (not published as a place, and no \
                published tour stops there), so phones show \(instead) for this person until it is.</p>
                """
        }
        return RecordPages.form(model, top: status, fields: fields + form.translationFieldsets(languages: model.languages, errors: errors),
                                fieldNames: PersonForm.fields)
    }

    static func confirmDelete(_ person: PersonState, csrf: String) -> HTML {
        RecordPages.confirmDelete(person, at: path, title: deleteTitle, csrf: csrf,
                                  "Are you sure you want to delete? \(person.content.name) leaves the phones' directory.")
    }
}
