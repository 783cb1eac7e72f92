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
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        // Value types shared by every layer: sleep items, alarms, monitor configs, capabilities. No I/O.
        .target(name: "TSModels"),
        // Wire protocol v1: frames, CRC, fragmentation, reassembly, payload codecs. No I/O.
        .target(name: "TSProtocol", dependencies: ["TSModels"]),
        // Sleep analysis: the four TopStep statistics rules, daily models, segments, naps. No I/O.
        .target(name: "TSSleep", dependencies: ["TSModels"]),
        // libdbus-1, as Swift sees it.
        .systemLibrary(name: "CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        // Typed, async D-Bus: connections, the whole type system, calls, signals, exported objects.
        .target(name: "TSDBus", dependencies: ["CDBus"]),
        // libmosquitto, as Swift sees it.
        .systemLibrary(name: "CMosquitto", pkgConfig: "libmosquitto", providers: [.apt(["libmosquitto-dev"])]),
        // An MQTT client on libmosquitto: background connection with reconnects, QoS 1 publish with acknowledgements, subscriptions.
        .target(name: "TSMQTT", dependencies: ["CMosquitto"]),
        // Typed BlueZ client on TSDBus: adapters, discovery, devices.
        .target(name: "TSBlueZ", dependencies: ["TSDBus"]),
        // The link to a watch: the transport abstraction, in-process loopback with fault injection, capture and replay.
        .target(name: "TSTransport", dependencies: ["TSModels", "TSProtocol", "TSBlueZ"]),
        // The watch side of protocol v1 with deterministic data and fault injection.
        .target(name: "TSSimulator", dependencies: ["TSModels", "TSProtocol", "TSTransport", "TSBlueZ", "TSDBus"]),
        // SQLite through GRDB: raw sleep records, sync cursors, alarm history, monitor configs.
        .target(name: "TSStore", dependencies: ["TSModels", .product(name: "GRDB", package: "GRDB.swift")]),
        // One actor per watch: the central side of the protocol over any transport, and the resumable sync.
        .target(name: "TSDevice", dependencies: ["TSModels", "TSProtocol", "TSSleep", "TSTransport", "TSStore"]),
        // `tsgateway serve`: one supervisor per watch (reconnects, schedules, live sessions), the
        // D-Bus service that exposes them, its client for the CLI, the YAML configuration, the MQTT bridge.
        .target(
            name: "TSGatewayService",
            dependencies: [
                "TSModels", "TSProtocol", "TSSleep", "TSTransport", "TSSimulator", "TSDevice", "TSStore", "TSBlueZ", "TSDBus", "TSMQTT",
                .product(name: "Yams", package: "Yams"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "tsgateway",
            dependencies: [
                "TSModels", "TSProtocol", "TSSleep", "TSTransport", "TSSimulator", "TSDevice", "TSStore", "TSBlueZ", "TSGatewayService", "TSDBus",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "tsgateway-bench",
            dependencies: ["TSModels", "TSProtocol", "TSSleep", "TSTransport", "TSSimulator", "TSDevice", "TSStore", "TSDBus", "CDBus"]
        ),
        .testTarget(
            name: "TSProtocolTests",
            dependencies: ["TSModels", "TSProtocol"]
        ),
        .testTarget(
            name: "TSGatewayCLITests",
            dependencies: ["TSTestSupport"]
        ),
        .testTarget(
            name: "TSDeviceTests",
            dependencies: ["TSModels", "TSProtocol", "TSSleep", "TSTransport", "TSSimulator", "TSDevice", "TSStore",
                           // A second SQLite connection that holds the write lock, as another process would.
                           .product(name: "GRDB", package: "GRDB.swift")]
        ),
        // Test helpers shared by the test targets: a private dbus-daemon.
        .target(name: "TSTestSupport", path: "Tests/TSTestSupport"),
        .testTarget(
            name: "TSDBusTests",
            dependencies: ["TSTestSupport", "TSDBus", "TSBlueZ", "TSModels", "TSProtocol", "TSTransport", "TSSimulator", "TSDevice"]
        ),
        .testTarget(
            name: "TSGatewayServiceTests",
            dependencies: ["TSTestSupport", "TSGatewayService", "TSDBus", "TSMQTT", "TSModels", "TSProtocol", "TSSimulator", "TSDevice", "TSStore", "TSTransport"]
        ),
        .testTarget(
            name: "TSSleepTests",
            dependencies: ["TSModels", "TSSleep"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
