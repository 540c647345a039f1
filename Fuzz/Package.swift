// swift-tools-version: 6.2
// Coverage-guided libFuzzer harnesses for Strata's predicates: the format-string parser alone,
// and format strings run in SQL and in memory (differential). A separate package, so that users
// of Strata never build it; run it with ../scripts/fuzz.sh.
import PackageDescription

let package = Package(
    name: "StrataFuzz",
    // `strata` links to the repository root, so the dependency has the same identity in every clone.
    dependencies: [.package(path: "strata")],
    targets: [
        .executableTarget(
            name: "PredicateFuzzer",
            dependencies: [.product(name: "Strata", package: "strata")],
            swiftSettings: [.swiftLanguageMode(.v6), .unsafeFlags(["-parse-as-library"])]
        ),
        .executableTarget(
            name: "DifferentialFuzzer",
            dependencies: [
                .product(name: "Strata", package: "strata"), .product(name: "StrataTesting", package: "strata"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6), .unsafeFlags(["-parse-as-library"])]
        ),
    ]
)
