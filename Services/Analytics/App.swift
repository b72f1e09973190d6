import Hummingbird
import Shared

@main
struct AnalyticsMain {
    static func main() async throws {
        let app = try buildApplication(settings: try ServiceSettings(serviceName: "analytics", defaultPort: 8083))
        try await app.runService()
    }
}
