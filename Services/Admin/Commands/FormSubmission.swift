import Crypto
import Foundation
import Shared

/// Forms safe to repeat (docs/DESIGN.md, "Admin forms"): every form the admin renders carries a `formId` of
/// its own, and the command a submission sends is named by that id, the user and the values sent. Pressing
/// Save twice, or Back and Save again, sends the same command, which catalog applies once and answers again,
/// marked `repeated`; changed values are a new command.
enum FormSubmission {
    /// The id as `Forms.post` rendered it (`type=hidden`): the same for a double click, but a page shown again by
    /// Back is fetched anew (admin pages are `no-store`) and renders a new one.
    static let renderedField = "formIdRendered"
    /// The id admin.js copies into a text input (`hidden` attribute) once the page is shown. Browsers restore a
    /// text input's value on Back, with the typed ones, when it differs from the value in the HTML (here
    /// empty), never a `type=hidden` input's: so Back + Save sends the first page's id.
    static let field = "formId"

    /// The command id of a submission of `form` by `userId` for `scope` (what the command acts on: `scope(of:)`); nil
    /// when the form has no `formId` (a script's POST), which then gets a fresh id per request, as before.
    static func commandId(form: FormData, userId: UUID, scope: String = "") -> UUID? {
        guard let formId = form.uuid(field) ?? form.uuid(renderedField) else { return nil }
        var hasher = SHA256()
        func add(_ text: String) {
            // Length-prefixed, so no two different field lists hash the same bytes.
            withUnsafeBytes(of: UInt64(text.utf8.count).littleEndian) { hasher.update(bufferPointer: $0) }
            hasher.update(data: Array(text.utf8))
        }
        add(userId.uuidString)
        add(formId.uuidString)
        // The same form id and values sent for another tour (a form posted to another address) is another command, not
        // a repeat of the first (issue 43: it was answered "Already saved" and changed nothing).
        add(scope)
        // Field order is the page's; sorting by name makes it irrelevant. The CSRF token is left out: it is the
        // session's, and a repeat after logging in again is still a repeat.
        for (name, values) in form.fields.sorted(by: { $0.key < $1.key }) where ![AdminCookie.csrfField, field, renderedField].contains(name) {
            add(name)
            for value in values { add(value) }
        }
        for (name, file) in form.files.sorted(by: { $0.key < $1.key }) {
            add(name)
            add(file.fileName)
            hasher.update(data: file.data)
        }
        var bytes = Array(hasher.finalize().prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x80   // version 8 (custom), RFC 9562
        bytes[8] = (bytes[8] & 0x3F) | 0x80   // variant 10
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}

extension FormSubmission {
    /// What a command acts on: its action, and its entity unless it makes one (a create's entity id is new each
    /// request, and a double click must stay one command).
    static func scope(of command: CatalogCommand) -> String {
        let action = command.action.rawValue
        guard !action.hasSuffix(".create"), let entity = command.entityId else { return action }
        return "\(action) \(entity.uuidString.lowercased())"
    }
}

extension CatalogWriter {
    /// Sends `command` for the form posted in `context`: named by the submission (`FormSubmission`) when the
    /// form has an id, with the request's id for the logs.
    func execute(_ command: CatalogCommand, for context: AdminRequestContext) async throws(CatalogWriteError) -> CatalogCommandResult {
        var command = command
        if let user = context.session?.user, let id = FormSubmission.commandId(form: context.form, userId: user.id, scope: FormSubmission.scope(of: command)) {
            command.commandId = id
        }
        return try await execute(command, requestId: RequestIdMiddleware.id(of: context))
    }
}
