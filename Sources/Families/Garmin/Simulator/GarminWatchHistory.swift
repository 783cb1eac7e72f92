import Foundation
import TSGarmin
import TSModels
import TSSimulatedHistory

/// What a simulated Garmin watch holds: seeded nights and heart rate (the ground truth), and the
/// FIT files it serves them in, one sleep file and one monitoring file a day, listed by the
/// directory (file index 0; protocol-spec/garmin/garmin.md §8.4).
public struct GarminWatchHistory: Sendable {
    public let sleepItems: [SleepItem]
    public let heartRates: [HeartRateSample]
    public let files: [UInt16: [UInt8]]
    public let directory: [GarminDirectoryEntry]

    public init(seed: UInt64, timeZone: TimeZone, now: Date, days: Int, compressesTimestamps: Bool = true) throws(GarminError) {
        let items = SleepDataGenerator(seed: seed, timeZone: timeZone).records(days: days, lastMorning: now, notAfter: now)
        let end = Int64(now.timeIntervalSince1970)
        let start = end - Int64(days) * 86_400
        let samples = HeartRateHistoryGenerator(seed: seed).samples(start: start, end: end, records: items)
        // What it holds: the nights that end in one of its days (an earlier night's file is gone).
        sleepItems = items.filter { $0.end > start }
        heartRates = samples
        var files: [UInt16: [UInt8]] = [:]
        var directory: [GarminDirectoryEntry] = []
        var index: UInt16 = 1
        for day in 0..<days {
            let dayStart = start + Int64(day) * 86_400, dayEnd = dayStart + 86_400
            // A night belongs to the day it ends in, as a watch writes its sleep file in the morning.
            let nights = items.filter { $0.end > dayStart && $0.end <= dayEnd }
            let minutes = samples.filter { let t = Int64($0.time.timeIntervalSince1970); return t >= dayStart && t < dayEnd }
            for (subtype, bytes) in [(UInt8(FITFileType.sleep), try FITRecords.sleepFile(nights, created: dayEnd, compressesTimestamps: compressesTimestamps)),
                                     (UInt8(FITFileType.monitoring), try FITRecords.monitoringFile(minutes, created: dayEnd, compressesTimestamps: compressesTimestamps))]
            where !(subtype == UInt8(FITFileType.sleep) && nights.isEmpty) && !(subtype == UInt8(FITFileType.monitoring) && minutes.isEmpty) {
                files[index] = bytes
                directory.append(GarminDirectoryEntry(index: index, subtype: subtype, number: index, size: UInt32(bytes.count),
                                                      time: GarminTime.garmin(min(dayEnd, end)) ?? 0))
                index += 1
            }
        }
        self.files = files
        self.directory = directory
    }

    /// File index 0: the directory's entries.
    public var directoryFile: [UInt8] { directory.flatMap(\.bytes) }
}
