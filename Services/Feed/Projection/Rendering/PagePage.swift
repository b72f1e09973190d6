import Foundation
import Shared

/// A content page for the app's embedded browser, as the POI page is made.
enum PagePage {
    static func render(_ page: PageState, html: String, language: String) -> [UInt8] {
        var document = PoiPage.documentStart(title: page.content.title, summary: page.content.summary, language: language)
        document += html
        document += "\n</body></html>\n"
        return Array(document.utf8)
    }
}
