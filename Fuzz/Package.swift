// swift-tools-version: 6.2
// A coverage-guided libFuzzer harness for Strata's predicate format-string parser. A separate
// package, so that users of Strata never build it; run it with ../scripts/fuzz.sh.
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
        )
    ]
)
