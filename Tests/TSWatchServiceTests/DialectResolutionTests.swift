import TSDevice
import TSFamilies
import TSFamilyKit
import TSModels
import TSNpk
import TSNpkWatch
import TSProtocolV1Watch
import Testing

/// The built-in families' dialects, which the rules below choose among.
private let builtIn = WatchFamilies.builtIn.map(\.dialect)

/// The order in which the gateway decides a watch's dialect: asked, remembered, its GATT
/// services, protocol v1's central.
@Suite struct DialectResolutionTests {
    static let v1Service = GATTProfile.protocolV1.service
    static let npkService = GATTProfile.npk.service
    static let heartRateService = "0000180d-0000-1000-8000-00805f9b34fb"

    @Test func theDialectAskedForWinsOverEverythingElse() throws {
        let chosen = try DialectResolution.resolve(asked: .standard, remembered: .npk, serviceUUIDs: [Self.npkService], among: builtIn)
        #expect(chosen.dialect.name == .standard)
        #expect(chosen.reason == .asked)
    }

    @Test func aRememberedDialectWinsOverTheServices() throws {
        let chosen = try DialectResolution.resolve(asked: nil, remembered: .npk, serviceUUIDs: [Self.v1Service], among: builtIn)
        #expect(chosen.dialect.name == .npk)
        #expect(chosen.reason == .remembered)
    }

    @Test func theServicesChooseInAnyLetterCase() throws {
        let v1 = try DialectResolution.resolve(asked: nil, remembered: nil, serviceUUIDs: [Self.heartRateService, Self.v1Service.lowercased()], among: builtIn)
        #expect(v1.dialect.name == .protocolV1)
        #expect(v1.reason == .services)
        let upper = try DialectResolution.resolve(asked: nil, remembered: nil, serviceUUIDs: [Self.v1Service.uppercased()], among: builtIn)
        #expect(upper.dialect.name == .protocolV1 && upper.reason == .services)
    }

    @Test func aServiceOtherVendorsUseTooIsNeverGuessed() throws {
        // NPK's service is Realtek's; FitCloud-backend watches offer it too.
        #expect(throws: SharedServiceError(dialects: [.npk])) {
            try DialectResolution.resolve(asked: nil, remembered: nil, serviceUUIDs: [Self.heartRateService, Self.npkService.uppercased()], among: builtIn)
        }
        #expect(try DialectResolution.resolve(asked: .npk, remembered: nil, serviceUUIDs: [Self.npkService], among: builtIn).dialect.name == .npk)
        #expect(try DialectResolution.resolve(asked: nil, remembered: .npk, serviceUUIDs: [Self.npkService], among: builtIn).reason == .remembered)
    }

    @Test func withoutAMatchingServiceProtocolV1sCentralDecidesOnceConnected() throws {
        let chosen = try DialectResolution.resolve(asked: nil, remembered: nil, serviceUUIDs: [Self.heartRateService], among: builtIn)
        #expect(chosen.dialect.name == .protocolV1)
        #expect(chosen.reason == .fallback)
        #expect(try DialectResolution.resolve(asked: nil, remembered: nil, serviceUUIDs: [], among: builtIn).reason == .fallback)
    }

    @Test func aServiceTwoDialectsShareAsksForTheDialect() throws {
        // A second dialect on protocol v1's service, each of them identified by it alone.
        var twin = WatchDialect.protocolV1
        twin.name = Dialect(rawValue: "v1-twin")
        let dialects = [WatchDialect.protocolV1, .standardServices, .npk, twin]
        #expect(throws: SharedServiceError(dialects: [.protocolV1, Dialect(rawValue: "v1-twin")])) {
            try DialectResolution.resolve(asked: nil, remembered: nil, serviceUUIDs: [Self.v1Service], among: dialects)
        }
        // Asked or remembered, the shared service does not matter.
        #expect(try DialectResolution.resolve(asked: nil, remembered: Dialect(rawValue: "v1-twin"), serviceUUIDs: [Self.v1Service], among: dialects).dialect.name.rawValue == "v1-twin")
    }

    @Test func anUnknownDialectAskedForIsAnErrorButAForgottenRememberedOneIsPassedOver() throws {
        #expect(throws: DialectError.self) { try DialectResolution.resolve(asked: Dialect(rawValue: "polar"), remembered: nil, serviceUUIDs: [], among: builtIn) }
        let chosen = try DialectResolution.resolve(asked: nil, remembered: Dialect(rawValue: "retired"), serviceUUIDs: [Self.v1Service], among: builtIn)
        #expect(chosen.dialect.name == .protocolV1)
        #expect(chosen.reason == .services)
    }
}

@Suite struct ScanDialectHintTests {
    @Test func scanSaysTheDialectAServiceIdentifiesAndAsksForOneItDoesNot() {
        #expect(DialectResolution.hint([GATTProfile.protocolV1.service.lowercased()], among: builtIn) == "v1")
        #expect(DialectResolution.hint([GATTProfile.npk.service], among: builtIn)?.hasPrefix("ambiguous: npk or another vendor's protocol") == true)
        #expect(DialectResolution.isAmbiguous([GATTProfile.npk.service], among: builtIn))
        #expect(!DialectResolution.isAmbiguous([GATTProfile.protocolV1.service], among: builtIn))
        #expect(DialectResolution.hint(["0000180d-0000-1000-8000-00805f9b34fb"], among: builtIn) == nil)
        #expect(DialectResolution.serving([GATTProfile.npk.service.lowercased()], among: builtIn).map(\.name) == [.npk])
    }
}
