import Foundation
import TSDevice
import TSGarmin
import TSModels

/// A Garmin watch's history (protocol-spec/garmin/garmin.md §8, §11): the directory (file 0)
/// lists FIT files; sleep files (subtype 49) hold sleep stages, monitoring files (32) heart rate.
/// A file is read whole, its running CRC checked chunk by chunk, before anything of it is
/// handed on; the files whose contents the store then holds are archived only when the sync
/// acknowledges (`acknowledgeSleep`, after the commit), so a cut link or a full disk loses none.
extension GarminWatch {
    /// How far before a file's directory time its records may reach: a night's sleep file is
    /// written in the morning, a monitoring file at the end of its day.
    static let fileReach: Int64 = 2 * 86_400

    public func sleepTransfer(start: Int64, end: Int64?) async throws -> SleepRecordTransfer {
        let parts = try await fileParts(subtype: UInt8(FITFileType.sleep), what: "sleep file", start: start, end: end) { fit, range in
            fit.flatMap(FITRecords.sleepItems).filter { range.contains($0.start) }.sorted { $0.start < $1.start }
        }
        return SleepRecordTransfer(total: nil, parts: parts)
    }

    public func heartRateHistory(start: Int64, end: Int64?) async throws -> AsyncThrowingStream<[HeartRateSample], any Error> {
        try await fileParts(subtype: UInt8(FITFileType.monitoring), what: "monitoring file", start: start, end: end) { fit, range in
            fit.flatMap(FITRecords.heartRateSamples).filter { range.contains(Int64($0.time.timeIntervalSince1970)) }.sorted { $0.time < $1.time }
        }
    }

