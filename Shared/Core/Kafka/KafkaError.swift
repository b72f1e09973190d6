/// An error from librdkafka or from this wrapper, carrying librdkafka's code and message (read from
/// librdkafka's codes in `RDKafka/RDKafkaError.swift`).
public struct KafkaError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable, Equatable {
        /// librdkafka rejected a configuration property.
        case configuration
        /// Creating the client handle failed.
        case clientCreation
        /// A call to librdkafka returned an error code.
        case librdkafka(code: Int32)
        /// The client was closed before the operation finished.
        case closed
        /// A message could not be encoded or decoded.
        case message
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// `error` itself when it is a `KafkaError`, else its text as a `.message` error.
    init(_ error: any Error) {
        self = error as? KafkaError ?? KafkaError(.message, "\(error)")
    }

    public var description: String { "KafkaError(\(kind)): \(message)" }
}
