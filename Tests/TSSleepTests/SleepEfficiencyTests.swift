import Testing
import TSModels
import TSSleep

@Suite("sleep efficiency and a night's heart rate, defined once")
struct SleepEfficiencyTests {
    /// Asleep and in bed in minutes, and the percent shown.
    static let cases: [(Int64, Int64, Int)] = [(420, 480, 88), (120, 180, 67), (185, 240, 77), (1, 0, 0), (540, 480, 100)]

    @Test("efficiency is total sleep over time in bed; people see it to the whole percent, halves rounded up", arguments: cases)
    func percent(asleepMinutes: Int64, inBedMinutes: Int64, shown: Int) {
        #expect(SleepEfficiency.percent(asleep: asleepMinutes * 60, inBed: inBedMinutes * 60) == shown)
    }

    @Test("the daily models keep the exact ratio, 0…1")
    func ratio() {
        #expect(SleepEfficiency.ratio(asleep: 7 * 3600, inBed: 8 * 3600) == 0.875)
        #expect(SleepEfficiency.ratio(asleep: 60, inBed: 0) == 0)
        #expect(SleepEfficiency.ratio(asleep: 9 * 3600, inBed: 8 * 3600) == 1)
    }

    @Test("the heart rate of several segments: lowest, highest, and the mean weighted by samples to one decimal")
    func combinedHeartRate() {
        let combined = HeartRateSummary(combining: [
            HeartRateSummary(minimum: 40, average: 50, maximum: 60, samples: 100),
            HeartRateSummary(minimum: 45, average: 60.1, maximum: 80, samples: 200),
            HeartRateSummary(minimum: 30, average: 90, maximum: 99, samples: 0),
        ])
        #expect(combined == HeartRateSummary(minimum: 40, average: 56.7, maximum: 80, samples: 300))
        #expect(HeartRateSummary(combining: []) == nil)
    }
}
