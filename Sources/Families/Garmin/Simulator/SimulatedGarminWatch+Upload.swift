import TSGarmin
import TSModels

/// Files the host puts on the watch (protocol-spec/garmin/garmin.md §10): CREATE_FILE gives the
/// next free index, UPLOAD_REQUEST opens the upload there, each FILE_TRANSFER_DATA chunk must
/// come at the offset after the last with the file's running CRC and is answered with the next
/// offset, and SYNC_COMPLETE after the last chunk makes the watch take the file. A settings file
/// sets the watch's alarms; the watch keeps them and cannot hand them back.
extension SimulatedGarminWatch {
    /// The most data bytes of one chunk the watch takes (its UPLOAD_REQUEST answer says so).
    static let uploadChunkLimit: UInt32 = 500

    func createFile(_ frame: GFDIFrame) async {
        guard let request = try? GarminCreateFile(payload: frame.payload) else {
            statistics.refused += 1
            await sendFrame(GFDIResponse(originalType: frame.type, status: .decodeError).frame)
            return
        }
        // Only settings files are taken (status 3 for any other: not a type this watch creates).
        guard request.type == GarminDirectoryEntry.fitType, UInt64(request.subtype) == FITFileType.settings, request.size > 0 else {
            await sendFrame(request.answer(createStatus: 3, index: 0, number: 0).frame)
            return
        }
        let taken = Set(history.directory.map(\.index))
        let index = (UInt16(1)...UInt16.max).first { !taken.contains($0) } ?? 0
        upload = (index, Int(request.size), [], 0)
        uploaded = nil
        await sendFrame(request.answer(createStatus: 0, index: index, number: 1).frame)
    }

    func startUpload(_ frame: GFDIFrame) async {
        guard let request = try? GarminUploadRequest(payload: frame.payload) else {
            statistics.refused += 1
            await sendFrame(GFDIResponse(originalType: frame.type, status: .decodeError).frame)
            return
        }
        // An upload of a file CREATE_FILE did not make, or of another size, is refused (upload status 1).
        guard let upload, upload.index == request.index, upload.size == Int(request.size), request.offset == 0 else {
            await sendFrame(request.answer(uploadStatus: 1, offset: 0, maxSize: 0, crcSeed: 0).frame)
            return
        }
        self.upload = (upload.index, upload.size, [], 0)
        await sendFrame(request.answer(uploadStatus: 0, offset: 0, maxSize: Self.uploadChunkLimit, crcSeed: 0).frame)
    }

    /// A chunk of the host's file: at the next offset, with the running CRC, within the size.
    func receiveUploadChunk(_ frame: GFDIFrame) async {
        guard let chunk = try? GarminFileData(payload: frame.payload) else {
            statistics.refused += 1
            await sendFrame(GFDIResponse(originalType: frame.type, status: .decodeError).frame)
            return
        }
        guard var upload else {
            await sendFrame(chunk.answer(.abort).frame)
            return
        }
        let running = GarminCRC.checksum(chunk.data, seed: upload.crc)
        let status: GarminFileData.TransferStatus = Int(chunk.offset) != upload.bytes.count ? .offsetMismatch
            : running != chunk.crc ? .crcMismatch
            : upload.bytes.count + chunk.data.count > upload.size || chunk.data.count > Int(Self.uploadChunkLimit) ? .abort
            : .ok
        guard status == .ok else {
            refusalSeen?("an upload chunk at offset \(chunk.offset): \(status)")
            self.upload = nil
            await sendFrame(chunk.answer(status).frame)
            return
        }
        upload.bytes += chunk.data
        upload.crc = running
        if upload.bytes.count == upload.size {
            uploaded = upload.bytes
            self.upload = nil
        } else {
            self.upload = upload
        }
        await sendFrame(chunk.answer(.ok).frame)
    }

    /// SYNC_COMPLETE after a whole upload: a settings file's alarms become the watch's.
    func takeUploadedFile() {
        guard let bytes = uploaded else { return }
        uploaded = nil
        do {
            let taken = try GarminAlarmFile.alarms(in: try FITDecoder.decode(bytes))
            alarms = taken
            statistics.settingsFilesTaken += 1
            alarmsSet?(taken)
        } catch {
            statistics.refused += 1
            refusalSeen?("the uploaded settings file: \(error)")
        }
    }
}
