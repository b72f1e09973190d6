import Foundation
import Glibc
import Logging
import NIOSSL
@testable import Shared
import Synchronization
import Testing
import TestSupport

/// `KAFKA_SECURITY_PROTOCOL` and the TLS and SASL settings beside it: what librdkafka receives, what is refused at
/// start, and what a broker makes of it. tansu 0.6.0 serves no TLS of its own (its `--cert`/`--key` are never used)
/// and keeps no SCRAM users in its memory engine (docs/PLATFORM.md, "Secured connections"), so TLS runs through a
/// TLS-terminating proxy in front of it, and SASL is shown as far as tansu takes it: to the broker's refusal.
@Suite("Kafka TLS and SASL", .serialized, .stopsIfHung)
struct KafkaSecurityTests {
    // MARK: - Settings

    @Test("unset, the clients speak PLAINTEXT and are given no ssl.* or sasl.* property")
    func plaintextByDefault() throws {
        let settings = try ServiceSettings(serviceName: "x", defaultPort: 1, environment: Environment([:]))
        #expect(settings.kafka.security == .plaintext)
        let properties = settings.kafka.producerProperties
        #expect(properties["security.protocol"] == "PLAINTEXT")
        #expect(properties.keys.filter { $0.hasPrefix("ssl.") || $0.hasPrefix("sasl.") }.isEmpty, "\(properties.keys.sorted())")
    }

