import Foundation

/// How the clients reach the broker: librdkafka's `security.protocol`, with the TLS (`ssl.*`) and SASL (`sasl.*`)
/// settings it takes. The protocol is not stored but follows from which of the two are on, so no setting the
/// protocol would ignore (a SASL password on a PLAINTEXT connection, a CA on one without TLS) can be built.
public struct KafkaSecurity: Sendable, Equatable {
    /// TLS to the broker; nil: none.
    public var tls: TLS?
    /// SASL authentication; nil: none.
    public var sasl: SASL?

    public init(tls: TLS? = nil, sasl: SASL? = nil) {
        self.tls = tls
        self.sasl = sasl
    }

    /// Neither TLS nor SASL (librdkafka's default; the local broker of `make up` and `make test`).
    public static let plaintext = KafkaSecurity()

    /// `security.protocol`, librdkafka's and Kafka's names.
    public enum SecurityProtocol: String, CaseIterable, Sendable {
        case plaintext = "PLAINTEXT"
        case ssl = "SSL"
        case saslPlaintext = "SASL_PLAINTEXT"
        case saslSSL = "SASL_SSL"

        public var usesTLS: Bool { self == .ssl || self == .saslSSL }
        public var usesSASL: Bool { self == .saslPlaintext || self == .saslSSL }
    }

    public var securityProtocol: SecurityProtocol {
        switch (tls != nil, sasl != nil) {
        case (false, false): .plaintext
        case (true, false): .ssl
        case (false, true): .saslPlaintext
        case (true, true): .saslSSL
        }
    }

    /// TLS settings. librdkafka checks the broker's certificate chain and that it names the host it connects to
    /// (`ssl.endpoint.identification.algorithm=https`, set here whatever the library's default).
    public struct TLS: Sendable, Equatable {
        /// `ssl.ca.location`: PEM file (or directory) of the certificate authorities the broker's certificate must
        /// chain to; nil: the system's.
        public var caLocation: String?
        /// The client's own certificate, for brokers that authenticate clients by certificate (mutual TLS).
        public var clientCertificate: ClientCertificate?

        public init(caLocation: String? = nil, clientCertificate: ClientCertificate? = nil) {
            self.caLocation = caLocation
            self.clientCertificate = clientCertificate
        }
    }

    /// `ssl.certificate.location` and `ssl.key.location`: PEM files; the key unencrypted.
    public struct ClientCertificate: Sendable, Equatable {
        public var certificateLocation: String
        public var keyLocation: String

        public init(certificateLocation: String, keyLocation: String) {
            self.certificateLocation = certificateLocation
            self.keyLocation = keyLocation
        }
    }

    /// `sasl.mechanisms`, `sasl.username`, `sasl.password`.
    public struct SASL: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
        public enum Mechanism: String, CaseIterable, Sendable {
            case plain = "PLAIN"
            case scramSHA256 = "SCRAM-SHA-256"
            case scramSHA512 = "SCRAM-SHA-512"
        }

        public var mechanism: Mechanism
        public var username: String
        public var password: String

        public init(mechanism: Mechanism, username: String, password: String) {
            self.mechanism = mechanism
            self.username = username
            self.password = password
        }

        /// Without the credentials, should a configuration ever be printed.
        public var description: String { "SASL(\(mechanism.rawValue), username and password hidden)" }
        public var debugDescription: String { description }
    }

    /// The librdkafka properties these settings make, `security.protocol` always among them.
    var properties: [String: String] {
        var properties = ["security.protocol": securityProtocol.rawValue]
        if let tls {
            properties["ssl.endpoint.identification.algorithm"] = "https"
            properties["enable.ssl.certificate.verification"] = "true"
            if let caLocation = tls.caLocation { properties["ssl.ca.location"] = caLocation }
            if let certificate = tls.clientCertificate {
                properties["ssl.certificate.location"] = certificate.certificateLocation
                properties["ssl.key.location"] = certificate.keyLocation
            }
        }
        if let sasl {
            properties["sasl.mechanisms"] = sasl.mechanism.rawValue
            properties["sasl.username"] = sasl.username
            properties["sasl.password"] = sasl.password
        }
        return properties
    }
}

// MARK: - From the environment

