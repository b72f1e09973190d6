import Foundation

/// The lines that end every answer made in the pipeline: `Date` (IMF-fixdate), `Server` and the empty line, made
/// at most once a second. Hummingbird keeps a date for the router's answers, but not one others can read (its
/// `DateCache` is internal).
struct ResponseTail {
    private let serverName: String
    private var second = 0
    private var text = ""

    init(serverName: String) {
        self.serverName = serverName
    }

    mutating func current() -> String {
        var now = time_t()
        time(&now)
        if Int(now) != second || text.isEmpty {
            second = Int(now)
            var parts = tm()
            gmtime_r(&now, &parts)
            let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"], months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
            func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
            text = "Date: \(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
                + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT\r\nServer: \(serverName)\r\n\r\n"
        }
        return text
    }
}
