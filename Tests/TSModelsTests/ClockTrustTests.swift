import Foundation
import TSModels
import Testing

/// `ClockTrust.decide`, step by step in the order its doc comment gives.
@Suite("clock trust")
struct ClockTrustTests {
    static let floor = Date(timeIntervalSince1970: 1_795_651_200)          // 2026-11-26
    static let now = floor + 10 * 86_400                                  // 2026-12-06
    /// A Pi at boot on the time fake-hwclock saved: a week behind, but after every floor.
    static let pi = ClockEvidence(kernelSynchronized: false, timeSync: .waiting(service: "systemd-timesyncd"), now: now,
                                  buildFloor: floor, newestStamp: now - 86_400)

    @Test("1. TSGATEWAY_CLOCK decides before anything else")
    func asserted() {
        var evidence = Self.pi
        evidence.asserted = .trusted
        #expect(ClockTrust.decide(evidence) == .trusted(.asserted))
        evidence.kernelSynchronized = true
        evidence.asserted = .untrusted
        #expect(ClockTrust.decide(evidence).distrust?.reason == .asserted)
    }

    @Test("2. synchronised (kernel or time-sync service) is trusted, even earlier than a stored stamp")
    func synchronized() {
        var evidence = Self.pi
        evidence.kernelSynchronized = true
        evidence.newestStamp = Self.now + 30 * 86_400
        #expect(ClockTrust.decide(evidence) == .trusted(.synchronized))
        evidence.kernelSynchronized = nil
        evidence.timeSync = .synchronized(service: "timedated (NTPSynchronized)")
        #expect(ClockTrust.decide(evidence) == .trusted(.synchronized))
    }

    @Test("3. a clock earlier than this build is not trusted, even where nothing will synchronise it")
    func beforeBuild() throws {
        var evidence = Self.pi
        evidence.timeSync = .none
        evidence.now = Self.floor - 86_400
        evidence.newestStamp = nil
        let distrust = try #require(ClockTrust.decide(evidence).distrust)
        #expect(distrust.reason == .beforeBuild(Self.floor))
        #expect(distrust.description.contains("earlier than this build of tsgateway (2026-11-26T00:00:00Z)"))
        #expect(distrust.description.contains("--force"))
        #expect(distrust.category == .timeout, "exit 75")
    }

    @Test("4. a clock earlier than the newest stored stamp is not trusted; within the tolerance it is")
    func beforeNewestStamp() throws {
        var evidence = Self.pi
        evidence.timeSync = .none
        evidence.newestStamp = Self.now + 3600
        #expect(try #require(ClockTrust.decide(evidence).distrust).reason == .beforeNewestStamp(Self.now + 3600))
        evidence.newestStamp = Self.now + ClockTrust.stampTolerance - 1
        #expect(ClockTrust.decide(evidence) == .trusted(.nothingWillSync))
    }

    @Test("5. a time-sync service that runs and has not synchronised yet: not trusted (a Pi at boot)")
    func waiting() throws {
        let distrust = try #require(ClockTrust.decide(Self.pi).distrust)
        #expect(distrust.reason == .waitingForSync(service: "systemd-timesyncd"))
        #expect(distrust.why == "the system clock (2026-12-06T00:00:00Z) is not synchronised yet (systemd-timesyncd runs and has not synchronised it)")
    }

    @Test("6. nothing will ever synchronise: the kernel says unsynchronised for good (build machines, containers), the clock passed the floors: trusted")
    func nothingWillSync() {
        var evidence = Self.pi
        evidence.timeSync = .none
        #expect(ClockTrust.decide(evidence) == .trusted(.nothingWillSync))
        evidence.kernelSynchronized = nil
        #expect(ClockTrust.decide(evidence) == .trusted(.nothingWillSync))
    }

    @Test("this build's date floor is not in the future")
    func sourceDate() {
        #expect(GatewayVersion.sourceDate <= Date())
    }
}