extension ConfigVariable {
    public static let kafkaSecurityProtocol = optional(
        "KAFKA_SECURITY_PROTOCOL", default: KafkaSecurity.SecurityProtocol.plaintext.rawValue,
        "how the services reach the broker: PLAINTEXT, SSL (TLS), SASL_PLAINTEXT or SASL_SSL (SASL over TLS)")
    public static let kafkaSASLMechanism = optional(
        "KAFKA_SASL_MECHANISM", default: nil, "with a SASL_* protocol (and only then): PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")
    public static let kafkaSASLUsername = optional(
        "KAFKA_SASL_USERNAME", default: nil, secret: true, "SASL user name, with a SASL_* protocol")
    public static let kafkaSASLPassword = optional(
        "KAFKA_SASL_PASSWORD", default: nil, secret: true, "SASL password, with a SASL_* protocol")
    public static let kafkaSSLCALocation = optional(
        "KAFKA_SSL_CA_LOCATION", default: nil,
        "with SSL or SASL_SSL: PEM file (or directory) of the CAs the broker's certificate must chain to; unset: the system's")
    public static let kafkaSSLCertificateLocation = optional(
        "KAFKA_SSL_CERTIFICATE_LOCATION", default: nil,
        "with SSL or SASL_SSL, for brokers that check client certificates: the client's certificate (PEM), with KAFKA_SSL_KEY_LOCATION")
    public static let kafkaSSLKeyLocation = optional(
        "KAFKA_SSL_KEY_LOCATION", default: nil, "the private key (PEM, unencrypted) of KAFKA_SSL_CERTIFICATE_LOCATION")
}

extension KafkaSecurity {
    /// The variables `init(environment:)` reads.
    public static let variables: [ConfigVariable] = [
        .kafkaSecurityProtocol, .kafkaSASLMechanism, .kafkaSASLUsername, .kafkaSASLPassword,
        .kafkaSSLCALocation, .kafkaSSLCertificateLocation, .kafkaSSLKeyLocation,
    ]

    /// Reads `KAFKA_SECURITY_PROTOCOL` and the settings it takes. Refused at start, naming the variable: a value
    /// librdkafka does not know, a setting the protocol would ignore (SASL without a SASL protocol, a CA or
    /// certificate without TLS), a SASL protocol without its mechanism, user name or password, a certificate
    /// without its key (or the reverse), and a file that cannot be read.
    public init(environment: Environment) throws {
        let securityProtocol: SecurityProtocol = try environment.choice(.kafkaSecurityProtocol)
        let protocolSetting = "\(ConfigVariable.kafkaSecurityProtocol.name) is \(securityProtocol.rawValue)"

        func ignored(_ variables: [ConfigVariable], because reason: String) throws {
            for variable in variables where environment.optionalString(variable) != nil {
                throw ConfigurationError(name: variable.name, message: "is set, but \(protocolSetting), \(reason)")
            }
        }
        func needed(_ variable: ConfigVariable) throws -> String {
            guard let value = environment.optionalString(variable) else {
                throw ConfigurationError(name: variable.name, message: "must be set when \(protocolSetting)")
            }
            return value
        }
        func readable(_ variable: ConfigVariable, directoryAllowed: Bool = false) throws -> String? {
            guard let path = environment.optionalString(variable) else { return nil }
            var isDirectory: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
            guard exists, isDirectory.boolValue ? directoryAllowed : FileManager.default.isReadableFile(atPath: path) else {
                throw ConfigurationError(name: variable.name, message: "names \(path), which is not a readable file\(directoryAllowed ? " or directory" : "")")
            }
            return path
        }

        if securityProtocol.usesSASL {
            guard environment.optionalString(.kafkaSASLMechanism) != nil else {
                let mechanisms = SASL.Mechanism.allCases.map(\.rawValue).joined(separator: ", ")
                throw ConfigurationError(name: ConfigVariable.kafkaSASLMechanism.name, message: "must be set when \(protocolSetting): one of \(mechanisms)")
            }
            let mechanism: SASL.Mechanism = try environment.choice(.kafkaSASLMechanism)
            let username = try needed(.kafkaSASLUsername)
            let password = try needed(.kafkaSASLPassword)
            sasl = SASL(mechanism: mechanism, username: username, password: password)
        } else {
            try ignored([.kafkaSASLMechanism, .kafkaSASLUsername, .kafkaSASLPassword],
                        because: "which does not authenticate with SASL (SASL_SSL or SASL_PLAINTEXT do)")
            sasl = nil
        }

        if securityProtocol.usesTLS {
            let caLocation = try readable(.kafkaSSLCALocation, directoryAllowed: true)
            let certificate = try readable(.kafkaSSLCertificateLocation)
            let key = try readable(.kafkaSSLKeyLocation)
            switch (certificate, key) {
            case (nil, nil):
                tls = TLS(caLocation: caLocation)
            case let (certificate?, key?):
                tls = TLS(caLocation: caLocation, clientCertificate: ClientCertificate(certificateLocation: certificate, keyLocation: key))
            case (_?, nil):
                throw ConfigurationError(name: ConfigVariable.kafkaSSLKeyLocation.name, message: "must be set with KAFKA_SSL_CERTIFICATE_LOCATION (the certificate's private key)")
            case (nil, _?):
                throw ConfigurationError(name: ConfigVariable.kafkaSSLCertificateLocation.name, message: "must be set with KAFKA_SSL_KEY_LOCATION (the certificate the key belongs to)")
            }
        } else {
            try ignored([.kafkaSSLCALocation, .kafkaSSLCertificateLocation, .kafkaSSLKeyLocation],
                        because: "which does not use TLS (SSL or SASL_SSL do)")
            tls = nil
        }
    }
}
