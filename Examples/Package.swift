// swift-tools-version: 6.2
// Strata's examples: a movie catalogue server built with Hummingbird 2, on an SQLite file or a
// PostgreSQL database, with a JSON API and live queries streamed as server-sent events.
// A separate package, so that users of Strata never resolve its dependencies. Run ./run.sh.
import PackageDescription

// Swift 6 language mode (complete concurrency checking) for every target, tests included.
let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "StrataExamples",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "movie-server", targets: ["MovieServerApp"])
    ],
    dependencies: [
        // `Packages/strata` links to the repository root: the dependency has the same identity
        // in every clone, and the same path from both packages of the repository, so that
        // their builds can share one scratch folder (the CI runs do).
        .package(path: "../Packages/strata"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        // The tests read the server-sent event stream as it arrives.
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
    ],
    targets: [
        // The server as a library: the model, the routes and the application, which the tests
        // drive in process.
        .target(
            name: "MovieServer",
            dependencies: [
                .product(name: "Strata", package: "strata"),
                .product(name: "StrataPostgres", package: "strata"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // `movie-server`: the command line in front of the library.
        .executableTarget(
            name: "MovieServerApp",
            dependencies: [
                "MovieServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MovieServerTests",
            dependencies: [
                "MovieServer",
                .product(name: "Strata", package: "strata"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
