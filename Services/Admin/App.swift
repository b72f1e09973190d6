import Hummingbird
import Shared

@main
struct AdminMain {
    static func main() async throws {
        let app = try buildApplication(settings: try ServiceSettings(serviceName: "admin", defaultPort: 8081))
        try await app.runService()
    }
}
