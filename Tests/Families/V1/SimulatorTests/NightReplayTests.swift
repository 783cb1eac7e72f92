import TSSimulatedHistory
import Testing
import TSModels
import TSSimulator

@Suite struct NightReplayTests {
    /// Two nights (3 h each) and a nap after the second.
    static let records: [SleepItem] = [
        SleepItem(stage: .rem, start: 0, duration: 10_800),
        SleepItem(stage: .light, start: 86_400, duration: 7_200),
        SleepItem(stage: .deep, start: 93_600, duration: 3_600),
        SleepItem(stage: .light, start: 115_200, duration: 1_200),
    ]

    @Test func theReplayIsTheLastNightNotTheNapAfterIt() {
        let replay = NightReplay(records: Self.records.reversed(), secondsPerBeat: 1_800)
        #expect(replay.items == Array(Self.records[1...2]))
    }

    @Test func eachBeatStepsThroughTheNightAndTheNightStartsAgainAfterItsEnd() {
        let replay = NightReplay(records: Self.records, secondsPerBeat: 1_800)
        #expect((0..<8).map { replay.stage(atBeat: $0) } == [.light, .light, .light, .light, .deep, .deep, .light, .light])
    }

    @Test func withoutANightTheWearerIsAwake() {
        #expect(NightReplay(records: []).stage(atBeat: 3) == .awake)
        // Naps only: the last of them is replayed.
        let naps = NightReplay(records: [SleepItem(stage: .deep, start: 0, duration: 1_200)], secondsPerBeat: 60)
        #expect(naps.stage(atBeat: 5) == .deep)
    }
}
