import Hummingbird
import Shared

@main
struct FeedMain {
    static func main() async throws {
        let app = try buildApplication(settings: try ServiceSettings(serviceName: "feed", defaultPort: 8080))
        try await app.runService()
    }
}
