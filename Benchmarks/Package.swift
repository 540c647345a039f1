// swift-tools-version: 6.2
// Strata's benchmarks: Strata against raw SQLite and GRDB on the same workloads, in one run.
// A separate package, so that users of Strata never resolve its dependencies. Run ./run.sh.
import PackageDescription

let package = Package(
    name: "StrataBenchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        // `strata` links to the repository root, so the dependency has the same identity in
        // every clone.
        .package(path: "strata"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
    ],
    targets: [
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        .executableTarget(
            name: "StrataBenchmarks",
            dependencies: [
                "CSQLite",
                .product(name: "Strata", package: "strata"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
