import Foundation
import Testing
import TSTestSupport

/// `protocol decode --dialect huami` on the bad input a person may bring: a capture of another
/// dialect (a ring's, found by its service; a v1 watch's, found by its frames), and pasted bytes
/// read as the characteristic `--characteristic` names, or a characteristic the band does not have.
@Suite struct HuamiDecodeCLITests {
    typealias C = CaptureCLITests

    @Test func aCaptureOfAnotherDialectAskedAsHuamiIsAClearError() async throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let ring = try await cli.runDetached(["protocol", "decode", "--btsnoop", try C().write(DecodeDialectsCLITests.ringCapture, cli), "--dialect", "huami"])
        #expect(ring.status == 64)
        #expect(ring.stderr.contains("carries the qring dialect's exchange"), "\(ring.stderr)")
        #expect(ring.stderr.contains("not huami's; run it again with --dialect qring"))
        #expect(ring.stdout.isEmpty)
        let v1 = try await cli.runDetached(["protocol", "decode", "--btsnoop", try C().write(C.capture, cli), "--dialect", "huami", "--json"])
        #expect(v1.status == 64)
        #expect(v1.stderr.contains("carries the v1 dialect's exchange"), "\(v1.stderr)")
        #expect(v1.stdout.isEmpty)
    }

    @Test func pastedBytesAreReadAsTheCharacteristicNamed() async throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let done = try await cli.runDetached(["protocol", "decode", "--dialect", "huami", "--characteristic", "0004", "10 02 01"])
        #expect(done.status == 0, "\(done.stderr)")
        #expect(done.stdout.contains("fetch: done, with no transfer started"), "\(done.stdout)")
        let battery = try await cli.runDetached(["protocol", "decode", "--dialect", "huami", "--characteristic", "0006", "--from", "read", "--json",
                                                 "00 50 01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"])
        #expect(battery.status == 0, "\(battery.stderr)")
        let object = try #require(JSONSerialization.jsonObject(with: Data(battery.stdout.utf8)) as? [String: Any])
        #expect(object["type"] as? String == "frame")
        #expect(((object["message"] as? [String: Any])?["fields"] as? [String: Any])?["level"] as? Int == 80)
        let alarm = try await cli.runDetached(["protocol", "decode", "--dialect", "huami", "--from", "central", "02 82 07 1e 1f"])
        #expect(alarm.stdout.contains("configuration: set alarm slot 2 to 07:30"), "\(alarm.stdout)")
        let unknown = try await cli.runDetached(["protocol", "decode", "--dialect", "huami", "--characteristic", "0042", "10 02 01"])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains("--characteristic 0042 is none of the huami dialect's characteristics (0009, 0004, 0005, 0006, 2a2b, 2a39, 2a37)"), "\(unknown.stderr)")
        let notHuami = try await cli.runDetached(["protocol", "decode", "--dialect", "qring", "--characteristic", "0004", "10 02 01"])
        #expect(notHuami.status == 64)
        #expect(notHuami.stderr.contains("the qring dialect speaks over its pairs only"), "\(notHuami.stderr)")
        let garbage = try await cli.runDetached(["protocol", "decode", "--dialect", "huami", "--characteristic", "0009", "a5 01 00"])
        #expect(garbage.status == 65)
        #expect(garbage.stdout.contains("skipped auth"), "\(garbage.stdout)")
    }
}