    /// What the FIT files of `subtype` reaching into [start, end) hold there, a part a file, oldest
    /// first; each file counted as read (for `acknowledgeSleep`) once its part is handed on.
    func fileParts<Part: Sendable>(subtype: UInt8, what: String, start: Int64, end: Int64?,
                                   read: @escaping @Sendable ([FITFile], Range<Int64>) -> [Part]) async throws -> AsyncThrowingStream<[Part], any Error> {
        guard connection != nil else { throw WatchError.notConnected }
        let until = end ?? Int64(configuration.now().timeIntervalSince1970) + 1
        let range = start..<max(start, until)
        let files = try await files(subtype: subtype, reaching: range)
        filesRead[subtype] = []
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: [Part].self)
        let task = Task {
            do {
                var refused: [GarminFileRefusal] = []
                for file in files {
                    try Task.checkCancellation()
                    let fit: [FITFile]
                    do { fit = try await self.fitFile(file, what: what) } catch let refusal as GarminFileRefusal {
                        // The rest of the range is still synced; the refused file stays on the watch, unarchived.
                        refused.append(refusal)
                        continue
                    }
                    let part = read(fit, range)
                    self.filesRead[subtype, default: []].append(file.index)
                    if !part.isEmpty { continuation.yield(part) }
                }
                if !refused.isEmpty {
                    throw WatchError.protocolViolation("the watch lists \(refused.map(\.description).joined(separator: ", ")) in its directory "
                        + "but would not send \(refused.count == 1 ? "it" : "them"); everything else in the range was synced, and the watch keeps "
                        + "\(refused.count == 1 ? "that file" : "those files") (sync again later; a watch that goes on refusing needs its files cleared on the watch)")
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// Archives the files the last transfers read (§8.4): the sync calls this once the store
    /// has committed everything they held. Nothing is deleted.
    public func acknowledgeSleep(start: Int64, end: Int64, count: Int) async throws -> Int {
        for subtype in [UInt8(FITFileType.monitoring), UInt8(FITFileType.sleep)] {
            while let index = filesRead[subtype]?.first {
                try await archive(index)
                filesRead[subtype]?.removeFirst()
            }
        }
        return 0
    }

    /// The FIT files of `subtype` whose records may fall in `range`, oldest first.
    func files(subtype: UInt8, reaching range: Range<Int64>) async throws -> [GarminDirectoryEntry] {
        let directory = try await download(index: 0, what: "the directory")
        let entries: [GarminDirectoryEntry]
        do { entries = try GarminDirectoryEntry.entries(directory) } catch {
            throw WatchError.protocolViolation("the watch's directory: \(error)")
        }
        return entries.filter { entry in
            guard entry.type == GarminDirectoryEntry.fitType, entry.subtype == subtype else { return false }
            guard entry.time != 0 else { return true }
            let written = GarminTime.unix(entry.time)
            return written >= range.lowerBound && written - Self.fileReach < range.upperBound
        }.sorted { ($0.time, $0.index) < ($1.time, $1.index) }
    }

    /// A FIT file downloaded whole and decoded; a file that is not FIT is the watch's defect.
    func fitFile(_ entry: GarminDirectoryEntry, what: String) async throws -> [FITFile] {
        let bytes = try await download(index: entry.index, what: "\(what) \(entry.index)")
        do { return try FITDecoder.decode(bytes) } catch {
            throw WatchError.protocolViolation("\(what) \(entry.index) (\(bytes.count) bytes) is not a FIT file the gateway reads: \(error)")
        }
    }

    /// Downloads file `index` (§8.2, §8.3): each chunk must come at the offset after the last and
    /// carry the file's running CRC, and is answered with the next offset. A chunk that does not
    /// is answered so and the download is given up as a lost link's: the sync fetches the file
    /// anew on a fresh link.
    func download(index: UInt16, what: String) async throws -> [UInt8] {
        do {
            return try await downloadOnThisLink(index: index, what: what)
        } catch let error as WatchError where error.isRecoverable {
            // A file cut short, damaged or stalled: this link is given up, the next one asks anew.
            await closeLink()
            throw error
        }
    }

    private func downloadOnThisLink(index: UInt16, what: String) async throws -> [UInt8] {
        var size: Int?
        var received: [UInt8] = []
        var crc: UInt16 = 0
        // A chunk that overtook the download's answer (notifications over EATT's several bearers) waits for it.
        var early: [GFDIFrame] = []
        /// One frame of the download: its answer (the file's size) or a chunk; the file once whole.
        func take(_ frame: GFDIFrame) async throws -> [UInt8]? {
            if frame.type == GFDIType.response, size == nil {
                guard let response = try? GFDIResponse(payload: frame.payload), response.originalType == GFDIType.downloadRequest else { return nil }
                guard response.status == .ack else {
                    throw WatchError.protocolViolation("the watch refused to download \(what) (GFDI status \(response.statusByte))")
                }
                let answer: (downloadStatus: UInt8, fileSize: UInt32)
                do { answer = try GarminDownloadRequest.answered(response) } catch {
                    throw WatchError.protocolViolation("the watch's answer to the download of \(what): \(error)")
                }
                switch answer.downloadStatus {
                case 0: break
                case 5: throw WatchError.transferAbandoned("the watch was not ready to send \(what) (download status 5); syncing again asks anew")
                default:
                    guard index != 0 else { throw WatchError.protocolViolation("the watch would not send its directory (download status \(answer.downloadStatus))") }
                    throw GarminFileRefusal(what: what, status: answer.downloadStatus)
                }
                size = Int(answer.fileSize)
                return answer.fileSize == 0 ? [] : nil
            }
            guard frame.type == GFDIType.fileTransferData, let size else { return nil }
            let chunk: GarminFileData
            do { chunk = try GarminFileData(payload: frame.payload) } catch {
                throw WatchError.protocolViolation("a chunk of \(what): \(error)")
            }
            guard Int(chunk.offset) == received.count else {
                await send(chunk.answer(.offsetMismatch).frame)
                throw WatchError.transferAbandoned("a chunk of \(what) came at offset \(chunk.offset) where \(received.count) was next; syncing again fetches it anew")
            }
            let running = GarminCRC.checksum(chunk.data, seed: crc)
            guard running == chunk.crc, received.count + chunk.data.count <= size else {
                await send(chunk.answer(.crcMismatch).frame)
                throw WatchError.transferAbandoned(running == chunk.crc
                    ? "\(what) ran past the \(size) bytes the watch announced; syncing again fetches it anew"
                    : "a chunk of \(what) at offset \(chunk.offset) failed its running CRC; syncing again fetches it anew")
            }
            crc = running
            received += chunk.data
            await send(chunk.answer(.ok).frame)
            return received.count == size ? received : nil
        }
        let request = GarminDownloadRequest(index: index)
        return try await exchange(frames: [GFDIFrame(type: GFDIType.downloadRequest, payload: request.payload)], what: what) { [self] delivery -> [UInt8]? in
            guard case let .frame(arrived) = delivery else { return nil }
            if arrived.type == GFDIType.fileTransferData, size == nil {
                early.append(arrived)
                return nil
            }
            for frame in [arrived] + early {
                if let file = try await take(frame) { return file }
            }
            early = []
            return nil
        }
    }

    /// Marks file `index` archived (SET_FILE_FLAG, §8.4) and waits for the watch's answer.
    func archive(_ index: UInt16) async throws {
        let flag = GarminSetFileFlag(index: index)
        _ = try await exchange(frames: [GFDIFrame(type: GFDIType.setFileFlag, payload: flag.payload)], what: "archiving file \(index)") { delivery -> Void? in
            guard case let .frame(frame) = delivery, frame.type == GFDIType.response,
                  let response = try? GFDIResponse(payload: frame.payload), response.originalType == GFDIType.setFileFlag else { return nil }
            guard response.status == .ack else {
                throw WatchError.protocolViolation("the watch refused to archive file \(index) (GFDI status \(response.statusByte))")
            }
            return ()
        }
    }
}

/// A file the watch's directory lists whose download it refuses (a download status other than ok
/// or not ready): the sync goes on with the other files and says so at its end.
struct GarminFileRefusal: Error, CustomStringConvertible {
    var what: String
    var status: UInt8
    var description: String { "\(what) (download status \(status))" }
}
