// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "tsgateway",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "tsgateway", targets: ["tsgateway"]),
        .library(name: "TSModels", targets: ["TSModels"]),
        .library(name: "TSProtocol", targets: ["TSProtocol"]),
        .library(name: "TSSleep", targets: ["TSSleep"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // Value types shared by every layer: sleep items, alarms, monitor configs, capabilities. No I/O.
        .target(name: "TSModels"),
        // Wire protocol v1: frames, CRC, fragmentation, reassembly, payload codecs. No I/O.
        .target(name: "TSProtocol", dependencies: ["TSModels"]),
        // Sleep analysis: the four TopStep statistics rules, daily models, segments, naps. No I/O.
        .target(name: "TSSleep", dependencies: ["TSModels"]),
        .executableTarget(
            name: "tsgateway",
            dependencies: [
                "TSModels", "TSProtocol", "TSSleep",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "tsgateway-bench",
            dependencies: ["TSModels", "TSProtocol", "TSSleep"]
        ),
        .testTarget(
            name: "TSProtocolTests",
            dependencies: ["TSModels", "TSProtocol"]
        ),
        .testTarget(
            name: "TSSleepTests",
            dependencies: ["TSModels", "TSSleep"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