    @Test("SASL_SSL with SCRAM, a CA and a client certificate become librdkafka's properties, for producers and consumers alike")
    func saslSSLProperties() throws {
        let files = try ScratchFiles()
        defer { files.remove() }
        let environment = Environment([
            "KAFKA_SECURITY_PROTOCOL": "SASL_SSL", "KAFKA_SASL_MECHANISM": "SCRAM-SHA-512",
            "KAFKA_SASL_USERNAME": "itour-catalog", "KAFKA_SASL_PASSWORD": "s3cret",
            "KAFKA_SSL_CA_LOCATION": files.ca, "KAFKA_SSL_CERTIFICATE_LOCATION": files.certificate, "KAFKA_SSL_KEY_LOCATION": files.key,
        ])
        let kafka = try ServiceSettings(serviceName: "catalog", defaultPort: 1, environment: environment).kafka
        #expect(kafka.security.securityProtocol == .saslSSL)
        let expected = [
            "security.protocol": "SASL_SSL", "sasl.mechanisms": "SCRAM-SHA-512", "sasl.username": "itour-catalog", "sasl.password": "s3cret",
            "ssl.ca.location": files.ca, "ssl.certificate.location": files.certificate, "ssl.key.location": files.key,
            "ssl.endpoint.identification.algorithm": "https", "enable.ssl.certificate.verification": "true",
        ]
        for properties in [kafka.producerProperties, kafka.consumerProperties(groupId: "g")] {
            for (key, value) in expected { #expect(properties[key] == value, "\(key)") }
        }
        #expect(!"\(kafka.security)".contains("s3cret"), "a printed configuration shows the password")
    }

    @Test("SSL alone and SASL_PLAINTEXT alone take only their own half")
    func eachHalf() throws {
        let files = try ScratchFiles()
        defer { files.remove() }
        let ssl = try KafkaSecurity(environment: Environment(["KAFKA_SECURITY_PROTOCOL": "SSL", "KAFKA_SSL_CA_LOCATION": files.ca]))
        #expect(ssl == KafkaSecurity(tls: .init(caLocation: files.ca)))
        #expect(ssl.properties["security.protocol"] == "SSL" && ssl.properties["sasl.mechanisms"] == nil)
        // No CA named: the system's (librdkafka's own default), and the certificate is still checked.
        let systemCAs = try KafkaSecurity(environment: Environment(["KAFKA_SECURITY_PROTOCOL": "SSL"]))
        #expect(systemCAs.properties["ssl.ca.location"] == nil && systemCAs.properties["enable.ssl.certificate.verification"] == "true")

        let sasl = try KafkaSecurity(environment: Environment(["KAFKA_SECURITY_PROTOCOL": "SASL_PLAINTEXT", "KAFKA_SASL_MECHANISM": "PLAIN",
                                                               "KAFKA_SASL_USERNAME": "u", "KAFKA_SASL_PASSWORD": "p"]))
        #expect(sasl.properties == ["security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": "PLAIN", "sasl.username": "u", "sasl.password": "p"])
    }

    @Test("a value librdkafka does not know, or a combination it would ignore or refuse, stops the service at start naming the variable",
          arguments: [
              (["KAFKA_SECURITY_PROTOCOL": "TLS"], "KAFKA_SECURITY_PROTOCOL"),
              (["KAFKA_SECURITY_PROTOCOL": "ssl"], "KAFKA_SECURITY_PROTOCOL"),
              (["KAFKA_SASL_MECHANISM": "PLAIN"], "KAFKA_SASL_MECHANISM"),
              (["KAFKA_SASL_USERNAME": "u", "KAFKA_SASL_PASSWORD": "hunter2"], "KAFKA_SASL_USERNAME"),
              (["KAFKA_SECURITY_PROTOCOL": "SSL", "KAFKA_SASL_PASSWORD": "hunter2"], "KAFKA_SASL_PASSWORD"),
              (["KAFKA_SECURITY_PROTOCOL": "SASL_SSL", "KAFKA_SASL_USERNAME": "u", "KAFKA_SASL_PASSWORD": "hunter2"], "KAFKA_SASL_MECHANISM"),
              (["KAFKA_SECURITY_PROTOCOL": "SASL_SSL", "KAFKA_SASL_MECHANISM": "GSSAPI", "KAFKA_SASL_USERNAME": "u",
                "KAFKA_SASL_PASSWORD": "hunter2"], "KAFKA_SASL_MECHANISM"),
              (["KAFKA_SECURITY_PROTOCOL": "SASL_SSL", "KAFKA_SASL_MECHANISM": "SCRAM-SHA-256", "KAFKA_SASL_USERNAME": "u"], "KAFKA_SASL_PASSWORD"),
              (["KAFKA_SECURITY_PROTOCOL": "SASL_PLAINTEXT", "KAFKA_SASL_MECHANISM": "PLAIN", "KAFKA_SASL_PASSWORD": "hunter2"], "KAFKA_SASL_USERNAME"),
              (["KAFKA_SECURITY_PROTOCOL": "SASL_PLAINTEXT", "KAFKA_SASL_MECHANISM": "PLAIN", "KAFKA_SASL_USERNAME": "u",
                "KAFKA_SASL_PASSWORD": "hunter2", "KAFKA_SSL_CA_LOCATION": "<ca>"], "KAFKA_SSL_CA_LOCATION"),
              (["KAFKA_SSL_CERTIFICATE_LOCATION": "<certificate>", "KAFKA_SSL_KEY_LOCATION": "<key>"], "KAFKA_SSL_CERTIFICATE_LOCATION"),
              (["KAFKA_SECURITY_PROTOCOL": "SSL", "KAFKA_SSL_CERTIFICATE_LOCATION": "<certificate>"], "KAFKA_SSL_KEY_LOCATION"),
              (["KAFKA_SECURITY_PROTOCOL": "SSL", "KAFKA_SSL_KEY_LOCATION": "<key>"], "KAFKA_SSL_CERTIFICATE_LOCATION"),
              (["KAFKA_SECURITY_PROTOCOL": "SSL", "KAFKA_SSL_CA_LOCATION": "/nonexistent/ca.pem"], "KAFKA_SSL_CA_LOCATION"),
              (["KAFKA_SECURITY_PROTOCOL": "SSL", "KAFKA_SSL_CERTIFICATE_LOCATION": "<directory>", "KAFKA_SSL_KEY_LOCATION": "<key>"],
               "KAFKA_SSL_CERTIFICATE_LOCATION"),
              (["POSTGRES_SSLMODE": "prefer"], "POSTGRES_SSLMODE"),
              (["POSTGRES_SSL_ROOT_CERT": "<ca>"], "POSTGRES_SSL_ROOT_CERT"),
              (["POSTGRES_SSLMODE": "require", "POSTGRES_SSL_ROOT_CERT": "<ca>"], "POSTGRES_SSL_ROOT_CERT"),
              (["POSTGRES_SSLMODE": "verify-full", "POSTGRES_SSL_ROOT_CERT": "/nonexistent/root.crt"], "POSTGRES_SSL_ROOT_CERT"),
              (["POSTGRES_SSLMODE": "verify-ca", "POSTGRES_SSL_ROOT_CERT": "<key>"], "POSTGRES_SSL_ROOT_CERT"),
          ])
    func refusedAtStart(values: [String: String], variable: String) throws {
        let files = try ScratchFiles()
        defer { files.remove() }
        let environment = Environment(values.mapValues(files.resolve))
        let error = try #require(throws: ConfigurationError.self) {
            try ServiceSettings(serviceName: "x", defaultPort: 1, environment: environment)
        }
        #expect(error.name == variable, "\(error)")
        #expect(!error.description.contains("hunter2"), "the refusal shows a password: \(error)")
    }

