import Foundation
import Logging
import Synchronization
import Testing
import TSDBus
import TSDevice
import TSFamilies
import TSFamilyKit
import TSGatewayAPI
import TSGatewayService
import TSGATT
import TSModels
import TSProtocol
import TSStore
import TSTestSupport
import TSTransport
import TSWatchService

/// A dialect added inside this test target, as a new dialect's module would add one: a central
/// (`ToyBand`) and one registration. `info` and `alarms get` then work through the watch service
/// and through `tsgateway serve`'s D-Bus service, and what the toy lacks answers "not supported".
@Suite("a dialect added in one module", .serialized, .timeLimit(.minutes(2)))
struct ToyDialectTests {
    static let address = WatchID("00:00:5E:00:53:7A")!
    static let alarms = [
        Alarm(slot: 0, hour: 6, minute: 30, repeatDays: [.monday, .friday]),
        Alarm(slot: 2, hour: 9, minute: 5, isEnabled: false),
    ]

    /// The toy's one registration, and a watch of it over the loopback transport.
    static func openToy() throws -> (OpenedWatch, ToyBandPeripheral) {
        ToyFamilyCommandTests.register()
        let peripheral = ToyBandPeripheral(battery: 64, alarms: alarms)
        let opened = WatchOpener.open(.transport(LoopbackTransport(peripheral: peripheral, mtu: try ATTMTU(247))),
                                      dialect: try WatchFamilies.dialect(named: .toy))
        return (opened, peripheral)
    }

    static func temporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-toy-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test("info and alarms get through the watch service")
    func throughTheWatchService() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (opened, _) = try Self.openToy()
        #expect(opened.central.dialect == .toy)
        let store = try GatewayStore(path: directory.appendingPathComponent("db.sqlite").path)
        let operations = WatchOperations(watch: opened.central, store: store, watchId: Self.address, policy: WatchPolicy())

        let info = try await operations.connect()
        #expect(info.model == "Toy Band 1")
        #expect(info.dialect == .toy)
        #expect(try await operations.battery() == BatteryStatus(level: 64, state: .discharging))
        #expect(try await operations.alarms() == Self.alarms)
        #expect(try await store.alarmHistory(watch: Self.address).map(\.origin) == [.read], "the read is kept in the alarm history")
        #expect(try await store.watches().first?.info?.dialect == .toy, "the store remembers the dialect")

        // What the toy has no part of answers at once, as "not supported".
        let lacking: [(String, @Sendable () async throws -> Void)] = [
            ("monitor settings", { _ = try await operations.monitorConfig(.heartRate) }),
            ("a sleep sync", { _ = try await operations.syncSleep(SyncRequest(from: 0)) }),
            ("writing the alarm table", { try await operations.setAlarms(Self.alarms) }),
        ]
        for (what, attempt) in lacking {
            do {
                try await attempt()
                Issue.record("\(what) succeeded on a watch without it")
            } catch {
                #expect(ErrorCategory.of(error) == .notSupported, "\(what): \(error)")
            }
        }
        await opened.central.disconnect()
    }

    @Test("requests that overlap each get their own answer; one the band never answers ends with its caller")
    func overlappingRequests() async throws {
        let (opened, peripheral) = try Self.openToy()
        let band = try #require(opened.central as? ToyBand)
        _ = try await band.connect()
        // As serve does: its supervisor reads the alarm table while a client's GetInfo reads the battery.
        async let battery = band.battery()
        async let alarms = band.alarms()
        let (level, table) = try await (battery, alarms)
        #expect(level.level == 64)
        #expect(table == Self.alarms)

        await peripheral.setSilent(true)
        let waiting = Task { try await band.battery() }
        try await Task.sleep(for: .milliseconds(100))
        waiting.cancel()
        // A cancelled request ends with its caller: had it waited for the answer, it would have
        // ended with the band's timeout (WatchError.timeout) instead.
        await #expect(throws: CancellationError.self) { try await waiting.value }
        await opened.central.disconnect()
    }

    @Test("info and alarms get through tsgateway serve's D-Bus service")
    func throughServe() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let bus = try PrivateBus()
        defer { bus.stop() }
        let (opened, peripheral) = try Self.openToy()
        let database = directory.appendingPathComponent("db.sqlite").path
        let settings = GatewayConfiguration(database: database)
        let supervisor = WatchSupervisor(entry: .init(address: Self.address, name: "toy"), watch: opened.central, store: try GatewayStore(path: database),
                                         settings: settings, logger: Logger(label: "toy"), publish: { _ in })
        let server = try BusConnection(.address(bus.address))
        defer { server.close() }
        try await GatewayBusService(connection: server, supervisors: [supervisor], logger: Logger(label: "toy")).start()
        let client = GatewayClient(connection: try BusConnection(.address(bus.address)))
        defer { client.close() }
        let remote = client.watch(Self.address)

        let status = try await remote.status()
        #expect(status.dialect == .toy, "D-Bus says which dialect the watch speaks")
        #expect(status.info?.spokenDialect == .toy)
        #expect(status.info?.model == "Toy Band 1")
        #expect(status.batteryLevel == 64)
        #expect(try await remote.alarms() == Self.alarms)
        await peripheral.setBattery(12)
        #expect(try await remote.status().batteryLevel == 12, "read from the watch again")
        do {
            _ = try await remote.monitorConfig(.heartRate)
            Issue.record("a monitor setting read from a watch without monitors")
        } catch {
            #expect(ErrorCategory.of(error) == .notSupported, "\(error)")
        }
        await opened.central.disconnect()
    }
}

