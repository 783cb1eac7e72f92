import Foundation
import TSModels

/// What the project reads out of a watch's FIT files (protocol-spec/garmin/garmin.md §11) and
/// writes into the simulated watch's: sleep items from sleep_level records, heart-rate samples
/// from monitoring records.
public enum FITRecords {
    /// Sleep levels (sleep_level field 0) and the project's stages; 0 (unmeasurable) is a gap.
    static let stages: [UInt64: SleepStage] = [1: .awake, 2: .light, 3: .deep, 4: .rem]
    static func level(_ stage: SleepStage) -> UInt64 {
        switch stage {
        case .awake: 1
        case .light: 2
        case .deep: 3
        case .rem: 4
        }
    }

    /// Each sleep_level record ends its stage at its timestamp; the stage began at the record before
    /// (the first record begins nothing). A record without a level or timestamp is passed over.
    public static func sleepItems(_ file: FITFile) -> [SleepItem] {
        var items: [SleepItem] = []
        var previous: Int64?
        for message in file.messages where message.global == FITGlobal.sleepLevel {
            guard let time = message.timestamp.map(GarminTime.unix) else { continue }
            if let start = previous, time > start, let stage = message.unsigned(0).flatMap({ stages[$0] }) {
                items.append(SleepItem(stage: stage, start: start, duration: time - start))
            }
            previous = time
        }
        return items
    }

    /// Heart rate of each monitoring record that has one (field 27), at its time (`monitoringRecords`).
    public static func heartRateSamples(_ file: FITFile) -> [HeartRateSample] {
        monitoringRecords(file).compactMap { record in
            guard let bpm = record.message.unsigned(27), bpm > 0 else { return nil }
            return HeartRateSample(time: Date(timeIntervalSince1970: TimeInterval(GarminTime.unix(record.time))), bpm: Int(bpm))
        }
    }

    /// The monitoring records (global 55) with their times in FIT's seconds: from the record's
    /// timestamp (253, a compressed header's included) or its timestamp_16 (26) resolved against
    /// the last full timestamp of the file (`ref + ((t16 − (ref & 0xFFFF)) & 0xFFFF)`), which the
    /// resolved time then becomes. A record with neither, or before any full timestamp, is passed over.
    public static func monitoringRecords(_ file: FITFile) -> [(time: UInt32, message: FITMessage)] {
        var reference: UInt32?
        var records: [(time: UInt32, message: FITMessage)] = []
        for message in file.messages {
            var time = message.timestamp
            if let full = time {
                reference = full
            } else if message.global == FITGlobal.monitoring, let short = message.unsigned(26), let ref = reference {
                let resolved = ref &+ ((UInt32(short & 0xFFFF) &- (ref & 0xFFFF)) & 0xFFFF)
                time = resolved
                reference = resolved
            }
            guard message.global == FITGlobal.monitoring, let time else { continue }
            records.append((time, message))
        }
        return records
    }

    /// A sleep file (type 49) of `items`, which must not overlap: a record at the first item's
    /// start (level 0), one at each item's end with its level, and one of level 0 at the end of
    /// each gap between items.
    public static func sleepFile(_ items: [SleepItem], created: Int64, compressesTimestamps: Bool = false) throws(GarminError) -> [UInt8] {
        var encoder = FITEncoder(compressesTimestamps: compressesTimestamps)
        try encoder.write(global: FITGlobal.fileID, fileID(type: FITFileType.sleep, created: created))
        var last: Int64?
        for item in items.sorted(by: { $0.start < $1.start }) {
            if last != item.start {
                try encoder.write(global: FITGlobal.sleepLevel, [.init(FITField.timestamp, .uint32, .unsigned(UInt64(try garmin(item.start)))),
                                                                 .init(0, .enumeration, .unsigned(0))])
            }
            try encoder.write(global: FITGlobal.sleepLevel, [.init(FITField.timestamp, .uint32, .unsigned(UInt64(try garmin(item.end)))),
                                                             .init(0, .enumeration, .unsigned(level(item.stage)))])
            last = item.end
        }
        return encoder.file()
    }

    /// A monitoring file (type 32): a sample with a full timestamp where the last one is half a
    /// timestamp_16 period (32768 s) or more behind, the others with timestamp_16 (or, compressed,
    /// as the encoder can), each with its heart rate.
    public static func monitoringFile(_ samples: [HeartRateSample], created: Int64, compressesTimestamps: Bool = false) throws(GarminError) -> [UInt8] {
        var encoder = FITEncoder(compressesTimestamps: compressesTimestamps)
        try encoder.write(global: FITGlobal.fileID, fileID(type: FITFileType.monitoring, created: created))
        var reference: UInt32?
        for sample in samples.sorted(by: { $0.time < $1.time }) {
            let time = try garmin(Int64(sample.time.timeIntervalSince1970.rounded(.down)))
            guard (1...254).contains(sample.bpm) else { throw GarminError(.fitValueInvalid, "a heart rate of \(sample.bpm) bpm does not fit FIT's uint8") }
            let short = !compressesTimestamps && reference.map { time &- $0 < 0x8000 } == true
            let stamp: FITEncoder.Field = short
                ? .init(26, .uint16, .unsigned(UInt64(time & 0xFFFF)))
                : .init(FITField.timestamp, .uint32, .unsigned(UInt64(time)))
            try encoder.write(global: FITGlobal.monitoring, [stamp, .init(27, .uint8, .unsigned(UInt64(sample.bpm)))])
            reference = time
        }
        return encoder.file()
    }

    static func fileID(type: UInt64, created: Int64) throws(GarminError) -> [FITEncoder.Field] {
        // type, manufacturer (1: Garmin), product, time_created
        [.init(0, .enumeration, .unsigned(type)), .init(1, .uint16, .unsigned(1)), .init(2, .uint16, .unsigned(3889)),
         .init(4, .uint32, .unsigned(UInt64(try garmin(created))))]
    }

    static func garmin(_ unix: Int64) throws(GarminError) -> UInt32 {
        guard let time = GarminTime.garmin(unix) else {
            throw GarminError(.fitValueInvalid, "\(unix) (Unix seconds) lies outside FIT's time range (1989-12-31 to 2126)")
        }
        return time
    }
}
