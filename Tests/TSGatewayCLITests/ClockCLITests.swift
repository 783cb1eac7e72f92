import Foundation
import TSTestSupport
import Testing

/// `time sync` sets a watch's clock only from a clock tsgateway trusts, unless --force.
@Suite struct ClockCLITests {
    @Test("time sync refuses with exit 75 and the reason while the clock is not trusted; --force sets it all the same")
    func refusesUntrustedUnlessForced() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let refused = try await cli.runDetached(["time", "sync", "--simulate"], environment: ["TSGATEWAY_CLOCK": "untrusted"])
        #expect(refused.status == 75, "\(refused)")
        #expect(refused.stdout.isEmpty)
        #expect(refused.stderr.contains("TSGATEWAY_CLOCK=untrusted says the system clock") && refused.stderr.contains("the watch's clock is not set from it"), "\(refused.stderr)")
        let forced = try await cli.runDetached(["time", "sync", "--simulate", "--force"], environment: ["TSGATEWAY_CLOCK": "untrusted"])
        #expect(forced.status == 0, "\(forced)")
        #expect(forced.stdout.hasPrefix("set the watch's clock to "))
        #expect(forced.stderr.contains("all the same (--force)"))
        let trusted = try await cli.runDetached(["time", "sync", "--simulate"], environment: ["TSGATEWAY_CLOCK": "trusted"])
        #expect(trusted.status == 0, "\(trusted)")
    }

    @Test("a TSGATEWAY_CLOCK that says neither trusted nor untrusted is a usage error that says what to write")
    func badOverride() async throws {
        let cli = try CLI(); defer { cli.cleanUp() }
        let result = try await cli.runDetached(["time", "sync", "--simulate"], environment: ["TSGATEWAY_CLOCK": "maybe"])
        #expect(result.status == 64, "\(result)")
        #expect(result.stderr.contains("TSGATEWAY_CLOCK=maybe is neither trusted nor untrusted"))
    }
}
