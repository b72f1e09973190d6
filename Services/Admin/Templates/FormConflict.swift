import Foundation
import Shared
import Synchronization

/// An edit form whose fields can be merged three ways when its save lost a race: the values the page was
/// rendered with ride along as hidden `base.<name>` fields.
protocol MergeableForm: Sendable {
    /// Each text field: its form name, its label, where the form keeps it.
    static var mergeFields: [(name: String, label: String, value: WritableKeyPath<Self, String>)] { get }
    /// Text fields named per form, by form name: a translation's `name@es` (their label is their name).
    var namedFields: [String: String] { get set }
}

extension MergeableForm {
    var namedFields: [String: String] {
        get { [:] }
        set {}
    }

    /// The hidden fields that carry the values this form was rendered from.
    func baseFields() -> HTML {
        let fixed = Self.mergeFields.reduce(HTML.empty) { html, field in html + Forms.hidden("base.\(field.name)", self[keyPath: field.value]) }
        return namedFields.keys.sorted().reduce(fixed) { html, name in html + Forms.hidden("base.\(name)", namedFields[name] ?? "") }
    }

    /// The rendered-from values a posted form carried; nil when it carried none (a page from before they existed). A named
    /// field without its base was empty when the page was rendered.
    static func base(in form: FormData) -> [String: String]? {
        guard mergeFields.allSatisfy({ form.has("base.\($0.name)") }) else { return nil }
        var base = Dictionary(uniqueKeysWithValues: mergeFields.map { ($0.name, form["base.\($0.name)"]) })
        for (name, values) in form.fields where name.hasPrefix("base.") && name.contains("@") { base[String(name.dropFirst(5))] = values.first ?? "" }
        return base
    }
}

/// What a save that lost a race shows (docs/ADMIN.md, "Conflicts"): the typed form with the newer version's
/// changes taken into the fields the user left alone, and the fields changed on both sides, each with the
/// other side's value.
struct FormConflict<Form: MergeableForm>: Sendable {
    struct Field: Sendable {
        var name: String
        var label: String
        var theirs: String
    }

    /// What the page shows in the form: yours, plus their changes where you changed nothing.
    var form: Form
    var bothChanged: [Field]
    var takenFromThem: [String]
    /// Who made the newer version, when the admin knows it (`ChangeAuthors`); `you` when it was this user.
    var author: ChangeAuthors.Author?
    var version: Int

    /// `typed`: what was posted; `base`: what that page was rendered from; `current`: the newer version, as a form.
    init(typed: Form, base: [String: String]?, current: Form, author: ChangeAuthors.Author?, version: Int) {
        var merged = typed
        var bothChanged: [Field] = []
        var taken: [String] = []
        let named = Set(typed.namedFields.keys).union(current.namedFields.keys).sorted()
        let fields: [(name: String, label: String, mine: String, theirs: String, take: (inout Form) -> Void)] =
            Form.mergeFields.map { field in
                (field.name, field.label, typed[keyPath: field.value], current[keyPath: field.value], { $0[keyPath: field.value] = current[keyPath: field.value] })
            } + named.map { name in
                (name, name, typed.namedFields[name] ?? "", current.namedFields[name] ?? "", { $0.namedFields[name] = current.namedFields[name] })
            }
        for field in fields {
            let mine = Self.normal(field.mine)
            let theirs = Self.normal(field.theirs)
            guard mine != theirs else { continue }
            // Without the base every difference is treated as changed on both sides: nothing is overwritten unseen.
            let original = base.map { Self.normal($0[field.name] ?? "") }
            if let original, mine == original {
                field.take(&merged)
                taken.append(field.label)
            } else if let original, theirs == original {
                continue
            } else {
                bothChanged.append(Field(name: field.name, label: field.label, theirs: field.theirs))
            }
        }
        form = merged
        self.bothChanged = bothChanged
        takenFromThem = taken
        self.author = author
        self.version = version
    }

    /// Browsers post a textarea's line breaks as CRLF; surrounding space is not a change either.
    static func normal(_ text: String) -> String {
        text.replacingOccurrences(of: "\r\n", with: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Beside each field changed on both sides: the other value (shown as the field's message).
    var fieldNotes: [String: String] {
        Dictionary(uniqueKeysWithValues: bothChanged.map { field in
            (field.name, "Also changed in the newer version, to: “\(field.theirs.isEmpty ? "(empty)" : field.theirs)”. Save keeps what is in this field.")
        })
    }

    func box(entity: String) -> HTML {
        let who = ChangeAuthors.describe(author)
        let taken: HTML = takenFromThem.isEmpty ? .empty
            : "<p>Taken into the form from the newer version, since you had not changed them: \(takenFromThem.joined(separator: ", ")).</p>"
        let both: HTML = bothChanged.isEmpty
            ? "<p>You changed different fields: Save to keep both changes.</p>"
            : "<p>Changed on both sides, marked below with the other value: <strong>\(bothChanged.map(\.label).joined(separator: ", "))</strong>. Save keeps what is in each field; <a href=\"\">reload the page</a> to start again from the newer version.</p>"
        return """
            <div class="conflict" role="alert">
            <p><strong>This \(entity) was changed \(who) while you were editing it (it is now version \(version)).</strong> Nothing was saved yet.</p>
            \(taken)\(both)
            </div>
            """
    }
}

/// Who made which version, for the changes made through this admin since it started (an entity's newer
/// version made elsewhere, e.g. an import by catalog's command line, or before a restart, is "someone else").
final class ChangeAuthors: Sendable {
    enum Author: Sendable, Equatable {
        case you
        case other(String)
    }

    private let authors = Mutex<[UUID: (version: Int, actor: String)]>([:])

    func record(_ result: CatalogCommandResult, actor: String) {
        guard result.outcome == .applied, let id = result.entityId, let version = result.version else { return }
        authors.withLock { authors in
            if (authors[id]?.version ?? 0) < version { authors[id] = (version, actor) }
        }
    }

    /// Who made `version` of `id`, as seen by `viewer`.
    func author(of id: UUID, version: Int, viewer: String) -> Author? {
        guard let known = authors.withLock({ $0[id] }), known.version == version else { return nil }
        return known.actor == viewer ? .you : .other(known.actor)
    }

    static func describe(_ author: Author?) -> String {
        switch author {
        case .you: "by you, in another tab or window,"
        case .other(let email): "by \(email)"
        case nil: "by someone else"
        }
    }
}
