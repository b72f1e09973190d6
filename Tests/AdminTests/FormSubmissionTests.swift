import Foundation
import Shared
import Testing
@testable import Admin

@Suite("Forms safe to repeat")
struct FormSubmissionTests {
    let user = UUID()
    let formId = UUID().uuidString.lowercased()

    func form(_ fields: [(String, String)]) -> FormData {
        var form = FormData()
        for (name, value) in fields { form.fields[name, default: []].append(value) }
        return form
    }

    @Test("the same form, user and values give the same command id, whatever the field order and CSRF token")
    func sameSubmission() throws {
        let first = try #require(FormSubmission.commandId(form: form([("formId", formId), ("name", "Open Day"), ("csrf_token", "a")]), userId: user))
        let again = FormSubmission.commandId(form: form([("name", "Open Day"), ("csrf_token", "b"), ("formId", formId)]), userId: user)
        #expect(first == again)
        // Back restores the id into `formId`; a double click without the script sends only the rendered one.
        #expect(FormSubmission.commandId(form: form([("formIdRendered", formId), ("name", "Open Day")]), userId: user) == first)
        #expect(FormSubmission.commandId(form: form([("formId", formId), ("formIdRendered", UUID().uuidString), ("name", "Open Day")]),
                                         userId: user) == first, "the restored id wins over the newly rendered one")
    }

    @Test("another value, another user, another form or a value moved between fields is another command")
    func differentSubmissions() throws {
        let base = try #require(FormSubmission.commandId(form: form([("formId", formId), ("name", "ab"), ("summary", "")]), userId: user))
        #expect(FormSubmission.commandId(form: form([("formId", formId), ("name", "ab "), ("summary", "")]), userId: user) != base)
        #expect(FormSubmission.commandId(form: form([("formId", formId), ("name", "a"), ("summary", "b")]), userId: user) != base)
        #expect(FormSubmission.commandId(form: form([("formId", formId), ("name", "ab"), ("summary", "")]), userId: UUID()) != base)
        #expect(FormSubmission.commandId(form: form([("formId", UUID().uuidString), ("name", "ab"), ("summary", "")]), userId: user) != base)
        #expect(FormSubmission.commandId(form: form([("formId", formId), ("name", "ab"), ("name", ""), ("summary", "")]), userId: user) != base)
    }

    @Test("the same submission for another entity or action is another command; a create's new entity id is not part of it")
    func scoped() throws {
        let fields = form([("formId", formId), ("name", "Open Day")])
        let tour = UUID(), other = UUID()
        func command(_ action: CatalogAction, _ entity: UUID) -> CatalogCommand { CatalogCommand(action: action, actor: "a@example.edu", entityId: entity) }
        let base = FormSubmission.commandId(form: fields, userId: user, scope: FormSubmission.scope(of: command(.updateTour, tour)))
        #expect(base != nil)
        #expect(FormSubmission.commandId(form: fields, userId: user, scope: FormSubmission.scope(of: command(.updateTour, other))) != base)
        #expect(FormSubmission.commandId(form: fields, userId: user, scope: FormSubmission.scope(of: command(.setTourStops, tour))) != base)
        #expect(FormSubmission.scope(of: command(.createTour, tour)) == FormSubmission.scope(of: command(.createTour, other)))
    }

    @Test("a form without an id (a script's POST) has no submission id; a malformed id counts as none")
    func noFormId() {
        #expect(FormSubmission.commandId(form: form([("name", "x")]), userId: user) == nil)
        #expect(FormSubmission.commandId(form: form([("formId", "not-a-uuid"), ("name", "x")]), userId: user) == nil)
    }
}