    @Test("the Postgres TLS settings: disable by default; the verify modes take a root certificate (a readable PEM file)")
    func postgresSettings() throws {
        let files = try ScratchFiles()
        defer { files.remove() }
        let unset = try DatabaseSettings(environment: Environment([:]))
        #expect(unset.sslMode == .disable && unset.sslRootCertificate == nil && unset.tlsConfiguration == nil)
        let full = try DatabaseSettings(environment: Environment(["POSTGRES_SSLMODE": "verify-full", "POSTGRES_SSL_ROOT_CERT": files.ca]))
        #expect(full.sslMode == .verifyFull && full.sslRootCertificate == files.ca)
        #expect(full.tlsConfiguration?.certificateVerification == .fullVerification)
        #expect(full.tlsConfiguration?.trustRoots == .file(files.ca))
        let chainOnly = try DatabaseSettings(environment: Environment(["POSTGRES_SSLMODE": "verify-ca"]))
        #expect(chainOnly.tlsConfiguration?.certificateVerification == .noHostnameVerification)
        #expect(chainOnly.tlsConfiguration?.trustRoots == .default)
        let unchecked = try DatabaseSettings(environment: Environment(["POSTGRES_SSLMODE": "require"]))
        #expect(unchecked.tlsConfiguration?.certificateVerification == CertificateVerification.none)
    }

    @Test("config lists the new variables once each, the SASL credentials as secrets")
    func listed() {
        let variables = ServiceSettings.variables(defaultPort: 1)
        let names = variables.map(\.name)
        for name in ["KAFKA_SECURITY_PROTOCOL", "KAFKA_SASL_MECHANISM", "KAFKA_SASL_USERNAME", "KAFKA_SASL_PASSWORD", "KAFKA_SSL_CA_LOCATION",
                     "KAFKA_SSL_CERTIFICATE_LOCATION", "KAFKA_SSL_KEY_LOCATION", "POSTGRES_SSLMODE", "POSTGRES_SSL_ROOT_CERT"] {
            #expect(names.filter { $0 == name }.count == 1, "\(name)")
        }
        let secrets = Set(variables.filter(\.isSecret).map(\.name))
        #expect(secrets.isSuperset(of: ["KAFKA_SASL_USERNAME", "KAFKA_SASL_PASSWORD", "POSTGRES_PASSWORD"]))
        #expect(secrets.isDisjoint(with: ["KAFKA_SSL_CA_LOCATION", "KAFKA_SSL_KEY_LOCATION", "POSTGRES_SSL_ROOT_CERT"]))
        // Without Postgres (a service that keeps no data), no Postgres TLS settings either.
        #expect(!ServiceSettings.variables(defaultPort: 1, usesPostgres: false).map(\.name).contains("POSTGRES_SSLMODE"))
    }

    // MARK: - librdkafka

    @Test("librdkafka takes the configuration: it loads the CA, the client certificate and its key when a client is made, and refuses a file that is no certificate")
    func librdkafkaAccepts() async throws {
        let certificates = try await TestCertificates.make(subjectAltNames: ["DNS:localhost"])
        defer { certificates.remove() }
        let logger = TestServices.logger
        for protocolName in ["SSL", "SASL_SSL"] {
            var values = ["KAFKA_SECURITY_PROTOCOL": protocolName, "KAFKA_SSL_CA_LOCATION": certificates.authority,
                          "KAFKA_SSL_CERTIFICATE_LOCATION": certificates.clientCertificate, "KAFKA_SSL_KEY_LOCATION": certificates.clientKey]
            if protocolName == "SASL_SSL" {
                values.merge(["KAFKA_SASL_MECHANISM": "SCRAM-SHA-256", "KAFKA_SASL_USERNAME": "u", "KAFKA_SASL_PASSWORD": "p"]) { $1 }
            }
            var configuration = KafkaConfiguration(brokers: "127.0.0.1:1", clientId: "tls-settings")
            configuration.security = try KafkaSecurity(environment: Environment(values))
            let producer = try KafkaProducer(configuration: configuration, logger: logger)
            await producer.shutdown()
            let consumer = try await KafkaConsumer.open(configuration: configuration, subscription: .group(id: "tls-settings", topics: ["nowhere"]),
                                                        logger: logger)
            await consumer.close()
        }
        // A readable file that holds no certificate passes the start-up check (which looks only for the file) and is
        // refused by librdkafka as the client is made: still at start, as every service makes its clients then.
        var configuration = KafkaConfiguration(brokers: "127.0.0.1:1", clientId: "tls-settings")
        configuration.security = KafkaSecurity(tls: .init(caLocation: "\(certificates.directory)/server.ext"))
        let error = try #require(throws: KafkaError.self) { try KafkaProducer(configuration: configuration, logger: logger) }
        #expect(error.kind == .clientCreation, "\(error)")
        #expect(error.message.contains("ssl.ca.location"), "\(error)")
    }

