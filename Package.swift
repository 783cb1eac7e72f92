// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "tsgateway",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "tsgateway", targets: ["tsgateway"]),
        .library(name: "TSModels", targets: ["TSModels"]),
        .library(name: "TSGATT", targets: ["TSGATT"]),
        .library(name: "TSProtocol", targets: ["TSProtocol"]),
        .library(name: "TSSleep", targets: ["TSSleep"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-protobuf", from: "1.39.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
    ],
    targets: [
        // Value types shared by every layer: sleep items, alarms, monitor configs, capabilities. No I/O.
        .target(name: "TSModels"),
        // Personal data on disk: the one writer of private files (0600 unless asked, atomic, errors that say what to check).
        .target(name: "TSFiles", dependencies: ["TSModels"]),
        // What every dialect shares on GATT: the ATT MTU, service and characteristic UUIDs, the standard services'
        // codecs and the codec error they throw. No I/O.
        .target(name: "TSGATT", dependencies: ["TSModels"]),
        // Wire protocol v1: frames, CRC, fragmentation, reassembly, payload codecs. No I/O.
        .target(name: "TSProtocol", dependencies: ["TSModels", "TSGATT"], path: "Sources/Families/V1/Codec"),
        // The QRing ring dialect's codecs (Colmi, Yawell): 16-byte packets, big-data frames, sleep days, heart-rate log. No I/O.
        .target(name: "TSQRing", dependencies: ["TSModels"], path: "Sources/Families/QRing/Codec"),
        // The Huami dialect's codecs (Mi Band 3–6, Amazfit Bip/GTS/GTR 1–2): auth, time, alarms, heart-rate settings, battery,
        // the activity fetch and its per-minute samples read into sleep and heart rate; both directions. No I/O
        // (swift-crypto's single-block AES for the auth challenge).
        // The Garmin family's codecs: multi-link control messages, COBS and GFDI frames with their CRC-16/ARC. Both directions; no I/O.
        .target(name: "TSGarmin", dependencies: ["TSModels", "TSGATT", .product(name: "SwiftProtobuf", package: "swift-protobuf")], path: "Sources/Families/Garmin/Codec"),
        .target(name: "TSHuami", dependencies: ["TSModels", .product(name: "_CryptoExtras", package: "swift-crypto")], path: "Sources/Families/Huami/Codec"),
        // TopStep's NPK dialect: frames, CRC-16, list mode, chunking, reassembly, request matching, the
        // protobuf payloads (generated from protocol-spec/npk/npk.proto) and their mapping to TSModels. No I/O.
        .target(name: "TSNpk", dependencies: ["TSModels", .product(name: "SwiftProtobuf", package: "swift-protobuf")], path: "Sources/Families/Npk/Codec"),
        // Sleep analysis: the four TopStep statistics rules, daily models, segments, naps. No I/O.
        .target(name: "TSSleep", dependencies: ["TSModels"]),
        // Sleep reports people look at: a self-contained HTML page and SVG hypnograms from daily models. No I/O.
        .target(name: "TSReport", dependencies: ["TSModels", "TSSleep"]),
        // libdbus-1, as Swift sees it.
        .systemLibrary(name: "CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        // Typed, async D-Bus: connections, the whole type system, calls, signals, exported objects.
        .target(name: "TSDBus", dependencies: ["CDBus"]),
        // A library opened with dlopen() on first use and its symbols found with dlsym(): the one
        // loader of CMosquitto and CCurl (libdl linked here, the libraries they open never).
        .target(name: "CDynamicLibrary", linkerSettings: [.linkedLibrary("dl")]),
        // libmosquitto opened with dlopen() on first use, so nothing without an mqtt: section maps it
        // and its OpenSSL; mosquitto.h (libmosquitto-dev) for types only.
        .target(name: "CMosquitto", dependencies: ["CDynamicLibrary"]),
        // An MQTT client on libmosquitto: background connection with reconnects, QoS 1 publish with acknowledgements, subscriptions.
        .target(name: "TSMQTT", dependencies: ["CMosquitto"]),
        // glibc's malloc tuning and statistics (mallopt, malloc_trim, mallinfo2); part of libc, nothing to link.
        .systemLibrary(name: "CMalloc"),
        // The kernel's clock status (adjtimex), read to decide whether the system clock may set a watch's.
        .systemLibrary(name: "CTimex"),
        // Typed BlueZ on TSDBus, every BlueZ D-Bus name in BlueZNames.swift. Central side: adapters,
        // discovery, devices, pairing agent, GATT client. Peripheral side: GATT application and LE advertisement.
        .target(name: "TSBlueZ", dependencies: ["TSModels", "TSDBus"]),
        // btsnoop files (read and write) and the HCI side of a capture: monitor records, connection
        // events, ACL/L2CAP reassembly, ATT over the fixed channel and EATT, GATT discovery. No I/O.
        .target(name: "TSSnoop", dependencies: ["TSModels"]),
        // libbluetooth (BlueZ's HCI library), as Swift sees it; shim.h wraps only macros.
        .systemLibrary(name: "CBluetooth", pkgConfig: "bluez", providers: [.apt(["libbluetooth-dev"])]),
        // The HCI side on libbluetooth: the kernel's monitor channel for captures, controller
        // information, LE connection parameters of a link. Typed errors; needs CAP_NET_RAW where the kernel says so.
        .target(name: "TSHCI", dependencies: ["CBluetooth", "TSModels", "TSSnoop"]),
        // The link to a watch: the transport abstraction, in-process loopback with fault injection, capture and replay
        // (also of a btsnoop capture's watch-service exchange). No D-Bus.
        .target(name: "TSTransport", dependencies: ["TSModels", "TSGATT", "TSSnoop"]),
        // The transport to a real watch: BlueZ GATT on the wire protocol's service.
        .target(name: "TSBlueZTransport", dependencies: ["TSModels", "TSGATT", "TSTransport", "TSBlueZ"]),
        // The watch side of protocol v1 with deterministic data, fault injection and the daemon's simulated live night. No D-Bus.
        // The seeded histories every simulated device starts from (nights, heart rate, the clock a simulated watch reads), pure.
        .target(name: "TSSimulatedHistory", dependencies: ["TSModels"]),
        .target(name: "TSSimulator", dependencies: ["TSSimulatedHistory", "TSModels", "TSFiles", "TSGATT", "TSProtocol", "TSTransport"],
                path: "Sources/Families/V1/Simulator"),
        // The watch side of TopStep's NPK dialect, in-process, deterministic, with faults.
        .target(name: "TSNpkSimulator", dependencies: ["TSModels", "TSGATT", "TSTransport", "TSNpk", "TSSimulatedHistory",
                                                     .product(name: "SwiftProtobuf", package: "swift-protobuf")],
                path: "Sources/Families/Npk/Simulator"),
        // A QRing ring, in-process over the loopback's two pairs: deterministic nights and heart-rate log, settings, faults.
        .target(name: "TSQRingSimulator", dependencies: ["TSModels", "TSGATT", "TSTransport", "TSQRing"], path: "Sources/Families/QRing/Simulator"),
        // A Huami band, in-process, one characteristic at a time: auth key, clock, battery, alarms, heart-rate settings and
        // measurement, the activity fetch of deterministic per-minute nights, faults, and its ground truth.
        // The Garmin family's simulated watch, in-process: multi-link, the GFDI handshake it leads, its directory and FIT files.
        .target(name: "TSGarminSimulator", dependencies: ["TSModels", "TSGATT", "TSTransport", "TSGarmin", "TSSimulatedHistory"], path: "Sources/Families/Garmin/Simulator"),
        .target(name: "TSHuamiSimulator", dependencies: ["TSModels", "TSGATT", "TSTransport", "TSHuami", "TSSimulatedHistory"], path: "Sources/Families/Huami/Simulator"),
        // What every family's simulated BlueZ peripheral shares: PeripheralLink (the link as the peripheral sees it,
        // bluetoothd's restarts) and TimedNotifications (`simulate --answer-timing`).
        .target(name: "TSSimulatorPeripheral", dependencies: ["TSModels", "TSTransport", "TSBlueZ"]),
        // Protocol v1's simulated watch as a BlueZ peripheral, with Device Information, Battery and Heart Rate beside it.
        .target(name: "TSProtocolV1Peripheral", dependencies: ["TSModels", "TSGATT", "TSProtocol", "TSTransport", "TSSimulator", "TSSimulatedHistory",
                                                               "TSBlueZ", "TSSimulatorPeripheral"],
                path: "Sources/Families/V1/Peripheral"),
        // The simulated NPK watch as a BlueZ peripheral: the dialect's service (its notifications chunked as asked), the advertisement.
        .target(name: "TSNpkPeripheral", dependencies: ["TSModels", "TSGATT", "TSTransport", "TSBlueZ", "TSSimulatorPeripheral", "TSNpkSimulator"],
                path: "Sources/Families/Npk/Peripheral"),
        // The simulated Garmin watch as a BlueZ peripheral: the Multi-Link service's first pair, the advertisement under the watch's name.
        .target(name: "TSGarminPeripheral", dependencies: ["TSModels", "TSGATT", "TSTransport", "TSBlueZ", "TSSimulatorPeripheral", "TSGarmin", "TSGarminSimulator"],
                path: "Sources/Families/Garmin/Peripheral"),
        // The simulated QRing ring as a BlueZ peripheral: both pairs, Device Information, the advertisement under the ring's name.
        .target(name: "TSQRingPeripheral", dependencies: ["TSModels", "TSGATT", "TSTransport", "TSBlueZ", "TSSimulatorPeripheral", "TSQRing", "TSQRingSimulator"],
                path: "Sources/Families/QRing/Peripheral"),
        // The simulated Huami band as a BlueZ peripheral: the band's services and characteristics, its auth, the advertisement.
        .target(name: "TSHuamiPeripheral", dependencies: ["TSModels", "TSGATT", "TSBlueZ", "TSSimulatorPeripheral", "TSHuami", "TSHuamiSimulator"],
                path: "Sources/Families/Huami/Peripheral"),
        // SQLite through GRDB: raw sleep records, sync cursors, alarm history, monitor configs.
        .target(name: "TSStore", dependencies: ["TSModels", "TSFiles", .product(name: "GRDB", package: "GRDB.swift")]),
        // What is uploaded: the final nights of a sync, their outbox events and the HTTP body (`/api/v1/sleep`);
        // enqueued by TSDevice's SleepSync, POSTed by TSGatewayService's UploadOutbox. Pure.
        .target(name: "TSUpload", dependencies: ["TSModels", "TSSleep", "TSStore"]),
        // One actor per watch: the central side of the protocol over any transport, and the resumable sync.
        .target(name: "TSDevice", dependencies: ["TSModels", "TSGATT", "TSSleep", "TSTransport", "TSStore", "TSUpload"]),
        // Protocol v1's central (Watch: HELLO, DEVICE_INFO, EXTENSIONS, alarms, monitors, paged sleep with its commit, the
        // standard services beside it and for a watch without its service) and its registration terms, over any transport.
        .target(name: "TSProtocolV1Watch", dependencies: ["TSModels", "TSGATT", "TSProtocol", "TSSleep", "TSTransport", "TSDevice"],
                path: "Sources/Families/V1/Central"),
        // TopStep's NPK dialect's central (NpkWatch: login, or bind when pairing, device information, clock, battery, alarms, monitors,
        // sleep and heart-rate history by range) and its registration terms (dialect, auth-code credential, identification), over any transport.
        .target(name: "TSNpkWatch", dependencies: ["TSModels", "TSGATT", "TSTransport", "TSDevice", "TSNpk",
                                                 .product(name: "SwiftProtobuf", package: "swift-protobuf")],
                path: "Sources/Families/Npk/Central"),
        // The QRing dialect's central (QRingWatch: device information, clock, battery, monitors and switches, real-time heart rate,
        // sleep by big data, the heart-rate log) and its registration terms (dialect, identification), over any transport.
        .target(name: "TSQRingWatch", dependencies: ["TSModels", "TSGATT", "TSTransport", "TSDevice", "TSQRing"], path: "Sources/Families/QRing/Central"),
        // The Garmin family's central: multi-link, the GFDI session the watch leads, FIT files downloaded and archived after the commit.
        .target(name: "TSGarminWatch", dependencies: ["TSModels", "TSGATT", "TSTransport", "TSDevice", "TSGarmin"], path: "Sources/Families/Garmin/Central"),
        // The Huami dialect's central (HuamiWatch) and its registration terms (dialect, GATT profile, auth-key credential),
        // over any transport: the auth exchange, clock, battery, alarms, heart-rate settings, the activity fetch into sleep and heart rate.
        .target(name: "TSHuamiWatch", dependencies: ["TSModels", "TSGATT", "TSTransport", "TSDevice", "TSHuami"], path: "Sources/Families/Huami/Central"),
        // The watch service both front doors use: alarm, monitor, sync and daily-report operations
        // with their persistence, one sync policy, one rule for naming a watch, and the one place a watch is opened.
        .target(name: "TSWatchService", dependencies: [
            "TSModels", "TSGATT", "TSSleep", "TSDevice", "TSStore", "TSHCI", "TSTransport", "TSBlueZ", "TSBlueZTransport", "TSDBus", "CTimex",
            .product(name: "Logging", package: "swift-log"),
        ]),
        // What a family's coordinator is made of (WatchFamily: its dialect, its simulated device in-process and
        // as a BlueZ peripheral; the settings `simulate` hands it), for every family's own Family target.
        .target(name: "TSFamilyKit", dependencies: ["TSModels", "TSTransport", "TSDevice", "TSBlueZ", "TSSimulator", "TSSimulatedHistory"]),
        // Each family's coordinator, in its own folder: its WatchFamily line's parts.
        .target(name: "TSProtocolV1Family", dependencies: ["TSFamilyKit", "TSModels", "TSGATT", "TSProtocol", "TSProtocolV1Watch", "TSTransport", "TSDevice", "TSBlueZ",
                                                           "TSSimulator", "TSSimulatedHistory", "TSSimulatorPeripheral", "TSProtocolV1Peripheral"],
                path: "Sources/Families/V1/Family"),
        .target(name: "TSNpkFamily", dependencies: ["TSFamilyKit", "TSModels", "TSGATT", "TSTransport", "TSDevice", "TSBlueZ", "TSNpkWatch",
                                                    "TSNpkSimulator", "TSSimulatedHistory", "TSSimulatorPeripheral", "TSNpkPeripheral"],
                path: "Sources/Families/Npk/Family"),
        .target(name: "TSQRingFamily", dependencies: ["TSFamilyKit", "TSModels", "TSGATT", "TSTransport", "TSDevice", "TSBlueZ", "TSQRing", "TSQRingWatch",
                                                      "TSQRingSimulator", "TSSimulatorPeripheral", "TSQRingPeripheral"],
                path: "Sources/Families/QRing/Family"),
        .target(name: "TSGarminFamily", dependencies: ["TSFamilyKit", "TSModels", "TSGATT", "TSTransport", "TSDevice", "TSBlueZ", "TSGarmin", "TSGarminWatch",
                                                       "TSGarminSimulator", "TSSimulatorPeripheral", "TSGarminPeripheral"],
                path: "Sources/Families/Garmin/Family"),
        .target(name: "TSHuamiFamily", dependencies: ["TSFamilyKit", "TSModels", "TSGATT", "TSTransport", "TSDevice", "TSBlueZ", "TSHuami", "TSHuamiWatch",
                                                      "TSHuamiSimulator", "TSSimulatorPeripheral", "TSHuamiPeripheral"],
                path: "Sources/Families/Huami/Family"),
        // The registry: one line per family (WatchFamilies.builtIn). The front doors read it; the watch service below links no simulator.
        .target(name: "TSFamilies", dependencies: ["TSFamilyKit", "TSModels", "TSDevice", "TSWatchService",
                                                   "TSProtocolV1Family", "TSNpkFamily", "TSQRingFamily", "TSHuamiFamily", "TSGarminFamily"]),
        // The `org.tsgateway` D-Bus API as both sides see it: bus, interface, member and signal names, typed
        // encodings of its values, the event and night vocabularies, and `GatewayClient`, the CLI's client of a running daemon.
        .target(name: "TSGatewayAPI", dependencies: ["TSModels", "TSSleep", "TSStore", "TSDevice", "TSWatchService", "TSDBus"]),
        // One HTTP POST through libcurl opened with dlopen() on first use (the uploader's), so
        // nothing that does not upload maps libcurl's libraries; curl.h (libcurl4-openssl-dev) for types only.
        .target(name: "CCurl", dependencies: ["CDynamicLibrary"]),
        // `tsgateway serve`: one supervisor per watch (reconnects, schedules, live sessions), the
        // D-Bus service that exposes them (its API and client are TSGatewayAPI), the YAML configuration, the MQTT bridge.
        .target(
            name: "TSGatewayService",
            dependencies: [
                "TSModels", "TSFiles", "TSSleep", "TSReport", "TSTransport", "TSBlueZTransport", "TSSimulator", "TSSimulatedHistory", "TSDevice", "TSStore", "TSWatchService", "TSFamilies", "TSFamilyKit", "TSGatewayAPI", "TSBlueZ", "TSDBus", "TSMQTT", "CMalloc", "CCurl",
                .product(name: "Yams", package: "Yams"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "tsgateway",
            dependencies: [
                "TSModels", "TSFiles", "TSGATT", "TSProtocol", "TSSleep", "TSReport", "TSTransport", "TSSimulator", "TSSimulatedHistory", "TSDevice", "TSStore",
                "TSWatchService", "TSFamilies", "TSFamilyKit", "TSBlueZ", "TSGatewayAPI", "TSGatewayService", "TSSnoop", "TSHCI",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The D-Bus benchmarks need TSDBus and CDBus (and the daemon's names from TSGatewayAPI); the protocol, sleep and sync ones need no D-Bus;
        // the sync one drives the Huami central against the simulated band on the family's loopback endpoint (TSFamilies' HuamiBandLink).
        .executableTarget(
            name: "tsgateway-bench",
            dependencies: ["TSModels", "TSGATT", "TSProtocol", "TSProtocolV1Watch", "TSSleep", "TSTransport", "TSSimulator", "TSSimulatedHistory", "TSDevice", "TSStore", "TSDBus", "CDBus", "TSGatewayAPI",
                           "TSNpk", "TSNpkWatch", "TSNpkSimulator", "TSHuami", "TSHuamiSimulator", "TSHuamiWatch", "TSFamilies", "TSFamilyKit", "TSHuamiFamily",
                           "TSGarmin", "TSGarminSimulator", "TSGarminWatch"]
        ),
        .testTarget(
            name: "TSModelsTests",
            dependencies: ["TSModels"]
        ),
        .testTarget(
            name: "TSProtocolTests",
            dependencies: ["TSModels", "TSGATT", "TSProtocol"],
            path: "Tests/Families/V1/CodecTests"
        ),
        .testTarget(
            name: "TSNpkTests",
            dependencies: ["TSModels", "TSNpk", .product(name: "SwiftProtobuf", package: "swift-protobuf")],
            path: "Tests/Families/Npk/CodecTests"
        ),
        .testTarget(
            name: "TSGatewayCLITests",
            // TSStore: databases seeded with heart-rate samples, as `tsgateway serve` stores them;
            // TSSimulator: the simulated watch's nights and heart rate, the ground truth of a sync.
            dependencies: ["TSTestSupport", "TSModels", "TSStore", "TSSimulator", "TSSimulatedHistory"]
        ),
        .testTarget(
            name: "TSDeviceTests",
            dependencies: ["TSModels", "TSGATT", "TSProtocol", "TSSleep", "TSTransport", "TSSimulator", "TSSimulatedHistory", "TSDevice", "TSStore", "TSProtocolV1Watch"]
        ),
        .testTarget(
            name: "TSTransportTests",
            dependencies: ["TSModels", "TSGATT", "TSProtocol", "TSTransport"]
        ),
        .testTarget(
            name: "TSSimulatorTests",
            dependencies: ["TSModels", "TSProtocol", "TSSimulator", "TSSimulatedHistory"],
            path: "Tests/Families/V1/SimulatorTests"
        ),
        // TSMQTT against a Mosquitto broker of the test's own (TSTestSupport's Broker).
        .testTarget(
            name: "TSMQTTTests",
            dependencies: ["TSTestSupport", "TSMQTT"]
        ),
        .testTarget(
            name: "TSHCITests",
            dependencies: ["TSHCI", "TSModels"]
        ),
        .testTarget(
            name: "TSStoreTests",
            // TSTestSupport: real full and read-only file systems (ScratchDisk); TSFiles: PrivateFile on them.
            dependencies: ["TSModels", "TSStore", "TSFiles", "TSTestSupport",
                           // A second SQLite connection that holds the write lock, as another process would.
                           .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .testTarget(
            name: "TSWatchServiceTests",
            dependencies: ["TSModels", "TSGATT", "TSProtocol", "TSSleep", "TSTransport", "TSSimulator", "TSSimulatedHistory", "TSDevice", "TSStore", "TSWatchService", "TSFamilies", "TSFamilyKit", "TSProtocolV1Family", "TSNpkFamily", "TSQRingFamily", "TSHuamiFamily",
                           "TSNpk", "TSNpkWatch", "TSNpkSimulator", "TSQRing", "TSQRingWatch", "TSQRingSimulator", "TSProtocolV1Watch"]
        ),
        // The NPK central against its simulated watch over the loopback (dialect, pairing, heart-rate history).
        .testTarget(
            name: "TSNpkWatchTests",
            dependencies: ["TSModels", "TSGATT", "TSSleep", "TSTransport", "TSSimulatedHistory", "TSDevice", "TSStore", "TSWatchService",
                           "TSFamilies", "TSFamilyKit", "TSNpkFamily", "TSNpk", "TSNpkWatch", "TSNpkSimulator"],
            path: "Tests/Families/Npk/CentralTests"
        ),
        .testTarget(
            name: "TSNpkSimulatorTests",
            dependencies: ["TSModels", "TSGATT", "TSTransport", "TSSimulatedHistory", "TSNpk", "TSNpkSimulator"],
            path: "Tests/Families/Npk/SimulatorTests"
        ),
        // The QRing central against its simulated ring over the loopback's two pairs.
        .testTarget(
            name: "TSQRingWatchTests",
            dependencies: ["TSModels", "TSGATT", "TSTransport", "TSSimulatedHistory", "TSDevice", "TSStore", "TSWatchService",
                           "TSFamilies", "TSFamilyKit", "TSQRingFamily", "TSQRing", "TSQRingWatch", "TSQRingSimulator"],
            path: "Tests/Families/QRing/CentralTests"
        ),
        // Test helpers shared by the test targets: a private dbus-daemon, a child process runner, and `CLI`,
        // the one runner of the built `tsgateway` binary.
        .target(name: "TSTestSupport", path: "Tests/TSTestSupport"),
        .testTarget(
            name: "TSDBusTests",
            dependencies: ["TSTestSupport", "TSDBus"]
        ),
        // TSBlueZ and the modules built on it (the BlueZ transport, the simulator peripheral),
        // against python-dbusmock's bluez5 template and fakes of bluetoothd on a private bus.
        .testTarget(
            name: "TSBlueZTests",
            dependencies: ["TSTestSupport", "TSDBus", "TSBlueZ", "TSBlueZTransport", "TSModels", "TSProtocol", "TSTransport", "TSSimulator", "TSSimulatedHistory", "TSSimulatorPeripheral", "TSProtocolV1Peripheral", "TSDevice",
                           "TSQRing", "TSQRingWatch", "TSQRingSimulator", "TSQRingPeripheral", "TSNpk", "TSNpkSimulator", "TSHuami", "TSHuamiSimulator", "TSGATT", "TSProtocolV1Watch"]
        ),
        .testTarget(
            name: "TSGatewayServiceTests",
            dependencies: ["TSSleep", "TSTestSupport", "CDynamicLibrary", "TSGatewayAPI", "TSGatewayService", "TSWatchService", "TSFamilies", "TSFamilyKit", "TSProtocolV1Family", "TSNpkFamily", "TSQRingFamily", "TSHuamiFamily", "TSFiles", "TSDBus", "TSMQTT", "TSModels", "TSGATT", "TSProtocol", "TSSimulator", "TSSimulatedHistory", "TSDevice", "TSStore", "TSTransport",
                           // A second SQLite connection that holds the write lock while a link drops.
                           .product(name: "GRDB", package: "GRDB.swift"),
                           // A family registered in this target, driven through the command types themselves (ToyFamilyCommandTests).
                           "tsgateway", "TSBlueZ", .product(name: "ArgumentParser", package: "swift-argument-parser"), "TSProtocolV1Watch"]
        ),
        .testTarget(
            name: "TSSnoopTests",
            dependencies: ["TSTestSupport", "TSSnoop", "TSModels", "TSGATT", "TSProtocol", "TSTransport", "TSSimulator", "TSSimulatedHistory", "TSDevice", "TSStore", "TSFamilies", "TSFamilyKit", "TSProtocolV1Family", "TSNpkFamily", "TSQRingFamily", "TSHuamiFamily", "TSWatchService",
                           "TSNpkWatch", "TSQRingWatch", "TSProtocolV1Watch"]
        ),
        .testTarget(
            name: "TSQRingTests",
            dependencies: ["TSModels", "TSQRing"],
            path: "Tests/Families/QRing/CodecTests"
        ),
        .testTarget(
            name: "TSGarminTests",
            dependencies: ["TSModels", "TSGarmin"],
            path: "Tests/Families/Garmin/CodecTests"
        ),
        .testTarget(
            name: "TSGarminWatchTests",
            dependencies: ["TSModels", "TSGATT", "TSTransport", "TSDevice", "TSStore", "TSGarmin", "TSGarminWatch", "TSGarminSimulator"],
            path: "Tests/Families/Garmin/CentralTests"
        ),
        .testTarget(
            name: "TSGarminSimulatorTests",
            dependencies: ["TSModels", "TSTransport", "TSGarmin", "TSGarminSimulator"],
            path: "Tests/Families/Garmin/SimulatorTests"
        ),
        .testTarget(
            name: "TSHuamiTests",
            dependencies: ["TSModels", "TSHuami"],
            path: "Tests/Families/Huami/CodecTests"
        ),
        // The Huami central against the simulated band over the loopback, as its family opens it.
        .testTarget(
            name: "TSHuamiWatchTests",
            dependencies: ["TSModels", "TSGATT", "TSHuami", "TSHuamiWatch", "TSHuamiSimulator", "TSFamilies", "TSFamilyKit", "TSProtocolV1Family", "TSNpkFamily", "TSQRingFamily", "TSHuamiFamily", "TSDevice", "TSStore", "TSTransport"],
            path: "Tests/Families/Huami/CentralTests"
        ),
        // What every registered family must do, one parameterised suite run for each (issue 43).
        .testTarget(
            name: "FamilyConformanceTests",
            dependencies: ["TSModels", "TSTransport", "TSDevice", "TSStore", "TSFamilies", "TSFamilyKit", "TSProtocolV1Family", "TSNpkFamily", "TSQRingFamily", "TSHuamiFamily"],
            path: "Tests/Families/Conformance"
        ),
        .testTarget(
            name: "TSHuamiSimulatorTests",
            dependencies: ["TSModels", "TSTransport", "TSHuami", "TSHuamiSimulator"],
            path: "Tests/Families/Huami/SimulatorTests"
        ),
        .testTarget(
            name: "TSSleepTests",
            // TSTestSupport: `sleep analyze` run as a user would.
            dependencies: ["TSTestSupport", "TSModels", "TSSleep"]
        ),
        .testTarget(
            name: "TSReportTests",
            dependencies: ["TSModels", "TSSleep", "TSReport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
