import Foundation
import SwiftProtobuf
import TSModels
import TSNpk

/// Heart-rate sync (05/21 type 1): the watch answers the start, then one list frame 05/01 per
/// local day of its `heartRate`, then 05/22. A reading on a 5-minute mark of its day goes into
/// `auto_data` (one byte each), any other (between the marks, or over 255 bpm) into
/// `manual_data`, so the central must reproduce `heartRate` exactly, less what it refuses.
extension SimulatedNpkWatch {
    /// A fault the watch applies once, to the next heart-rate sync.
    public enum HeartRateFault: Sendable, Hashable {
        /// This day's element (index from 0) is no `TSMetaHeartRateDay` (a truncated varint), in
        /// a frame whose CRC is right.
        case unparsableDay(Int)
        /// The list frame of this day goes out with one payload byte flipped.
        case corruptDay(Int)
    }

    public func injectHeartRateFault(_ fault: HeartRateFault?) { heartRateFault = fault }

    /// The days the watch hands over for `range`: every local day that overlaps it and holds a
    /// reading, whole (the central keeps what is in the range).
    public func heartRateDays(in range: Range<Int64>) throws -> [TSMetaHeartRateDay] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = configuration.timeZone
        func dayStart(_ time: Int64) -> Int64 {
            Int64(calendar.startOfDay(for: Date(timeIntervalSince1970: TimeInterval(time))).timeIntervalSince1970)
        }
        let byDay = Dictionary(grouping: heartRate) { dayStart(Int64($0.time.timeIntervalSince1970)) }
        return try byDay.keys.sorted().compactMap { start -> TSMetaHeartRateDay? in
            let next = dayStart(start + 26 * 3600)
            guard start < range.upperBound, range.lowerBound < next else { return nil }
            var day = TSMetaHeartRateDay()
            day.startTimestamp = try NpkTime.t2000(fromUnix: start)
            day.endTimestamp = try NpkTime.t2000(fromUnix: next - 1)
            let slots = Int(min(288, (next - start) / NpkHeartRate.autoInterval))
            var auto = [UInt8](repeating: 0, count: slots)
            for sample in byDay[start]! {
                let time = Int64(sample.time.timeIntervalSince1970)
                let offset = time - start
                let slot = Int(offset / NpkHeartRate.autoInterval)
                if offset % NpkHeartRate.autoInterval == 0, slot < slots, auto[slot] == 0, (1...255).contains(sample.bpm) {
                    auto[slot] = UInt8(sample.bpm)
                } else {
                    var reading = TSMetaSingleDataItem()
                    reading.timestamp = try NpkTime.t2000(fromUnix: time)
                    reading.value = Int32(clamping: sample.bpm)
                    day.manualData.append(reading)
                }
            }
            while auto.last == 0 { auto.removeLast() }
            day.autoData = Data(auto)
            return day
        }
    }

    func syncHeartRate(_ request: TSMetaSyncStartRequest, sequence: UInt16) async throws {
        var response = TSMetaSyncStartResponse()
        response.type = request.type
        let days = try heartRateDays(in: NpkTime.unix(fromT2000: request.start)..<NpkTime.unix(fromT2000: request.end))
        response.result = days.isEmpty ? 1 : 0
        await send(try NpkFrame(command: .syncStart, flags: .response, sequence: sequence, message: response))
        guard !days.isEmpty else { return }
        let fault = heartRateFault
        heartRateFault = nil
        let connection = statistics.connections
        for (index, day) in days.enumerated() {
            // The link this sync answers is gone: stop, as a watch would.
            guard isLinked, statistics.connections == connection else { return }
            let element: [UInt8] = fault == .unparsableDay(index) ? [0x08, 0xFF] : try day.serializedBytes()
            let payload = NpkListPosition.payload(total: UInt32(days.count), index: UInt32(index), element: element)
            var bytes = try NpkFrame(command: .heartRateData, flags: .list, sequence: sequence, payload: payload).encoded()
            if fault == .corruptDay(index) { bytes[bytes.count - 1] ^= 0x5A }
            await sendBytes(bytes)
        }
        var end = TSMetaSyncStopRequest()
        end.type = request.type
        await send(try NpkFrame(command: .syncEnd, sequence: sequence, message: end))
    }
}
