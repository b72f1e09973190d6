import Foundation
import Hummingbird
import Shared

@main
struct AdminMain {
    static func main() async throws {
        do {
            let app = try buildApplication(settings: try ServiceSettings(serviceName: "admin", defaultPort: 8081), admin: try AdminSettings())
            try await app.runService()
        } catch let error as ConfigurationError {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            exit(78)
        }
    }
}