extension Dialect {
    static let toy = Dialect(rawValue: "toy")
}

/// The toy's wire: the central writes one command byte; the band answers in one notification.
/// 0x01 battery → [0x81, level, charging 0/1]; 0x02 alarms → [0x82, count, (slot, hour, minute,
/// enabled 0/1, repeat mask) × count].
enum ToyWire {
    static let battery: UInt8 = 0x01
    static let alarms: UInt8 = 0x02
}

/// The band's side of the toy dialect, behind the loopback transport.
actor ToyBandPeripheral: PeripheralEndpoint {
    private var send: (@Sendable ([UInt8]) async -> Void)?
    private var battery: UInt8
    let alarms: [Alarm]

    init(battery: UInt8, alarms: [Alarm]) {
        self.battery = battery
        self.alarms = alarms
    }

    func setBattery(_ level: UInt8) { battery = level }

    /// A silent band takes commands and answers none.
    private var silent = false
    func setSilent(_ silent: Bool) { self.silent = silent }

    func centralConnected(mtu: ATTMTU, send: @escaping @Sendable ([UInt8]) async -> Void) async { self.send = send }

    func centralWrote(_ chunk: [UInt8]) async {
        guard !silent else { return }
        switch chunk.first {
        case ToyWire.battery: await send?([0x81, battery, 0])
        case ToyWire.alarms:
            await send?([0x82, UInt8(alarms.count)] + alarms.flatMap { [$0.slot, $0.hour, $0.minute, $0.isEnabled ? 1 : 0, $0.repeatDays.rawValue] })
        default: break
        }
    }

    func centralDisconnected() async { send = nil }
}

