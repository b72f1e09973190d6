// swift-tools-version:6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let serviceDependencies: [Target.Dependency] = [
    "Shared",
    .product(name: "Hummingbird", package: "hummingbird"),
    .product(name: "PostgresNIO", package: "postgres-nio"),
    .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
    .product(name: "Logging", package: "swift-log"),
    .product(name: "Metrics", package: "swift-metrics"),
    .product(name: "ArgumentParser", package: "swift-argument-parser"),
]

let testDependencies: [Target.Dependency] = [
    "Shared", "TestSupport",
    .product(name: "HummingbirdTesting", package: "hummingbird"),
]

let package = Package(
    name: "itour",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "catalog", targets: ["Catalog"]),
        .executable(name: "feed", targets: ["Feed"]),
        .executable(name: "analytics", targets: ["Analytics"]),
        .executable(name: "admin", targets: ["Admin"]),
        .executable(name: "itour-bench", targets: ["Bench"]),
    ],
    // Exact versions: what the tests ran with. Package.resolved cannot be committed (the package
    // mirror's commit ids differ from upstream's); the packages these pull in are the mirror's
    // versions of them these pins allow (docs/CONTAINERS.md, "Versions").
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", exact: "2.28.1", traits: ["FullFoundation"]),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", exact: "2.5.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", exact: "1.33.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", exact: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log.git", exact: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", exact: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", exact: "2.4.1"),
        .package(url: "https://github.com/apple/swift-nio.git", exact: "2.101.3"),
        // SHA-256 for the admin's stored session tokens; postgres-nio already builds it.
        .package(url: "https://github.com/apple/swift-crypto.git", exact: "4.5.2"),
        // The executables' commands, flags, --help and --version.
        .package(url: "https://github.com/apple/swift-argument-parser.git", exact: "1.8.2"),
    ],
    targets: [
        // librdkafka's C API, compiled against Debian's librdkafka-dev headers.
        .systemLibrary(name: "CRdKafka", path: "Shared/CRdKafka", pkgConfig: "rdkafka",
                       providers: [.apt(["librdkafka-dev"])]),
        // zlib for precomputed gzip bodies.
        .systemLibrary(name: "CZlib", path: "Shared/CZlib", providers: [.apt(["zlib1g-dev"])]),
        .target(
            name: "Shared",
            dependencies: [
                "CRdKafka", "CZlib",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Shared/Core",
            swiftSettings: swiftSettings
        ),
        .executableTarget(name: "Catalog", dependencies: serviceDependencies, path: "Services/Catalog", swiftSettings: swiftSettings),
        .executableTarget(name: "Feed", dependencies: serviceDependencies, path: "Services/Feed",
                          swiftSettings: swiftSettings),
        // Crypto: device and tourist ids are stored as HMAC-SHA-256 pseudonyms (docs/PRIVACY.md).
        .executableTarget(name: "Analytics", dependencies: serviceDependencies + [.product(name: "Crypto", package: "swift-crypto")],
                          path: "Services/Analytics", swiftSettings: swiftSettings),
        .executableTarget(name: "Admin",
                          dependencies: serviceDependencies + [.product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                                                                .product(name: "Crypto", package: "swift-crypto")],
                          path: "Services/Admin", swiftSettings: swiftSettings),
        .executableTarget(name: "Bench", dependencies: ["Shared", .product(name: "ArgumentParser", package: "swift-argument-parser")],
                          path: "Benchmarks", swiftSettings: swiftSettings),
        .target(name: "TestSupport", dependencies: ["Shared",
                                                    .product(name: "HummingbirdTesting", package: "hummingbird"),
                                                    .product(name: "PostgresNIO", package: "postgres-nio"),
                                                    .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")],
                path: "Tests/TestSupport"),
        .testTarget(name: "SharedTests", dependencies: testDependencies + [.product(name: "PostgresNIO", package: "postgres-nio")], path: "Tests/SharedTests"),
        .testTarget(name: "CatalogTests", dependencies: testDependencies + ["Catalog", .product(name: "PostgresNIO", package: "postgres-nio")], path: "Tests/CatalogTests"),
        .testTarget(name: "FeedTests", dependencies: testDependencies + ["Feed"], path: "Tests/FeedTests"),
        .testTarget(name: "AnalyticsTests", dependencies: testDependencies + ["Analytics", "Admin", .product(name: "PostgresNIO", package: "postgres-nio")], path: "Tests/AnalyticsTests"),
        .testTarget(name: "AdminTests", dependencies: testDependencies + ["Admin", "Catalog", .product(name: "PostgresNIO", package: "postgres-nio")], path: "Tests/AdminTests"),
        .testTarget(name: "EndToEndTests",
                    dependencies: testDependencies + ["Catalog", "Feed"],
                    path: "Tests/EndToEndTests"),
    ]
)
