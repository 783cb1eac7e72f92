// libFuzzer entry point for the Garmin family's codec (target garmin of scripts/fuzz): everything a
// watch sends. The first byte picks the write size (1…64); the rest is cut into writes. Each write
// is read as a multi-link control message; the writes go through the COBS splitter as the GFDI
// stream, each form through COBS and the frame reader, and each frame's payload as the messages of
// an upload (CREATE_FILE, UPLOAD_REQUEST, FILE_TRANSFER_DATA), which the simulated watch reads from
// a host. The whole input is also read as FIT files, and what they hold as sleep items, heart rate
// and a settings file's alarms. A frame read back writes the same bytes; COBS round-trips what it
// decoded; an upload message reads back as written; a sleep item lasts, a heart rate is a uint8
// that is not invalid, and an alarm read is a time of day.

import Foundation
import TSGarmin
import TSModels

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 1 else { return 0 }
    let chunkSize = Int(data[0] % 64) + 1
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))

    var splitter = COBSFrameSplitter(limit: 1024)
    var start = 0
    while start < bytes.count {
        let chunk = Array(bytes[start..<min(start + chunkSize, bytes.count)])
        start += chunkSize
        // A CLOSE_ALL_REQ whose client has 16 low zero bits reads as garmin-ble's layout (the two
        // layouts cannot be told apart then; protocol-spec/garmin/garmin.md §2.1): no round trip.
        if let control = try? MultiLinkControl(bytes: chunk), !(control == .closeAllRequest(client: control.client) && control.client & 0xFFFF == 0),
           (try? MultiLinkControl(bytes: control.bytes)) != control {
            fatalError("a control message does not read back as itself: \(control)")
        }
        for found in splitter.append(chunk) {
            guard case let .success(form) = found else { continue }
            if form.contains(0) { fatalError("the splitter passed a form with a zero") }
            guard let decoded = try? COBS.decode(form) else { continue }
            if (try? COBS.decode(COBS.encode(decoded))) != decoded { fatalError("COBS does not round-trip \(decoded.count) bytes") }
            guard let frame = try? GFDIFrame(bytes: decoded) else { continue }
            if (try? frame.bytes()) != decoded { fatalError("frame \(frame.type) does not write back its own bytes") }
            if let create = try? GarminCreateFile(payload: frame.payload), (try? GarminCreateFile(payload: create.payload)) != create {
                fatalError("CREATE_FILE does not read back as written")
            }
            if let upload = try? GarminUploadRequest(payload: frame.payload), (try? GarminUploadRequest(payload: upload.payload)) != upload {
                fatalError("UPLOAD_REQUEST does not read back as written")
            }
            if let chunk = try? GarminFileData(payload: frame.payload), chunk.payload != frame.payload {
                fatalError("FILE_TRANSFER_DATA does not write back its payload")
            }
        }
        if splitter.pending > 1024 { fatalError("the splitter holds \(splitter.pending) bytes over its limit") }
    }

    guard let files = try? FITDecoder.decode(bytes) else { return 0 }
    for file in files {
        for item in FITRecords.sleepItems(file) where item.duration <= 0 {
            fatalError("a sleep item of \(item.duration) s")
        }
        for sample in FITRecords.heartRateSamples(file) where !(1...254).contains(sample.bpm) {
            fatalError("a heart rate of \(sample.bpm) bpm")
        }
    }
    for alarm in (try? GarminAlarmFile.alarms(in: files)) ?? [] where alarm.hour > 23 || alarm.minute > 59 {
        fatalError("an alarm at \(alarm.hour):\(alarm.minute)")
    }
    return 0
}
