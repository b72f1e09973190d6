import ArgumentParser
import Foundation
import Logging

/// What each executable declares about itself, for what every one of them has: `--help` naming its
/// environment variables, `config [--json]`, and one way of failing.
public protocol Program {
    /// The executable's name, as in usage and logs.
    static var name: String { get }
    /// Every environment variable it reads (`Environment.declare` holds the code to it).
    static var variables: [ConfigVariable] { get }
}

extension Program {
    /// `--help`'s word on the environment: the variables by name (help wraps its text, so no table here).
    public static var environmentHelp: String {
        func names(_ variables: [ConfigVariable]) -> String {
            variables.map { $0.name + ($0.isSecret ? " (secret)" : "") }.joined(separator: ", ")
        }
        let required = variables.filter(\.isRequired), optional = variables.filter { !$0.isRequired }
        return """
            Configuration comes from environment variables; `\(name) config` describes each, `\(name) config --json` \
            lists them as JSON.
            """
            + (required.isEmpty ? "" : "\n\nRequired outside demo mode (ITOUR_DEMO=1): \(names(required)).")
            + "\n\nOptional: \(names(optional))."
    }

    /// Runs a service until it stops. A failure, at start (bad configuration, Postgres unreachable) or later,
    /// ends as ONE critical log line and exit 1, instead of ArgumentParser's "Error: …" or a crash report.
    public static func runService(_ body: (Environment) async throws -> Void) async throws {
        Environment.declare(variables)
        do {
            try await body(Environment())
        } catch {
            let environment = Environment()
            // The service's own format when it got that far; a configuration error may come before logging is set up.
            LoggingSetup.bootstrap(format: (try? environment.choice(ConfigVariable.logFormat)) ?? .json, level: .info)
            Logger(label: name).critical("exiting: \(describe(error, environment: environment))", source: name)
            throw ExitCode.failure
        }
    }

    /// The error, naming Postgres when its connection pool gave up on it: the pool's own error (its circuit
    /// breaker, which can trip while start-up is still retrying) says nothing of where it looked.
    static func describe(_ error: any Error, environment: Environment) -> String {
        guard String(reflecting: type(of: error)).contains("ConnectionPoolError") else { return "\(error)" }
        let postgres = "\(environment.string(ConfigVariable.postgresHost)):\(environment.string(ConfigVariable.postgresPort))"
        return "Postgres (\(postgres)) cannot be reached: \(error)"
    }

    /// Runs a one-off command (an import, a replay, a benchmark): a failure is one line on stderr,
    /// `<name> <command>: <error>`, and exit 1.
    public static func runTool(_ command: String, _ body: (Environment) async throws -> Void) async throws {
        Environment.declare(variables)
        do {
            try await body(Environment())
        } catch let exit as ExitCode {
            throw exit
        } catch {
            FileHandle.standardError.write(Data("\(name) \(command): \(error)\n".utf8))
            throw ExitCode.failure
        }
    }
}

/// `<program> config [--json]`: the environment variables the program reads. The JSON is
/// `[{"name": String, "required": Bool, "secret": Bool, "default": String or null, "description": String}]`,
/// which the deployment test checks compose and Kubernetes against.
public struct ConfigCommand<P: Program>: ParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "config",
            abstract: "Print the environment variables \(P.name) reads.",
            discussion: """
            Required: must be set outside demo mode (ITOUR_DEMO=1), where a demo value stands in. Secret: a credential, \
            for a Secret rather than a ConfigMap. Default: the value when unset (null: none).
            """)
    }

    @ArgumentParser.Flag(help: "JSON: [{\"name\", \"required\", \"secret\", \"default\", \"description\"}].")
    var json = false

    public init() {}

    public func run() {
        print(json ? ConfigVariable.json(P.variables) : ConfigVariable.table(P.variables))
    }
}

/// An executable that runs a service: `serve`, its default command, and the root command's configuration.
public protocol ServiceProgram: Program {
    /// The port it listens on unless HTTP_PORT says otherwise.
    static var port: Int { get }
    /// One line for `--help`: what the service does.
    static var abstract: String { get }
    /// Builds the service from the environment and runs it until it stops.
    static func serve(environment: Environment) async throws
}

extension ServiceProgram {
    /// The root command: `--version`, the environment in `--help`, `serve` as the default subcommand.
    public static func rootConfiguration(others: [any ParsableCommand.Type] = []) -> CommandConfiguration {
        CommandConfiguration(commandName: name, abstract: abstract, discussion: environmentHelp, version: BuildInfo.version,
                             subcommands: [ServeCommand<Self>.self] + others + [ConfigCommand<Self>.self],
                             defaultSubcommand: ServeCommand<Self>.self)
    }
}

/// `<service> serve`: runs the service (what runs with no command).
public struct ServeCommand<P: ServiceProgram>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: "serve", abstract: "Run the \(P.name) service (what runs with no command).")
    }

    public init() {}

    public func run() async throws {
        try await P.runService { environment in try await P.serve(environment: environment) }
    }
}
