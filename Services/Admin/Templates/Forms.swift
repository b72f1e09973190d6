import Foundation
import Shared

/// Form fields with a visible `<label>`, the typed value kept, and the field's error (the rule it broke)
/// right beside it.
enum Forms {
    /// The hidden CSRF field every form carries.
    static func csrf(_ token: String) -> HTML {
        "<input type=\"hidden\" name=\"\(AdminCookie.csrfField)\" value=\"\(token)\">"
    }

    static func hidden(_ name: String, _ value: String) -> HTML {
        "<input type=\"hidden\" name=\"\(name)\" value=\"\(value)\">"
    }

    /// A POST form to `action` with the CSRF field and an id of its own (`FormSubmission`).
    static func post(_ action: String, csrf token: String, class className: String = "", multipart: Bool = false, _ content: HTML) -> HTML {
        let encoding: HTML = multipart ? " enctype=\"multipart/form-data\"" : .empty
        // The id twice (FormSubmission): as rendered, and in a text input that admin.js fills, which the browser
        // restores on Back with what was typed.
        let id = UUID.random().uuidString.lowercased()
        let formId: HTML = """
            <input type="hidden" name="\(FormSubmission.renderedField)" value="\(id)">\
            <input type="text" name="\(FormSubmission.field)" value="" data-form-id="\(id)" hidden aria-hidden="true" tabindex="-1">
            """
        // novalidate: the server's rules and messages are the ones shown, beside each field, in every browser.
        return "<form method=\"post\" action=\"\(action)\" class=\"\(className)\"\(encoding) novalidate>\(csrf(token))\(formId)\(content)</form>"
    }

    private static func errorLine(_ id: String, _ error: String?) -> HTML {
        guard let error else { return .empty }
        return "<p class=\"field-error\" id=\"\(id)-error\">\(error)</p>"
    }

    private static func describedBy(_ id: String, _ error: String?, _ hint: String?) -> HTML {
        var ids: [String] = []
        if hint != nil { ids.append("\(id)-hint") }
        if error != nil { ids.append("\(id)-error") }
        guard !ids.isEmpty else { return .empty }
        let invalid: HTML = error == nil ? .empty : " aria-invalid=\"true\""
        return " aria-describedby=\"\(ids.joined(separator: " "))\"\(invalid)"
    }

    private static func hintLine(_ id: String, _ hint: String?) -> HTML {
        guard let hint else { return .empty }
        return "<p class=\"hint\" id=\"\(id)-hint\">\(hint)</p>"
    }

    static func text(_ label: String, name: String, value: String, error: String? = nil, type: String = "text",
                     required: Bool = false, hint: String? = nil, id: String? = nil, attributes: HTML = .empty) -> HTML {
        let id = id ?? "field-\(name)"
        let requiredMark: HTML = required ? " required" : .empty
        return """
            <div class="field\(error == nil ? "" : " has-error")">
            <label for="\(id)">\(label)</label>
            <input type="\(type)" id="\(id)" name="\(name)" value="\(value)"\(requiredMark)\(describedBy(id, error, hint))\(attributes)>
            \(hintLine(id, hint))\(errorLine(id, error))
            </div>
            """
    }

    static func textarea(_ label: String, name: String, value: String, error: String? = nil, rows: Int = 4, hint: String? = nil) -> HTML {
        let id = "field-\(name)"
        return """
            <div class="field\(error == nil ? "" : " has-error")">
            <label for="\(id)">\(label)</label>
            <textarea id="\(id)" name="\(name)" rows="\(rows)"\(describedBy(id, error, hint))>\(value)</textarea>
            \(hintLine(id, hint))\(errorLine(id, error))
            </div>
            """
    }

