// swift-tools-version: 6.2
import CompilerPluginSupport
import PackageDescription

// Swift 6 language mode (complete concurrency checking) and warnings as errors for every target,
// tests included. Warning settings apply only when Strata is the root package, so they never
// break the builds of packages that depend on it.
let strictSwift6: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .treatAllWarnings(as: .error),
]

let package = Package(
    name: "Strata",
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10)],
    products: [
        .library(name: "Strata", targets: ["Strata"]),
        .library(name: "StrataTesting", targets: ["StrataTesting"]),
        .library(name: "StrataCombine", targets: ["StrataCombine"]),
        .library(name: "StrataPostgres", targets: ["StrataPostgres"]),
        .executable(name: "strata", targets: ["strata"]),
    ],
    dependencies: [
        // Macro implementations (@Entity, @Attribute, @Relationship, @Transient).
        .package(url: "https://github.com/swiftlang/swift-syntax.git", from: "603.0.1"),
        // SHA-256 for schema version hashes on every platform (CryptoKit is Apple-only).
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        // SQLite access for the embedded default store: WAL, a writer with concurrent readers,
        // prepared-statement caching.
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        // The `strata` command-line tool.
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        // Combine's API where Apple's Combine does not exist (Linux), for StrataCombine.
        .package(url: "https://github.com/OpenCombine/OpenCombine.git", from: "0.14.0"),
        // The PostgreSQL store (StrataPostgres only, so SQLite-only users never build it): the
        // wire protocol, TLS, LISTEN/NOTIFY, on SwiftNIO.
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        // postgres-nio's event loops and TLS, which the PostgreSQL store configures directly.
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        // Logging and metrics through the server ecosystem's APIs, which servers already route.
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
    ],
    targets: [
        .macro(
            name: "StrataMacros",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
            ],
            swiftSettings: strictSwift6
        ),
        .target(
            name: "Strata",
            dependencies: [
                "StrataMacros",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
                // The SQLite C API itself, for the hot paths that bind and read values directly.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                // Stores log and count through the server ecosystem's APIs (StoreDescription.logger).
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: strictSwift6
        ),
        // The PostgreSQL store: several app servers on one database, commits announced to all.
        .target(
            name: "StrataPostgres",
            dependencies: [
                "Strata",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: strictSwift6
        ),
        // Test helpers for users' tests and future stores: the store conformance suite.
        .target(
            name: "StrataTesting",
            dependencies: [
                "Strata",
                // Capturing what stores log and count, in tests (LogCapture, MetricsCapture).
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ],
            swiftSettings: strictSwift6
        ),
        // Combine publishers for live queries, notifications and controllers: Apple's Combine
        // where it exists, OpenCombine elsewhere.
        .target(
            name: "StrataCombine",
            dependencies: [
                "Strata",
                .product(
                    name: "OpenCombine", package: "OpenCombine",
                    condition: .when(platforms: [.linux, .windows, .android, .wasi, .openbsd])),
            ],
            swiftSettings: strictSwift6
        ),
        // The command-line tool's commands live in a library so that tests can import them.
        .target(
            name: "StrataCLI",
            dependencies: [
                "Strata",
                "StrataPostgres",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSwift6
        ),
        .executableTarget(
            name: "strata",
            dependencies: ["StrataCLI"],
            swiftSettings: strictSwift6
        ),
        .testTarget(
            name: "StrataTests",
            dependencies: [
                "Strata", "StrataTesting", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: [.copy("Fixtures")],
            swiftSettings: strictSwift6
        ),
        .testTarget(
            name: "StrataPostgresTests",
            dependencies: [
                "StrataPostgres", "Strata", "StrataTesting",
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: strictSwift6
        ),
        .testTarget(
            name: "StrataMacrosTests",
            dependencies: [
                "StrataMacros",
                .product(name: "SwiftSyntaxMacrosGenericTestSupport", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacroExpansion", package: "swift-syntax"),
            ],
            swiftSettings: strictSwift6
        ),
        .testTarget(
            name: "StrataCombineTests",
            dependencies: [
                "StrataCombine", "Strata", "StrataTesting",
                .product(
                    name: "OpenCombine", package: "OpenCombine",
                    condition: .when(platforms: [.linux, .windows, .android, .wasi, .openbsd])),
            ],
            swiftSettings: strictSwift6
        ),
        .testTarget(
            name: "PortingGuideTests",
            dependencies: ["Strata", "StrataTesting"],
            resources: [.copy("Resources")],
            swiftSettings: strictSwift6
        ),
        .testTarget(
            name: "StrataCLITests",
            dependencies: ["StrataCLI", "Strata", "StrataTesting", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: strictSwift6
        ),
    ]
)
