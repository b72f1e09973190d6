/// The site's one script, served at /assets/admin.js (the content security policy allows only the admin's own
/// scripts). Pages work without it; it adds what HTML alone cannot do.
enum AdminScript {
    static let javaScript = """
        "use strict";
        // Forms safe to repeat (FormSubmission): the form's id moves into a text input, which the browser
        // restores on Back with the typed values, so Back + Save sends the same command again.
        for (const input of document.querySelectorAll("input[data-form-id]")) {
          if (!input.value) input.value = input.dataset.formId;
        }
        """
}