    static func select(_ label: String, name: String, options: [(value: String, label: String)], selected: String,
                       error: String? = nil, hint: String? = nil, id: String? = nil) -> HTML {
        let id = id ?? "field-\(name)"
        let items: [HTML] = options.map { option in
            let mark: HTML = option.value == selected ? " selected" : .empty
            return "<option value=\"\(option.value)\"\(mark)>\(option.label)</option>"
        }
        return """
            <div class="field\(error == nil ? "" : " has-error")">
            <label for="\(id)">\(label)</label>
            <select id="\(id)" name="\(name)"\(describedBy(id, error, hint))>\(items)</select>
            \(hintLine(id, hint))\(errorLine(id, error))
            </div>
            """
    }

    /// A list to pick several from (the browser sends each chosen value under `name`).
    static func multiSelect(_ label: String, name: String, options: [(value: String, label: String)], selected: [String],
                            error: String? = nil, hint: String? = nil) -> HTML {
        let id = "field-\(name)"
        let items: [HTML] = options.map { option in
            "<option value=\"\(option.value)\"\(selected.contains(option.value) ? " selected" as HTML : .empty)>\(option.label)</option>"
        }
        return """
            <div class="field\(error == nil ? "" : " has-error")">
            <label for="\(id)">\(label)</label>
            <select id="\(id)" name="\(name)" multiple size="\(min(8, max(3, options.count)))"\(describedBy(id, error, hint))>\(items)</select>
            \(hintLine(id, hint))\(errorLine(id, error))
            </div>
            """
    }

    static func checkbox(_ label: String, name: String, checked: Bool, hint: String? = nil) -> HTML {
        let id = "field-\(name)"
        let mark: HTML = checked ? " checked" : .empty
        return """
            <div class="field checkbox">
            <input type="checkbox" id="\(id)" name="\(name)" value="1"\(mark)\(describedBy(id, nil, hint))>
            <label for="\(id)">\(label)</label>
            \(hintLine(id, hint))
            </div>
            """
    }

    static func submit(_ label: String, name: String? = nil, value: String? = nil, class className: String = "primary") -> HTML {
        let named: HTML = name.map { " name=\"\($0)\" value=\"\(value ?? "")\"" } ?? .empty
        return "<button type=\"submit\" class=\"\(className)\"\(named)>\(label)</button>"
    }

    /// Errors that belong to no field on the form, and a summary that the form has errors.
    static func errorSummary(_ errors: [String: String], fields: Set<String>, general: [String] = []) -> HTML {
        let loose = general + errors.filter { !fields.contains($0.key) }.sorted { $0.key < $1.key }.map(\.value)
        guard !errors.isEmpty || !general.isEmpty else { return .empty }
        let items: [HTML] = loose.map { "<li>\($0)</li>" }
        let list: HTML = items.isEmpty ? .empty : "<ul>\(items)</ul>"
        return "<div class=\"error-summary\" role=\"alert\"><p>Nothing was saved: please correct what is marked below.</p>\(list)</div>"
    }
}

/// An http(s) URL for an `href` or `src`; anything else becomes "#" (catalog already refuses other schemes).
func safeURL(_ text: String) -> String {
    guard let scheme = URLComponents(string: text)?.scheme?.lowercased(), scheme == "http" || scheme == "https" else { return "#" }
    return text
}

/// Field errors from a command result, by the form field they belong to ("links[2].url" → "links[2].url"
/// and "pictures[1]" → "pictures").
func fieldErrors(_ errors: [FieldError], listFields: Set<String> = ["pictures", "buildings"]) -> [String: String] {
    var byField: [String: String] = [:]
    for error in errors {
        var field = error.field
        if let bracket = field.firstIndex(of: "["), listFields.contains(String(field[..<bracket])) { field = String(field[..<bracket]) }
        // Alt texts are typed on the pictures' lines.
        if field == "pictureAlts" || field.hasPrefix("pictureAlts[") { field = "pictures" }
        byField[field] = byField[field].map { "\($0) \(error.message)" } ?? error.message
    }
    return byField
}
