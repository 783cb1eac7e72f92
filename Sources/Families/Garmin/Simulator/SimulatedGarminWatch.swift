import Foundation
import TSGarmin
import TSModels
import TSGATT
import TSTransport

/// A Garmin watch's side of the link, in-process (protocol-spec/garmin/garmin.md): multi-link
/// control on handle 0, GFDI on the handle it gives the GFDI service, the handshake it leads
/// (DEVICE_INFORMATION, AUTH_NEGOTIATION, CONFIGURATION, then its time request), downloads of its
/// directory and FIT files chunk by chunk with the running CRC, and the archive flag. It echoes
/// the client ID it was sent and hands out handles below 0x80, so that every client's framing
/// (§2.1) is served.
public actor SimulatedGarminWatch: PeripheralEndpoint {
    public struct Configuration: Sendable {
        public var deviceInformation = GarminDeviceInformation(protocolVersion: 150, product: 3889, unit: 0x5157_0001, software: 1412, maxPacket: 520,
                                                               bluetoothName: "Instinct 2S", deviceName: "Instinct", model: "2S")
        public var capabilities = GarminConfiguration(capabilities: [GarminConfiguration.explicitArchive, GarminConfiguration.multiLinkService])
        /// Data bytes of one FILE_TRANSFER_DATA (the maximum packet less its overhead).
        public var chunkSize = 507
        /// A download's first chunk goes out before its answer, as a notification that overtook
        /// another over EATT's several bearers arrives.
        public var firstChunkOvertakesAnswer = false
        /// How long after its REGISTER_ML_RESP for GFDI the watch sends its DEVICE_INFORMATION: a
        /// real watch's comes a connection event or more later. Over BlueZ the simulated watch
        /// waits 50 ms: sent at once, both arrived in one batch and garmin-ble 0.3.2, which reads
        /// DEVICE_INFORMATION only once its connect has returned, dropped it.
        public var deviceInformationDelay: Duration = .zero
        /// How often it sends a real-time heart rate while service 6 is registered and started.
        public var heartRateInterval: Duration = .seconds(1)
        /// The resting heart rate its real-time packets carry.
        public var restingHeartRate: UInt8 = 58
        /// The battery level in percent its PROTOBUF battery answer gives (§7).
        public var batteryLevel: Int32 = 83

        public init() {}
    }

    /// What goes wrong on purpose, each once, in the next download of a FIT file.
    public enum Fault: Sendable, Hashable {
        /// The watch loses the link after sending this many chunks of the file.
        case cutTransfer(afterChunks: Int)
        /// The file's first chunk carries a wrong running CRC.
        case wrongCRC
        /// From now on the directory lists one sleep file more than the watch holds, dated with its
        /// last day, whose download it answers with download status 3 (no such file).
        case unsentFile
    }

    public struct Statistics: Sendable, Hashable {
        public var connections = 0
        public var framesReceived = 0
        public var handshakesCompleted = 0
        public var timeAnswers = 0
        /// Time answers that named another reference than the last request's.
        public var otherReferences = 0
        public var downloads = 0
        public var chunksSent = 0
        public var refused = 0
        public var transfersCut = 0
        public var chunksDamaged = 0
        public var heartRateReadings = 0
        public var batteryAnswers = 0
        /// Settings files the host uploaded whole and the watch took (SYNC_COMPLETE after the last chunk).
        public var settingsFilesTaken = 0
    }

    public nonisolated let history: GarminWatchHistory
    public nonisolated let configuration: Configuration
    public internal(set) var statistics = Statistics()
    /// Why the first frames it refused were refused (COBS, length, CRC), at most 10.
    public private(set) var refusals: [String] = []
    /// The longest notification it sent, in bytes.
    public private(set) var largestNotification = 0
    /// Files the host marked archived (SET_FILE_FLAG).
    public private(set) var archived: Set<UInt16> = []
    /// The alarms of the last settings file the host uploaded (§10); nil before any.
    public internal(set) var alarms: [Alarm]?
    /// The file the host is uploading: where CREATE_FILE put it, its bytes so far and their running CRC.
    var upload: (index: UInt16, size: Int, bytes: [UInt8], crc: UInt16)?
    /// An uploaded file the watch has whole, waiting for SYNC_COMPLETE to be taken.
    var uploaded: [UInt8]?
    /// Called with each alarm table the watch takes from a settings file.
    public func onAlarmsSet(_ handler: @escaping @Sendable ([Alarm]) -> Void) { alarmsSet = handler }
    var alarmsSet: (@Sendable ([Alarm]) -> Void)?
    /// The time the host's last answer to CURRENT_TIME_REQUEST gave: Garmin seconds and the UTC offset.
    public private(set) var hostTime: (now: UInt32, utcOffset: Int32)?

    var send: (@Sendable ([UInt8]) async -> Void)?
    var slice = 19
    var handles: [UInt16: UInt8] = [:]
    var gfdiHandle: UInt8?
    var splitter = COBSFrameSplitter()
    var timeReference: UInt32 = 0
    /// The file being downloaded, and where its last chunk ended with the running CRC there.
    var download: (index: UInt16, bytes: [UInt8], sentTo: Int, crc: UInt16)?
    var faults: [Fault] = []
    /// The current download's faults: the chunks left before the link is lost, a CRC to damage.
    var chunksBeforeCut: Int?
    var damagesNextChunk = false
    /// Real-time heart rate (§2.2): the handle service 6 was given, and the stream while it runs.
    var heartRateHandle: UInt8?
    var heartRateStream: Task<Void, Never>?
    var heartRateIndex = 0
    /// What its owner does when the watch loses the link (a BlueZ peripheral disconnects the central).
    var linkLoss: (@Sendable () async -> Void)?

    public init(history: GarminWatchHistory, configuration: Configuration = Configuration()) {
        self.history = history
        self.configuration = configuration
    }

    /// Queues a fault for the next download of a FIT file (`unsentFile` holds from now on).
    public func inject(_ fault: Fault) {
        if fault == .unsentFile { listsUnsentFile = true } else { faults.append(fault) }
    }

    /// The directory lists a file it never sends (`Fault.unsentFile`).
    var listsUnsentFile = false

    /// The directory as the watch sends it: its history's, and the file it never sends when told to list one.
    var directoryFile: [UInt8] {
        guard listsUnsentFile, let last = history.directory.last(where: { $0.subtype == UInt8(FITFileType.sleep) }) else { return history.directoryFile }
        let index = (history.directory.map(\.index).max() ?? 0) + 1
        return history.directoryFile + GarminDirectoryEntry(index: index, subtype: last.subtype, number: index, size: last.size, time: last.time).bytes
    }

    /// Called when the watch loses the link on purpose (`Fault.cutTransfer`).
    public func onLinkLoss(_ handler: @escaping @Sendable () async -> Void) { linkLoss = handler }

    /// Called with the reason of each frame it refuses, as it refuses it.
    public func onRefusal(_ handler: @escaping @Sendable (String) -> Void) { refusalSeen = handler }
    var refusalSeen: (@Sendable (String) -> Void)?

    // MARK: The link

    public func centralConnected(mtu: ATTMTU, send: @escaping @Sendable ([UInt8]) async -> Void) async {
        statistics.connections += 1
        self.send = send
        slice = max(1, mtu.chunkSize - 1)
        handles = [:]
        gfdiHandle = nil
        splitter.reset()
        download = nil
        stopHeartRate()
    }

    /// The link's ATT MTU as the central agreed it (a BlueZ peripheral learns it with a write): notifications are sliced to it.
    public func linkMTUChanged(_ mtu: ATTMTU) {
        slice = max(1, mtu.chunkSize - 1)
    }

    public func centralDisconnected() async {
        send = nil
        handles = [:]
        gfdiHandle = nil
        download = nil
        stopHeartRate()
    }

    public func centralWrote(_ chunk: [UInt8]) async {
        guard let handle = chunk.first else { return }
        if handle == MultiLinkControl.controlHandle {
            guard let control = try? MultiLinkControl(bytes: chunk) else { statistics.refused += 1; return }
            await answer(control)
        } else if let heartRateHandle, handle == heartRateHandle {
            // `<h> 01` starts the stream (it runs from the registration already), `<h> 00` stops it.
            switch chunk.dropFirst().first {
            case 0: stopHeartRate()
            case 1: startHeartRate()
            default: statistics.refused += 1
            }
        } else if handle == gfdiHandle {
            for found in splitter.append(chunk.dropFirst()) {
                let frame: GFDIFrame
                do { frame = try GFDIFrame(bytes: try COBS.decode(try found.get())) } catch {
                    statistics.refused += 1
                    if refusals.count < 10 { refusals.append("\(error)") }
                    refusalSeen?("\(error)")
                    continue
                }
                statistics.framesReceived += 1
                await received(frame)
            }
        }
    }

    /// Multi-link control (§2.1): the answers carry the client the host sent.
    func answer(_ control: MultiLinkControl) async {
        switch control {
        case let .closeAllRequest(client):
            handles = [:]
            gfdiHandle = nil
            stopHeartRate()
            heartRateHandle = nil
            await notify(MultiLinkControl.closeAllResponse(client: client).bytes)
        case let .registerRequest(client, service, _):
            // A service already registered keeps its handle; a new one gets the lowest free (0 is the control channel's).
            guard let handle = handles[service] ?? (1...UInt8.max).first(where: { !handles.values.contains($0) }) else {
                await notify(MultiLinkControl.registerResponse(client: client, service: service, status: 1, handle: 0, reliable: 0).bytes)
                return
            }
            handles[service] = handle
            await notify(MultiLinkControl.registerResponse(client: client, service: service, status: 0, handle: handle, reliable: 0).bytes)
            if service == MultiLinkControl.Service.realtimeHeartRate {
                heartRateHandle = handle
                startHeartRate()
            }
            if service == MultiLinkControl.Service.gfdi {
                gfdiHandle = handle
                splitter.reset()
                // The watch leads: its device information first (§4).
                if configuration.deviceInformationDelay > .zero { try? await Task.sleep(for: configuration.deviceInformationDelay) }
                await sendFrame(GFDIFrame(type: GFDIType.deviceInformation, payload: (try? configuration.deviceInformation.payload()) ?? []))
            }
        case let .closeHandleRequest(client, service, handle):
            handles[service] = nil
            if handle == gfdiHandle { gfdiHandle = nil }
            if handle == heartRateHandle {
                stopHeartRate()
                heartRateHandle = nil
            }
            await notify(MultiLinkControl.closeHandleResponse(client: client, service: service, handle: handle, status: 0).bytes)
        case .registerResponse, .closeHandleResponse, .closeAllResponse:
            statistics.refused += 1
        }
    }

    // MARK: GFDI

    func received(_ frame: GFDIFrame) async {
        switch frame.type {
        case GFDIType.response:
            guard let response = try? GFDIResponse(payload: frame.payload) else { statistics.refused += 1; return }
            await answered(response)
        case GFDIType.configuration:
            await acknowledge(frame.type)
        case GFDIType.systemEvent:
            await acknowledge(frame.type)
            guard let event = try? GarminSystemEvent(payload: frame.payload) else { return }
            if event.event == GarminSystemEvent.timeUpdated { await askTime() }
            if event.event == GarminSystemEvent.syncComplete { takeUploadedFile() }
        case GFDIType.createFile:
            await createFile(frame)
        case GFDIType.uploadRequest:
            await startUpload(frame)
        case GFDIType.fileTransferData:
            await receiveUploadChunk(frame)
        case GFDIType.downloadRequest:
            guard let request = try? GarminDownloadRequest(payload: frame.payload) else { statistics.refused += 1; return }
            await startDownload(request)
        case GFDIType.protobufRequest:
            await answerProtobuf(frame)
        case GFDIType.setFileFlag:
            guard let flag = try? GarminSetFileFlag(payload: frame.payload) else { statistics.refused += 1; return }
            if flag.flags & GarminSetFileFlag.archive != 0 { archived.insert(flag.index) }
            await sendFrame(GFDIResponse(originalType: frame.type, status: .ack, extra: [1] + flag.payload).frame)
        default:
            // A type it does not take (§3.2).
            await sendFrame(GFDIResponse(originalType: frame.type, status: .unsupported).frame)
        }
    }

    /// A PROTOBUF request (§7) is acknowledged naming its id; a battery request is then answered
    /// with a PROTOBUF response reusing the id. Bytes that are not a whole Smart message are
    /// acknowledged and left unanswered, as a watch leaves a service it lacks.
    func answerProtobuf(_ frame: GFDIFrame) async {
        guard let message = try? GarminProtobufMessage(payload: frame.payload) else {
            statistics.refused += 1
            await sendFrame(GFDIResponse(originalType: frame.type, status: .decodeError).frame)
            return
        }
        await sendFrame(message.acknowledgement(of: frame.type).frame)
        guard let smart = try? message.smart(), smart.asksBattery,
              let answer = try? GarminProtobufMessage(requestID: message.requestID, smart: .batteryStatus(level: configuration.batteryLevel)) else { return }
        statistics.batteryAnswers += 1
        await sendFrame(answer.frame(type: GFDIType.protobufResponse))
    }

    /// The host's answers to the watch's messages move the handshake and the downloads on.
    func answered(_ response: GFDIResponse) async {
        switch response.originalType {
        case GFDIType.deviceInformation:
            await sendFrame(GFDIFrame(type: GFDIType.authNegotiation, payload: GarminAuthNegotiation(unknown: 1, flags: 0).payload))
        case GFDIType.authNegotiation:
            await sendFrame(GFDIFrame(type: GFDIType.configuration, payload: configuration.capabilities.payload))
        case GFDIType.configuration:
            statistics.handshakesCompleted += 1
            await askTime()
        case GFDIType.currentTimeRequest:
            // Any answer with the time is taken, whatever reference it names: garmin-ble 0.3.2
            // always names 0, Gadgetbridge the one asked (§5). A bare ACK (garmin-ble acknowledges
            // every message first) carries no time.
            if let time = try? GarminCurrentTimeRequest.answered(response) {
                hostTime = (time.now, time.utcOffset)
                statistics.timeAnswers += 1
                if time.reference != timeReference { statistics.otherReferences += 1 }
            }
        case GFDIType.fileTransferData:
            guard let (status, next) = try? GarminFileData.answered(response), status == GarminFileData.TransferStatus.ok.rawValue else {
                download = nil
                return
            }
            await sendChunk(from: Int(next))
        default:
            break
        }
    }

    func askTime() async {
        timeReference &+= 1
        await sendFrame(GFDIFrame(type: GFDIType.currentTimeRequest, payload: GarminCurrentTimeRequest(reference: timeReference).payload))
    }

    func startDownload(_ request: GarminDownloadRequest) async {
        let bytes = request.index == 0 ? directoryFile : history.files[request.index]
        guard let bytes else {
            // No such file: the download status says so (not a GFDI refusal).
            await sendFrame(request.answer(downloadStatus: 3, fileSize: 0).frame)
            return
        }
        statistics.downloads += 1
        download = (request.index, bytes, 0, 0)
        (chunksBeforeCut, damagesNextChunk) = (nil, false)
        if request.index != 0, !faults.isEmpty {
            switch faults.removeFirst() {
            case let .cutTransfer(afterChunks): chunksBeforeCut = afterChunks
            case .wrongCRC: damagesNextChunk = true
            case .unsentFile: break
            }
        }
        if configuration.firstChunkOvertakesAnswer {
            await sendChunk(from: Int(request.offset))
            await sendFrame(request.answer(downloadStatus: 0, fileSize: UInt32(bytes.count)).frame)
            return
        }

        await sendFrame(request.answer(downloadStatus: 0, fileSize: UInt32(bytes.count)).frame)
        await sendChunk(from: Int(request.offset))
    }

    func sendChunk(from offset: Int) async {
        guard let download, offset < download.bytes.count else {
            self.download = nil
            return
        }
        if let left = chunksBeforeCut {
            guard left > 0 else {
                // The link is lost mid-file: nothing more goes out on it.
                (chunksBeforeCut, self.download) = (nil, nil)
                statistics.transfersCut += 1
                send = nil
                await linkLoss?()
                return
            }
            chunksBeforeCut = left - 1
        }
        // The host asks for the offset after the last chunk, whose CRC is kept; another offset is computed afresh.
        var chunk = GarminFileData.chunk(of: download.bytes, at: offset, chunkSize: chunkSize,
                                         crcBefore: offset == download.sentTo ? download.crc : nil)
        self.download = (download.index, download.bytes, offset + chunk.data.count, chunk.crc)
        if damagesNextChunk {
            damagesNextChunk = false
            chunk.crc ^= 0xFFFF
            statistics.chunksDamaged += 1
        }
        statistics.chunksSent += 1
        await sendFrame(GFDIFrame(type: GFDIType.fileTransferData, payload: chunk.payload))
    }

    // MARK: Real-time heart rate

    /// Whether it is streaming real-time heart rate now.
    public var isStreamingHeartRate: Bool { heartRateStream != nil }

    func startHeartRate() {
        guard heartRateStream == nil else { return }
        let interval = configuration.heartRateInterval
        heartRateStream = Task { [weak self] in
            while !Task.isCancelled {
                guard let self, await self.sendHeartRate() else { return }
                try? await Task.sleep(for: interval)
            }
        }
    }

    func stopHeartRate() {
        heartRateStream?.cancel()
        heartRateStream = nil
    }

    /// One real-time reading, `<h> 00 <bpm> <resting> ff ff`, the bpm the history's in turn; false once there is no link for it.
    func sendHeartRate() async -> Bool {
        guard let handle = heartRateHandle, send != nil else { return false }
        let rates = history.heartRates
        let bpm = rates.isEmpty ? 60 : UInt8(clamping: rates[heartRateIndex % rates.count].bpm)
        heartRateIndex += 1
        statistics.heartRateReadings += 1
        await notify([handle, 0, bpm, configuration.restingHeartRate, 0xFF, 0xFF])
        return true
    }

    func acknowledge(_ type: UInt16) async { await sendFrame(GFDIResponse(originalType: type, status: .ack).frame) }

    /// Data bytes of a chunk: the configured size, or less, so that the chunk's frame goes out in
    /// one notification. A frame in several notifications breaks when they overtake each other,
    /// as they do over EATT's several bearers (the e2e journey `garmin`, eatt: "the COBS code 116
    /// at byte 406 runs past the frame's 510 bytes"); one chunk at a time, each answered before the
    /// next, keeps the file's frames in order whatever the link does.
    public var chunkSize: Int {
        // The delimited COBS form of FILE_TRANSFER_DATA with n bytes: 2 delimiters, a code byte per
        // 254 bytes started, the frame's 6 bytes and the chunk's 7 beside the data.
        var fitting = slice - 15 - (slice / 254 + 1)
        while fitting > 1, 2 + (13 + fitting) + (13 + fitting) / 254 + 1 > slice { fitting -= 1 }
        return max(1, min(configuration.chunkSize, fitting))
    }

    /// A frame as notifications on the GFDI handle: its delimited COBS form in slices, each after the handle byte.
    func sendFrame(_ frame: GFDIFrame) async {
        guard let handle = gfdiHandle, let bytes = try? frame.delimited() else { return }
        var start = 0
        while start < bytes.count {
            let end = min(start + slice, bytes.count)
            await notify([handle] + bytes[start..<end])
            start = end
        }
    }

    func notify(_ bytes: [UInt8]) async {
        largestNotification = max(largestNotification, bytes.count)
        await send?(bytes)
    }
}