    // MARK: - Against a broker

    @Test("SSL: through a TLS-terminating proxy in front of tansu, a client trusting the CA creates a topic, produces and consumes; a wrong CA and a host name the certificate lacks are refused")
    func tlsThroughProxy() async throws {
        let certificates = try await TestCertificates.make(subjectAltNames: ["DNS:localhost"])
        defer { certificates.remove() }
        let brokerPort = try PrivateBroker.freePort()
        let proxy = try await TLSTerminatingProxy.start(certificate: certificates.serverCertificate, key: certificates.serverKey,
                                                        upstreamPort: brokerPort)
        // tansu tells clients where its partitions are: the proxy, by the name its certificate holds.
        let broker = try await Tansu.start(port: brokerPort, advertised: "localhost:\(proxy.port)")
        do {
            try await checkTLS(certificates: certificates, proxyPort: proxy.port)
            broker.stop()
            await proxy.stop()
        } catch {
            broker.stop()
            await proxy.stop()
            throw error
        }
    }

    @Test("SSL with a client certificate: a proxy that asks clients for one signed by its CA lets in the client given KAFKA_SSL_CERTIFICATE_LOCATION and KAFKA_SSL_KEY_LOCATION, and no other")
    func clientCertificate() async throws {
        let certificates = try await TestCertificates.make(subjectAltNames: ["DNS:localhost", "IP:127.0.0.1"])
        defer { certificates.remove() }
        let brokerPort = try PrivateBroker.freePort()
        let proxy = try await TLSTerminatingProxy.start(certificate: certificates.serverCertificate, key: certificates.serverKey,
                                                        upstreamPort: brokerPort, clientAuthority: certificates.authority)
        let broker = try await Tansu.start(port: brokerPort, advertised: "127.0.0.1:\(proxy.port)")
        do {
            var values = ["KAFKA_SECURITY_PROTOCOL": "SSL", "KAFKA_SSL_CA_LOCATION": certificates.authority]
            var configuration = KafkaConfiguration(brokers: "127.0.0.1:\(proxy.port)", clientId: "mtls")
            configuration.security = try KafkaSecurity(environment: Environment(values))
            try await reasonsRefused(configuration)

            values["KAFKA_SSL_CERTIFICATE_LOCATION"] = certificates.clientCertificate
            values["KAFKA_SSL_KEY_LOCATION"] = certificates.clientKey
            configuration.security = try KafkaSecurity(environment: Environment(values))
            let producer = try KafkaProducer(configuration: configuration, logger: TestServices.logger)
            let reachable = await producer.isBrokerReachable(timeout: .seconds(10))
            await producer.shutdown()
            #expect(reachable, "the client with its certificate got no answer")
            broker.stop()
            await proxy.stop()
        } catch {
            broker.stop()
            await proxy.stop()
            throw error
        }
    }