/// The gateway's side of the toy dialect: battery and the alarm table (read only), nothing else.
actor ToyBand: WatchCentral {
    static let dialect = WatchDialect(
        name: .toy, summary: "a test's own band: battery and an alarm table",
        gatt: GATTProfile(service: "0000f00d-0000-1000-8000-00805f9b34fb", writeCharacteristic: "0000f00e-0000-1000-8000-00805f9b34fb",
                          notifyCharacteristic: "0000f00f-0000-1000-8000-00805f9b34fb", writeMode: .withoutResponse),
        credential: ToyFamilyTests.pin,
        makeCentral: { transport, configuration in
            ToyBand.given.withLock { $0.append((configuration.pairing, configuration.pairingSecret)) }
            return ToyBand(transport: transport, configuration: configuration)
        })

    /// What every toy central was made with: whether it pairs, and the pin it was handed.
    static var configurationsGiven: [(pairing: Bool, secret: PairingSecret?)] { given.withLock { $0 } }
    private static let given = Mutex<[(pairing: Bool, secret: PairingSecret?)]>([])

    nonisolated let dialect = Dialect.toy
    nonisolated let configuration: WatchConfiguration
    private let transport: any WatchTransport
    private var connection: (any TransportConnection)?
    /// Requests waiting for their answer, oldest first. Several can wait at once: the actor
    /// takes the next call while one waits (serve reads the battery while a client asks for alarms).
    private var waiting: [Waiting] = []
    private var requestsMade = 0
    /// How long a request waits for the band's answer.
    static let answerLimit: Duration = .seconds(10)

    private struct Waiting {
        let id: Int
        let answer: UInt8
        let continuation: CheckedContinuation<[UInt8], any Error>
        let deadline: Task<Void, Never>
    }
    private let fanOut = EventFanOut<WatchEvent>(buffer: 8)
    private(set) var info: DeviceInfo?

    init(transport: any WatchTransport, configuration: WatchConfiguration) {
        self.transport = transport
        self.configuration = configuration
    }

    var isConnected: Bool { connection != nil }

    var capabilities: WatchCapabilities {
        info == nil ? .nothing : WatchCapabilities(alarms: .init(maxCount: 4, labelMaxBytes: 0, snooze: false), battery: true)
    }

    nonisolated func events() -> AsyncStream<WatchEvent> { fanOut.subscribe() }

    func connect() async throws -> DeviceInfo {
        if connection != nil, let info { return info }
        let opened = try await transport.open()
        connection = opened
        Task { [weak self] in
            for await event in opened.events { await self?.received(event) }
        }
        let described = DeviceInfo(model: "Toy Band 1", firmware: "0.1",
                                   capabilities: WatchCapabilities(alarms: .init(maxCount: 4, labelMaxBytes: 0, snooze: false)),
                                   dialect: .toy)
        info = described
        return described
    }

    func disconnect() async {
        guard let open = connection else { return }
        connection = nil
        await open.close()
        failAll(WatchError.disconnected("disconnected by the gateway"))
        fanOut.send(.linkLost(reason: "disconnected by the gateway"))
    }

    func battery() async throws -> BatteryStatus {
        let answer = try await request(ToyWire.battery, answer: 0x81, length: 3)
        return BatteryStatus(level: answer[1], state: answer[2] == 1 ? .charging : .discharging)
    }

    func alarms() async throws -> [Alarm] {
        let answer = try await request(ToyWire.alarms, answer: 0x82, length: 2)
        let count = Int(answer[1])
        guard answer.count == 2 + count * 5 else { throw WatchError.protocolViolation("the toy's alarm table has \(answer.count) bytes for \(count) alarms") }
        return (0..<count).map { index in
            let fields = Array(answer[2 + index * 5 ..< 7 + index * 5])
            return Alarm(slot: fields[0], hour: fields[1], minute: fields[2], isEnabled: fields[3] == 1, repeatDays: AlarmRepeat(rawValue: fields[4]))
        }
    }

    /// Writes `command` and waits for the notification that begins with `answer`: at most
    /// `answerLimit`, and no longer than the caller waits (cancellation).
    private func request(_ command: UInt8, answer: UInt8, length: Int) async throws -> [UInt8] {
        guard let connection else { throw WatchError.notConnected }
        requestsMade += 1
        let id = requestsMade
        let reply = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[UInt8], any Error>) in
                let deadline = Task { [weak self] in
                    guard (try? await Task.sleep(for: Self.answerLimit)) != nil else { return }
                    await self?.fail(id, WatchError.timeout(command: "toy command \(command)", attempts: 1))
                }
                waiting.append(Waiting(id: id, answer: answer, continuation: continuation, deadline: deadline))
                Task { try? await connection.write([command]) }
            }
        } onCancel: {
            Task { await self.fail(id, CancellationError()) }
        }
        guard reply.first == answer, reply.count >= length else { throw WatchError.protocolViolation("the toy answered \(reply)") }
        return reply
    }

    private func fail(_ id: Int, _ error: any Error) {
        guard let index = waiting.firstIndex(where: { $0.id == id }) else { return }
        let failed = waiting.remove(at: index)
        failed.deadline.cancel()
        failed.continuation.resume(throwing: error)
    }

    private func failAll(_ error: any Error) {
        let failed = waiting
        waiting = []
        for request in failed {
            request.deadline.cancel()
            request.continuation.resume(throwing: error)
        }
    }

    private func received(_ event: TransportEvent) {
        switch event {
        case let .notification(bytes):
            // The oldest request this answer is for.
            guard let index = waiting.firstIndex(where: { $0.answer == bytes.first }) else { return }
            let answered = waiting.remove(at: index)
            answered.deadline.cancel()
            answered.continuation.resume(returning: bytes)
        case let .disconnected(reason):
            connection = nil
            failAll(WatchError.disconnected(reason))
            fanOut.send(.linkLost(reason: reason))
        }
    }
}
