import Foundation
import Testing
import TSQRingSimulator
import TSTestSupport

/// `tsgateway probe` through BlueZ: against a fake bluetoothd that bridges the simulated ring,
/// and against python-dbusmock's bluez5 template for devices that do not answer.
@Suite struct ProbeCLITests {
    @Test func theCLIProbesTheBridgedRingAndNamesItsDialect() async throws {
        _ = try CLI.requireBinary()
        let ring = SimulatedRing(history: RingHistory(seed: 9, timeZone: TimeZone(identifier: "Europe/Berlin")!, now: Date(timeIntervalSince1970: 1_762_156_800), days: 2))
        let fake = try await BridgedRing(ring: ring, mtu: 185); defer { fake.stop() }
        let environment = ["TSGATEWAY_DBUS_ADDRESS": fake.bus.address]
        let json = try await CLI.runOnceDetached(["probe", "AA:BB:CC:DD:EE:21", "--json"], environment: environment)
        #expect(json.status == 0, "\(json.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(report["verdict"] as? String == "identified" && report["dialect"] as? String == "qring", "\(report)")
        #expect(report["next"] as? String == "tsgateway pair AA:BB:CC:DD:EE:21 --dialect qring")
        let services = try #require(report["services"] as? [[String: Any]])
        #expect(services.count == 3, "command pair, big-data pair, Device Information: \(services)")
        let information = try #require(report["deviceInformation"] as? [[String: Any]])
        #expect(information.contains { $0["name"] as? String == "Firmware Revision String" && $0["value"] as? String == "R02_3.00.06_240523" })
        #expect(await ring.clock == nil, "the probe set the ring's clock")

        let text = try await CLI.runOnceDetached(["probe", "AA:BB:CC:DD:EE:21"], environment: environment)
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("qring: answered battery (command 0x03): model R02_5A1C"), "\(text.stdout)")
        #expect(text.stdout.contains("next: tsgateway pair AA:BB:CC:DD:EE:21 --dialect qring"), "\(text.stdout)")
        #expect(text.stdout.contains("notify"), "the characteristics' properties are listed: \(text.stdout)")
    }

    @Test func anAddressThatDoesNotAnswerIsAClearMessageAndExitStatus() async throws {
        _ = try CLI.requireBinary()
        let mock = try await MockBlueZ(); defer { mock.stop() }
        try await mock.addAdapter("hci0")
        let environment = ["TSGATEWAY_DBUS_ADDRESS": mock.bus.address]
        // Nobody by that address: the scan ends empty.
        let unknown = try await CLI.runOnceDetached(["probe", "AA:BB:CC:DD:EE:77", "--timeout", "2"], environment: environment)
        #expect(unknown.status == 80, "\(unknown.stderr)")
        #expect(unknown.stderr.contains("\ntsgateway: AA:BB:CC:DD:EE:77 did not answer: "), "\(unknown.stderr)")
        #expect(unknown.stderr.contains("tsgateway scan --all"), "\(unknown.stderr)")
        // Known to BlueZ, but its services never resolve: the connect runs out of time.
        try await mock.addDevice(adapter: "hci0", address: "AA:BB:CC:DD:EE:78", alias: "Quiet")
        let quiet = try await CLI.runOnceDetached(["probe", "AA:BB:CC:DD:EE:78", "--timeout", "2"], environment: environment)
        #expect([69, 75].contains(quiet.status), "\(quiet.status): \(quiet.stderr)")
        #expect(quiet.stderr.contains("\ntsgateway: AA:BB:CC:DD:EE:78 did not answer: "), "\(quiet.stderr)")
        #expect(!quiet.stderr.contains("Fatal error"))
    }

    @Test func badInputIsAUsageErrorAndNoBluetoothdIsUnavailable() async throws {
        _ = try CLI.requireBinary()
        let bad = try await CLI.runOnceDetached(["probe", "not-an-address"])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("The value 'not-an-address' is invalid for '<address>': expected a Bluetooth address, six pairs of hex digits such as AA:BB:CC:DD:EE:FF"), "\(bad.stderr)")
        let bare = try PrivateBus(); defer { bare.stop() }
        let none = try await CLI.runOnceDetached(["probe", "AA:BB:CC:DD:EE:79"], environment: ["TSGATEWAY_DBUS_ADDRESS": bare.address])
        #expect(none.status == 69)
        #expect(none.stderr == "probing AA:BB:CC:DD:EE:79…\ntsgateway: bluetoothd is not running on the system bus; start it with `sudo systemctl start bluetooth`\n", "\(none.stderr)")
    }
}
