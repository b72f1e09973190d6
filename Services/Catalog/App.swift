import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import Shared

@main
struct CatalogMain {
    static func main() async throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        do {
            let settings = try ServiceSettings(serviceName: "catalog", defaultPort: 8082)
            switch arguments.first {
            case nil, "serve":
                let app = try buildApplication(settings: settings)
                try await app.runService()
            case "load-demo", "import":
                guard arguments.count >= 2 else { throw UsageError() }
                try await ContentImport.run(arguments: Array(arguments.dropFirst()), settings: settings)
            default:
                throw UsageError()
            }
        } catch let error as UsageError {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            exit(64)
        } catch let error as ConfigurationError {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            exit(78)
        } catch let error as ImportError {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            exit(65)
        }
    }
}

struct UsageError: Error, CustomStringConvertible {
    var description: String {
        """
        usage: catalog [serve]            run the catalog service
               catalog import FILE [--skip-bad-rows]
                                          import the tours, POIs and categories of FILE (.json in the demo
                                          file's format, or .csv) as one catalog.import command: all or
                                          nothing, or with --skip-bad-rows the good rows; prints a per-row report
               catalog load-demo FILE     the same, for the demo content
        """
    }
}
