// swift-tools-version: 6.2
// Strata's benchmarks: Strata against raw SQLite and GRDB on the same workloads, in one run, and
// (a second program) Strata's PostgreSQL store against postgres-nio and Fluent.
// A separate package, so that users of Strata never resolve its dependencies. Run ./run.sh.
import PackageDescription

let package = Package(
    name: "StrataBenchmarks",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "StrataBenchmarks", targets: ["StrataBenchmarks"]),
        .executable(name: "StrataPostgresBenchmarks", targets: ["StrataPostgresBenchmarks"]),
    ],
    dependencies: [
        // `Packages/strata` links to the repository root: the dependency has the same identity
        // in every clone, and the same path from both packages of the repository, so that
        // their builds can share one scratch folder (the CI runs do).
        .package(path: "../Packages/strata"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        // StrataPostgresBenchmarks only: `run.sh` builds each product on its own, so the SQLite
        // benchmarks (and CI's `--quick` run) never build Fluent.
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/vapor/fluent-kit.git", from: "1.57.0"),
        .package(url: "https://github.com/vapor/fluent-postgres-driver.git", from: "2.14.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        // Checks, workload data and memory measurement both programs share.
        .target(name: "BenchmarkSupport", swiftSettings: [.swiftLanguageMode(.v6)]),
        .executableTarget(
            name: "StrataBenchmarks",
            dependencies: [
                "BenchmarkSupport",
                "CSQLite",
                .product(name: "Strata", package: "strata"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Strata's PostgreSQL store against postgres-nio used directly and Fluent, on one server.
        .executableTarget(
            name: "StrataPostgresBenchmarks",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "Strata", package: "strata"),
                .product(name: "StrataPostgres", package: "strata"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "FluentKit", package: "fluent-kit"),
                .product(name: "FluentPostgresDriver", package: "fluent-postgres-driver"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
