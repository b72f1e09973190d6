import Foundation
import Logging
import Shared
import Testing

@Suite("Configuration from the environment")
struct ConfigVariableTests {
    @Test("LOG_LEVEL takes swift-log's levels and warn; anything else is refused naming the valid values")
    func logLevel() throws {
        #expect(try Environment([:]).logLevel() == .info)
        #expect(try Environment(["LOG_LEVEL": "warn"]).logLevel() == .warning)
        #expect(try Environment(["LOG_LEVEL": "critical"]).logLevel() == .critical)
        let error = try #require(throws: ConfigurationError.self) { try Environment(["LOG_LEVEL": "loud"]).logLevel() }
        #expect(error.name == "LOG_LEVEL")
        for level in Logger.Level.allCases { #expect(error.message.contains(level.rawValue)) }
    }

    @Test("LOG_FORMAT is json or text, nothing else")
    func logFormat() throws {
        #expect(try Environment([:]).choice(.logFormat) == LogFormat.json)
        #expect(try Environment(["LOG_FORMAT": "text"]).choice(.logFormat) == LogFormat.text)
        #expect(throws: ConfigurationError.self) { try Environment(["LOG_FORMAT": "JSON "]).choice(.logFormat) as LogFormat }
        #expect(throws: ConfigurationError.self) {
            try ServiceSettings(serviceName: "x", defaultPort: 1, environment: Environment(["LOG_FORMAT": "xml"]))
        }
    }

    @Test("a required variable: its value, the demo value in demo mode, else an error naming it")
    func required() throws {
        #expect(try Environment(["REPORTS_TOKEN": "t"]).required(.reportsToken) == "t")
        #expect(try Environment(["ITOUR_DEMO": "1"]).required(.reportsToken) == "itour-demo-token")
        let error = try #require(throws: ConfigurationError.self) { try Environment([:]).required(.reportsToken) }
        #expect(error.name == "REPORTS_TOKEN")
        #expect(throws: ConfigurationError.self) { try Environment(["ITOUR_DEMO": "maybe"]).required(.reportsToken) }
    }

    @Test("defaults come from the declaration; an integer that is not one is refused")
    func defaults() throws {
        let settings = try ServiceSettings(serviceName: "x", defaultPort: 8099, environment: Environment([:]))
        #expect(settings.httpPort == 8099 && settings.database.port == 5433 && settings.kafka.brokers == "127.0.0.1:9092")
        #expect(throws: ConfigurationError.self) { try Environment(["POSTGRES_PORT": "five"]).int(.postgresPort) }
        #expect(Environment(["POSTGRES_PASSWORD": ""]).optionalString(.postgresPassword) == nil)
    }

    @Test("config --json's shape: name, required, secret, default (null when none), description")
    func json() throws {
        let text = ConfigVariable.json([.postgresPassword, .reportsToken, .httpPort(8080)])
        let list = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]])
        #expect(list.map { Set($0.keys) } == Array(repeating: ["name", "required", "secret", "default", "description"], count: 3))
        #expect(list[0]["name"] as? String == "POSTGRES_PASSWORD" && list[0]["secret"] as? Bool == true && list[0]["default"] is NSNull)
        #expect(list[1]["required"] as? Bool == true && list[1]["default"] is NSNull)
        #expect(list[2]["default"] as? String == "8080" && list[2]["required"] as? Bool == false)
    }
}
