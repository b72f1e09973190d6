import Foundation
import Logging
import Synchronization

/// `LOG_FORMAT`: JSON lines (one object per line, for log shippers) or swift-log's text lines.
public enum LogFormat: String, Sendable, CaseIterable {
    case json, text
}

public enum LoggingSetup {
    private static let done = Mutex(false)

    /// Bootstraps swift-log once per process; later calls change nothing.
    public static func bootstrap(format: LogFormat, level: Logger.Level) {
        done.withLock { done in
            guard !done else { return }
            done = true
            LoggingSystem.bootstrap { label in
                var handler: any LogHandler = switch format {
                case .text: StreamLogHandler.standardError(label: label)
                case .json: JSONLogHandler(label: label)
                }
                handler.logLevel = level
                return handler
            }
        }
    }
}

/// Writes each log record as one JSON object on stderr.
public struct JSONLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    private let label: String

    public init(label: String) { self.label = label }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var record: [String: String] = [
            "ts": RFC3339.format(Date()), "level": event.level.rawValue, "logger": label, "msg": "\(event.message)",
        ]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) {
            record[key] = "\(value)"
        }
        guard var line = try? JSONSerialization.data(withJSONObject: record, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        line.append(0x0A)
        FileHandle.standardError.write(line)
    }
}