    private func checkTLS(certificates: TestCertificates, proxyPort: Int) async throws {
        func configuration(bootstrap host: String, ca: String) throws -> KafkaConfiguration {
            var configuration = TestServices.kafka(clientId: "tls", deliveryTimeoutMilliseconds: 15_000)
            configuration.brokers = "\(host):\(proxyPort)"
            configuration.security = try KafkaSecurity(environment: Environment(["KAFKA_SECURITY_PROTOCOL": "SSL", "KAFKA_SSL_CA_LOCATION": ca]))
            // The proxy listens on 127.0.0.1 only: not first ::1 for "localhost".
            configuration.additional["broker.address.family"] = "v4"
            return configuration
        }

        let trusted = try configuration(bootstrap: "localhost", ca: certificates.authority)
        let producer = try KafkaProducer(configuration: trusted, logger: TestServices.logger)
        try await producer.createTopics([KafkaTopicSpec(name: "secured", partitions: 1)])
        let topic = trusted.topic("secured")
        let report = try await producer.send(KafkaOutgoingMessage(topic: topic, key: "k", value: Array("over TLS".utf8)))
        #expect(report.topic == topic && report.offset >= 0)
        await producer.shutdown()
        let consumer = try await KafkaConsumer.open(configuration: trusted, subscription: .allPartitions(topics: [topic], from: .beginning),
                                                    logger: TestServices.logger)
        var received: [KafkaMessage] = []
        let deadline = ContinuousClock.now + .seconds(20)
        while received.isEmpty && ContinuousClock.now < deadline {
            received += try await consumer.poll(maxMessages: 10, timeout: .milliseconds(300))
        }
        await consumer.close()
        #expect(received.map { String(decoding: $0.value, as: UTF8.self) } == ["over TLS"])

        // A CA that signed nothing here: the handshake fails.
        let wrongCA = try await reasonsRefused(configuration(bootstrap: "localhost", ca: certificates.otherAuthority))
        #expect(wrongCA.contains { $0.contains("certificate verify failed") }, "\(wrongCA)")
        // The right CA, but the broker reached as 127.0.0.1, which the certificate does not name
        // (ssl.endpoint.identification.algorithm=https).
        let wrongName = try await reasonsRefused(configuration(bootstrap: "127.0.0.1", ca: certificates.authority))
        #expect(wrongName.contains { $0.contains("certificate verify failed") }, "\(wrongName)")
    }

    @Test("SASL: tansu --authentication refuses a client without SASL, and answers librdkafka's SCRAM login for the configured user, plain and over TLS, with unknown-user (tansu 0.6.0 keeps no SCRAM users)")
    func saslAsFarAsTansuGoes() async throws {
        let certificates = try await TestCertificates.make(subjectAltNames: ["DNS:localhost", "IP:127.0.0.1"])
        defer { certificates.remove() }
        let brokerPort = try PrivateBroker.freePort()
        let broker = try await Tansu.start(port: brokerPort, advertised: "127.0.0.1:\(brokerPort)", extra: ["--authentication"])
        let proxy = try await TLSTerminatingProxy.start(certificate: certificates.serverCertificate, key: certificates.serverKey,
                                                        upstreamPort: brokerPort)
        do {
            func configuration(port: Int, _ values: [String: String]) throws -> KafkaConfiguration {
                var configuration = KafkaConfiguration(brokers: "127.0.0.1:\(port)", clientId: "sasl")
                configuration.security = try KafkaSecurity(environment: Environment(values))
                return configuration
            }
            // Without SASL: no answer (librdkafka's error callback says only "brokers are down"; its log, that the
            // broker "might require SASL authentication").
            try await reasonsRefused(configuration(port: brokerPort, [:]))

            let scram = ["KAFKA_SASL_MECHANISM": "SCRAM-SHA-512", "KAFKA_SASL_USERNAME": "itour-catalog", "KAFKA_SASL_PASSWORD": "s3cret"]
            let plain = try await reasonsRefused(configuration(port: brokerPort, scram.merging(["KAFKA_SECURITY_PROTOCOL": "SASL_PLAINTEXT"]) { $1 }))
            #expect(plain.contains { $0.contains("SASL SCRAM authentication failed") && $0.contains("unknown-user") }, "\(plain)")
            let overTLS = try await reasonsRefused(configuration(port: proxy.port, scram.merging(
                ["KAFKA_SECURITY_PROTOCOL": "SASL_SSL", "KAFKA_SSL_CA_LOCATION": certificates.authority]) { $1 }))
            #expect(overTLS.contains { $0.contains("SASL SCRAM authentication failed") && $0.contains("unknown-user") }, "\(overTLS)")
            broker.stop()
            await proxy.stop()
        } catch {
            broker.stop()
            await proxy.stop()
            throw error
        }
    }

    /// Checks that a producer with `configuration` gets no answer from the broker within 4 s, and returns the
    /// reasons librdkafka gave for it (its error callback's, as the services log them).
    @discardableResult
    private func reasonsRefused(_ configuration: KafkaConfiguration) async throws -> [String] {
        let recorder = LogRecorder()
        let producer = try KafkaProducer(configuration: configuration, logger: recorder.logger)
        let reachable = await producer.isBrokerReachable(timeout: .seconds(4))
        await producer.shutdown()
        #expect(!reachable, "the broker answered a client it should have refused (\(configuration.security.securityProtocol))")
        return recorder.lines
    }
}

