// libFuzzer entry point for the Huami dialect's codec (target huami of scripts/fuzz): everything a
// band sends. The first byte picks the notification size (1…64), the second the sample format and
// the reorder window; the rest is cut into notifications. Each is read as an auth, configuration,
// fetch-control, battery and current-time message (and, for the simulated band, as a request);
// the configuration chunks go through the chunk assembler and the alarm table; the notifications
// go through the fetch assembler as the activity-data stream, and its data through the sample
// decoder and the sleep reader. The assembler never holds more than it was told; a sleep item
// lies inside its fetch and lasts at least a minute.

import Foundation
import TSModels
import TSHuami

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 1 else { return 0 }
    let chunkSize = Int(data[0] % 64) + 1
    let format: HuamiSampleFormat = data[1] & 1 == 0 ? .fourByte : .eightByte
    let window = Int(data[1] >> 1 & 0x0F)
    let bytes = Array(UnsafeBufferPointer(start: data + 2, count: size - 2))
    var notifications: [ArraySlice<UInt8>] = []
    var start = 0
    while start < bytes.count {
        notifications.append(bytes[start..<min(start + chunkSize, bytes.count)])
        start += chunkSize
    }

    var chunks = HuamiConfigChunkAssembler()
    for notification in notifications {
        if let answer = try? HuamiAuthAnswer(bytes: notification) { _ = answer.error }
        _ = try? HuamiAuthRequest(bytes: notification)
        _ = try? HuamiConfigRequest(bytes: notification)
        _ = try? HuamiHeartRateCommand(bytes: notification)
        _ = try? HuamiFetchRequest(bytes: notification)
        _ = (try? HuamiBattery(bytes: notification))?.status
        _ = try? HuamiTime(currentTimeBytes: notification)
        _ = try? HuamiTime(shortBytes: notification)
        if let answer = try? HuamiFetchAnswer(bytes: notification) { _ = answer.error }
        if case let .chunk(chunk)? = try? HuamiConfigAnswer(bytes: notification),
           let whole = try? chunks.feed(chunk), whole.type == HuamiAlarmTable.chunkType,
           let alarms = try? HuamiAlarmTable.alarms(payload: whole.payload) {
            for alarm in alarms where alarm.slot >= 10 || alarm.hour > 23 || alarm.minute > 59 {
                fatalError("an alarm table passed slot \(alarm.slot) at \(alarm.hour):\(alarm.minute)")
            }
        }
    }

    // The activity-data stream: the count is what the notifications carry, less a byte now and then.
    let carried = notifications.reduce(0) { $0 + max(0, $1.count - 1) }
    let count = UInt32(carried - carried % format.size)
    guard var assembler = try? HuamiFetchAssembler(count: count, format: format, reorderWindow: window) else { return 0 }
    for notification in notifications {
        do { try assembler.feed(notification) } catch { break }
        if assembler.data.count > assembler.expectedBytes { fatalError("the assembler holds \(assembler.data.count) of \(assembler.expectedBytes) bytes") }
    }
    let fetched = (try? assembler.finish(crc32: nil)) ?? assembler.data
    let whole = Array(fetched.prefix(fetched.count - fetched.count % format.size))
    guard let samples = try? HuamiSample.decode(whole, format: format) else { fatalError("whole samples did not decode") }
    let activity = HuamiActivity(start: 1_763_931_600, format: format, samples: samples)
    var reader = HuamiSleepReader(maxAwakeMinutes: 1 + window * 4)
    for half in [Array(samples.prefix(samples.count / 2)), Array(samples.dropFirst(samples.count / 2))] {
        let part = HuamiActivity(start: reader.state.end ?? activity.start, format: format, samples: half)
        for item in reader.read(part) where item.duration < 60 || item.start < activity.start || item.end > activity.end {
            fatalError("a sleep item \(item.start)+\(item.duration) lies outside \(activity.start)…\(activity.end)")
        }
    }
    for sample in activity.heartRates where sample.bpm == 0 || sample.bpm == 255 { fatalError("a heart rate of \(sample.bpm)") }
    return 0
}
