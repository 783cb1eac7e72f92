import Foundation
import TSNpkWatch
import TSQRingWatch
import Testing
import TSDevice
import TSFamilies
import TSFamilyKit
import TSModels
import TSTransport
import TSWatchService

/// Each dialect's `centralTimes` reads the clock its own central writes: two connects with a time
/// set five seconds apart give the same rest and clocks five seconds apart; in another zone the
/// write is not the same request with another clock.
@Suite struct CentralTimesTests {
    static let dialects: [Dialect] = [.protocolV1, .npk, .qring, Dialect(rawValue: "huami")]
    static let now = ReplayCLITests.now

    /// The first write of a connect and a time set at `clock` in `zone` that carries the central's clock, read by the dialect.
    static func clockWrite(_ name: Dialect, at clock: Date, in zone: TimeZone) async throws -> CentralTimes {
        let family = try WatchFamilies.named(name)
        let reader = try #require(family.dialect.centralTimes, "\(name) says of no clock in its requests")
        let link = try #require(family.simulated).open(DialectCaptureTests.threeDays(in: zone, until: now))
        let recording = RecordingTransport(recording: link.transport)
        var configuration = WatchConfiguration()
        configuration.timeZone = zone
        configuration.now = { clock }
        configuration.pairingSecret = family.dialect.credential?.neededOnEveryConnect == true ? link.pairingSecret : nil
        let central = family.dialect.makeCentral(recording, configuration)
        try await central.connect()
        try await central.syncTime()
        await central.disconnect()
        let times = await recording.entries().filter { $0.direction == .write && $0.characteristic == nil }
            .compactMap { reader.centralTimes(in: $0.bytes, channel: $0.pair) }
        return try #require(times.first { $0.fields.contains { $0.kind != .rangeStart } }, "no write of \(name) carried its clock")
    }

    @Test(arguments: CentralTimesTests.dialects)
    func theClockIsReadAndTheRestIsKept(dialect: Dialect) async throws {
        let berlin = try #require(TimeZone(identifier: "Europe/Berlin")), tokyo = try #require(TimeZone(identifier: "Asia/Tokyo"))
        let first = try await Self.clockWrite(dialect, at: Self.now, in: berlin)
        let later = try await Self.clockWrite(dialect, at: Self.now.addingTimeInterval(5), in: berlin)
        #expect(first.rest == later.rest)
        #expect(zip(later.fields, first.fields).map { $0.time - $1.time } == first.fields.map { $0.kind == .rangeStart ? 0 : 5 })
        let elsewhere = try await Self.clockWrite(dialect, at: Self.now, in: tokyo)
        let shifts = zip(elsewhere.fields, first.fields).map { abs($0.time - $1.time) }
        #expect(elsewhere.rest != first.rest || shifts.contains { $0 >= 3600 }, "a time set in another zone reads as the same request with the same clock")
    }
}