/// Small files for the settings tests: a CA file and a certificate and key to name (their content is not read by
/// the start-up checks), a directory, and a placeholder of each in test arguments (`<ca>`, …).
private struct ScratchFiles {
    let directory: String
    var ca: String { directory + "/ca.pem" }
    var certificate: String { directory + "/client.pem" }
    var key: String { directory + "/client.key" }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("itour-settings-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory + "/dir", withIntermediateDirectories: true)
        // A real certificate (throwaway, self-signed, EC): the Postgres check parses its root certificate.
        let pem = """
            -----BEGIN CERTIFICATE-----
            MIIBlDCCATmgAwIBAgIUCBw9bdsSzdQlC0RVYLl8hd3J5QYwCgYIKoZIzj0EAwIw
            HjEcMBoGA1UEAwwTaXRvdXIgc2V0dGluZ3MgdGVzdDAgFw0yNjExMjkwODE3MTNa
            GA8yMTI2MTEwNTA4MTcxM1owHjEcMBoGA1UEAwwTaXRvdXIgc2V0dGluZ3MgdGVz
            dDBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABKZCfBPmt8jyhygKLY3Do/lv356m
            83RzAeP4jziLH6FHTYwh9QghgonbnB1jChVy79djwSpzwZfPhK+DysjHg86jUzBR
            MB0GA1UdDgQWBBTgDNv5miXFX1QPUxrgGKCMFs3SPjAfBgNVHSMEGDAWgBTgDNv5
            miXFX1QPUxrgGKCMFs3SPjAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0kA
            MEYCIQDP3WePt6GFjSrHs8LoCn2riVPCFVsrFw0tJX6ug8PfPAIhAMx9fXTmsTPj
            31fxcdLlPiCY5iyKjALYi1mZVozf3QVt
            -----END CERTIFICATE-----

            """
        try pem.write(toFile: ca, atomically: true, encoding: .utf8)
        try pem.write(toFile: certificate, atomically: true, encoding: .utf8)
        try "not a key".write(toFile: key, atomically: true, encoding: .utf8)
    }

    func resolve(_ value: String) -> String {
        switch value {
        case "<ca>": ca
        case "<certificate>": certificate
        case "<key>": key
        case "<directory>": directory + "/dir"
        default: value
        }
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }
}

/// Collects what is logged through its `logger`, each line the message and its metadata.
private final class LogRecorder: Sendable {
    private let storage = Mutex<[String]>([])
    var lines: [String] { storage.withLock { $0 } }

    var logger: Logger {
        var logger = Logger(label: "recorder") { _ in Handler(recorder: self) }
        logger.logLevel = .trace
        return logger
    }

    private struct Handler: LogHandler {
        let recorder: LogRecorder
        var metadata: Logger.Metadata = [:]
        var metadataProvider: Logger.MetadataProvider?
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let line = "\(event.message) \((event.metadata ?? [:]).map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " "))"
            recorder.storage.withLock { $0.append(line) }
        }
    }
}

/// A tansu of the test's own: listening on `port`, telling clients (in metadata) to come back at `advertised`.
/// Stopped with SIGKILL, as PrivateBroker does (started from a test thread it never sees SIGTERM).
private final class Tansu: Sendable {
    private let pid: Int32

    private init(pid: Int32) { self.pid = pid }

    static func start(port: Int, advertised: String, extra: [String] = []) async throws -> Tansu {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized
        let process = Process()
        process.executableURL = root.appendingPathComponent(".local/bin/tansu")
        process.arguments = ["broker", "--listener-url", "tcp://127.0.0.1:\(port)", "--advertised-listener-url", "tcp://\(advertised)",
                             "--storage-engine", "memory://tansu/", "--silent"] + extra
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let tansu = Tansu(pid: process.processIdentifier)
        let deadline = ContinuousClock.now + .seconds(30)
        while !PrivateBroker.isOpen(port) {
            guard ContinuousClock.now < deadline, process.isRunning else {
                tansu.stop()
                throw TestProcessError(description: "tansu did not open port \(port) within 30 s")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        return tansu
    }

    func stop() {
        kill(pid, SIGKILL)
    }
}
