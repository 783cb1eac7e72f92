import Foundation
import TSDevice
import TSGarmin
import TSModels

/// A Garmin watch's alarms (protocol-spec/garmin/garmin.md §10): written as a settings FIT file
/// the central uploads (CREATE_FILE, UPLOAD_REQUEST, the file in chunks with the running CRC,
/// each answered with the next offset, then SYNC_COMPLETE), which replaces every alarm the
/// watch holds. No client reads them back: the capability says `readable: false`, and
/// `alarms()` is not supported.
extension GarminWatch {
    public func alarms() async throws -> [Alarm] {
        throw WatchError.unsupported("reading its alarms back (a Garmin watch takes alarms in a settings file that no client reads back; "
            + "`alarms set` replaces them all)")
    }

    public func setAlarms(_ alarms: [Alarm]) async throws {
        guard connection != nil else { throw WatchError.notConnected }
        if let asking = alarms.first(where: { $0.smartWindow > 0 }) {
            throw WatchError.unsupported("smart wake windows (the alarm in slot \(asking.slot) asks for \(asking.smartWindow) minutes; a Garmin watch's alarm has none)")
        }
        if let asking = alarms.first(where: \.snoozeAllowed) {
            throw WatchError.unsupported("a snooze setting (the alarm in slot \(asking.slot) asks for one; a Garmin watch's alarm settings have none)")
        }
        let problems = alarms.problems(limits: GarminAlarmFile.limits)
        guard problems.isEmpty else { throw WatchError.invalidAlarms(problems) }
        let created = GarminTime.garmin(Int64(configuration.now().timeIntervalSince1970)) ?? 0
        // A label the watch does not show is the caller's to change (GarminError, invalid input).
        let file = try GarminAlarmFile.file(alarms, created: created)
        let index = try await createSettingsFile(size: file.count)
        try await upload(file, to: index, what: "the alarms' settings file")
        // SYNC_COMPLETE: the watch takes the file, and its alarms with it.
        _ = try await exchange(frames: [GFDIFrame(type: GFDIType.systemEvent, payload: GarminSystemEvent(event: GarminSystemEvent.syncComplete).payload)],
                               what: "the end of the alarms' upload") { delivery -> Void? in Self.isAnswer(delivery, to: GFDIType.systemEvent) ? () : nil }
    }

    /// CREATE_FILE for a settings file of `size` bytes: the index the watch gives it.
    func createSettingsFile(size: Int) async throws -> UInt16 {
        let request = GarminCreateFile(size: UInt32(size), subtype: UInt8(FITFileType.settings), nonce: UInt64.random(in: 1...UInt64.max))
        return try await exchange(frames: [GFDIFrame(type: GFDIType.createFile, payload: request.payload)], what: "room for the alarms' settings file") { delivery -> UInt16? in
            guard case let .frame(frame) = delivery, frame.type == GFDIType.response,
                  let response = try? GFDIResponse(payload: frame.payload), response.originalType == GFDIType.createFile else { return nil }
            guard response.status == .ack else {
                throw WatchError.unsupported("alarms from the gateway (the watch answered CREATE_FILE with GFDI status \(response.statusByte); "
                    + "a watch that edits alarms in screens of its own takes none)")
            }
            let answer: (createStatus: UInt8, index: UInt16, type: UInt8, subtype: UInt8, number: UInt16)
            do { answer = try GarminCreateFile.answered(response) } catch {
                throw WatchError.protocolViolation("the watch's answer to CREATE_FILE: \(error)")
            }
            guard answer.createStatus == 0, answer.index != 0 else {
                throw WatchError.unsupported("alarms from the gateway (the watch would not create a settings file: create status \(answer.createStatus))")
            }
            return answer.index
        }
    }

    /// UPLOAD_REQUEST for file `index`, then `file` in chunks no larger than the watch takes (and
    /// than one write carries), each with the running CRC and answered with the next offset.
    func upload(_ file: [UInt8], to index: UInt16, what: String) async throws {
        let request = GarminUploadRequest(index: index, size: UInt32(file.count))
        let (start, maxSize) = try await exchange(frames: [GFDIFrame(type: GFDIType.uploadRequest, payload: request.payload)], what: "the upload of \(what)") { delivery -> (Int, Int)? in
            guard case let .frame(frame) = delivery, frame.type == GFDIType.response,
                  let response = try? GFDIResponse(payload: frame.payload), response.originalType == GFDIType.uploadRequest else { return nil }
            let answer: (uploadStatus: UInt8, offset: UInt32, maxSize: UInt32, crcSeed: UInt16)
            do { answer = try GarminUploadRequest.answered(response) } catch {
                throw WatchError.protocolViolation("the watch's answer to UPLOAD_REQUEST: \(error)")
            }
            guard response.status == .ack, answer.uploadStatus == 0 else {
                throw WatchError.protocolViolation("the watch refused the upload of \(what) (GFDI status \(response.statusByte), upload status \(answer.uploadStatus))")
            }
            guard Int(answer.offset) <= file.count, answer.maxSize > 0 else {
                throw WatchError.protocolViolation("the watch's answer to UPLOAD_REQUEST starts at \(answer.offset) of \(file.count) bytes with chunks of at most \(answer.maxSize)")
            }
            return (Int(answer.offset), Int(answer.maxSize))
        }
        let mtu = connection?.mtu.chunkSize ?? 20
        // One chunk's frame in one write where the MTU allows (its 13 bytes and COBS's beside the data).
        let chunkSize = min(maxSize, max(32, mtu - 20))
        var offset = start
        var crc = GarminCRC.checksum(file[..<start])
        while offset < file.count {
            let chunk = GarminFileData.chunk(of: file, at: offset, chunkSize: chunkSize, crcBefore: crc)
            let next = try await exchange(frames: [GFDIFrame(type: GFDIType.fileTransferData, payload: chunk.payload)],
                                          what: "\(what) at offset \(offset)") { [offset] delivery -> Int? in
                guard case let .frame(frame) = delivery, frame.type == GFDIType.response,
                      let response = try? GFDIResponse(payload: frame.payload), response.originalType == GFDIType.fileTransferData else { return nil }
                let answer: (status: UInt8, nextOffset: UInt32)
                do { answer = try GarminFileData.answered(response) } catch {
                    throw WatchError.protocolViolation("the watch's answer to a chunk of \(what): \(error)")
                }
                guard response.status == .ack, answer.status == GarminFileData.TransferStatus.ok.rawValue else {
                    throw WatchError.protocolViolation("the watch refused the chunk of \(what) at offset \(offset) (transfer status \(answer.status))")
                }
                return Int(answer.nextOffset)
            }
            guard next == offset + chunk.data.count else {
                throw WatchError.protocolViolation("the watch asked for offset \(next) of \(what) after the chunk of \(chunk.data.count) bytes at \(offset)")
            }
            crc = chunk.crc
            offset = next
        }
    }
}
