import Foundation
import TSModels

/// The Garmin dialect's reader of captured bytes (`protocol decode`): every value starts with its
/// multi-link handle; handle 0 carries control messages, the others COBS-framed GFDI messages
/// (protocol-spec/garmin/garmin.md §2, §3), each stream read on its own. A file the central
/// downloads is put together from its chunks as the central did (offsets, running CRC), and a
/// whole FIT file is read: a sleep file's stages as sleep items, a monitoring file's heart rate.
/// Frames whose COBS, length or CRC fail are shown as such.
public struct GarminCaptureDecoder: CaptureDecoder {
    public init() {}

    public func session(started: Date?) -> any CaptureSessionDecoder { Session() }

    /// What `--json` shows of one message as `message`.
    public struct Meaning: Sendable, Encodable {
        public var message: String
        /// The GFDI type, or the control message's type on handle 0.
        public var type: Int
        public var fields: [String: JSONValue]?
        public var records: [SleepItem]?
        public var heartRate: [HeartRateSample]?
    }

    static let typeNames: [UInt16: String] = [
        GFDIType.response: "RESPONSE", GFDIType.downloadRequest: "DOWNLOAD_REQUEST", GFDIType.uploadRequest: "UPLOAD_REQUEST",
        GFDIType.fileTransferData: "FILE_TRANSFER_DATA", GFDIType.createFile: "CREATE_FILE", GFDIType.filter: "FILTER",
        GFDIType.setFileFlag: "SET_FILE_FLAG", GFDIType.deviceInformation: "DEVICE_INFORMATION", GFDIType.deviceSettings: "DEVICE_SETTINGS",
        GFDIType.systemEvent: "SYSTEM_EVENT", GFDIType.supportedFileTypes: "SUPPORTED_FILE_TYPES", GFDIType.synchronization: "SYNCHRONIZATION",
        GFDIType.protobufRequest: "PROTOBUF_REQUEST", GFDIType.protobufResponse: "PROTOBUF_RESPONSE", GFDIType.configuration: "CONFIGURATION",
        GFDIType.currentTimeRequest: "CURRENT_TIME_REQUEST", GFDIType.authNegotiation: "AUTH_NEGOTIATION",
    ]

    static func name(_ type: UInt16) -> String { typeNames[type] ?? "GFDI \(type)" }

    /// A download the central asked for, as its chunks come.
    struct Download {
        var index: UInt16
        var size: Int?
        var bytes: [UInt8] = []
        var crc: UInt16 = 0
    }

    struct Session: CaptureSessionDecoder {
        var splitters: [String: COBSFrameSplitter] = [:]
        var download: Download?

        mutating func append(_ value: [UInt8], channel: CaptureChannel, flow: CaptureFlow) -> [DecodedFrame] {
            guard let handle = value.first else { return [] }
            if handle == MultiLinkControl.controlHandle { return [control(value)] }
            let key = "\(flow) \(handle)"
            var splitter = splitters[key] ?? COBSFrameSplitter()
            let found = splitter.append(value.dropFirst())
            splitters[key] = splitter
            return found.map { result in
                switch result {
                case let .success(form): gfdi(form, flow: flow)
                case let .failure(error): DecodedFrame(.garbage, "bytes outside a COBS frame: \(error)", fields: ["code": error.code.rawValue])
                }
            }
        }

        mutating func finish(channel: CaptureChannel, flow: CaptureFlow) -> [DecodedFrame] {
            var frames: [DecodedFrame] = []
            for key in splitters.keys.sorted() where key.hasPrefix("\(flow) ") {
                guard let pending = splitters[key]?.pending, pending > 0 else { continue }
                frames.append(DecodedFrame(.corruptFrame, "\(pending) byte(s) of a COBS frame whose end never came", meaning: "incomplete",
                                           fields: ["code": "incomplete"]))
                splitters[key]?.reset()
            }
            return frames
        }

        func control(_ value: [UInt8]) -> DecodedFrame {
            let type = Int(value.count > 1 ? value[1] : 0)
            do {
                let message = try MultiLinkControl(bytes: value)
                let text: String
                switch message {
                case let .registerRequest(client, service, reliable): text = "REGISTER_ML_REQ: client \(client), service \(service), reliable \(reliable)"
                case let .registerResponse(client, service, status, handle, _): text = "REGISTER_ML_RESP: client \(client), service \(service), status \(status), handle \(handle)"
                case let .closeHandleRequest(client, service, handle): text = "CLOSE_HANDLE_REQ: client \(client), service \(service), handle \(handle)"
                case let .closeHandleResponse(client, service, handle, status): text = "CLOSE_HANDLE_RESP: client \(client), service \(service), handle \(handle), status \(status)"
                case let .closeAllRequest(client): text = "CLOSE_ALL_REQ: client \(client)"
                case let .closeAllResponse(client): text = "CLOSE_ALL_RESP: client \(client)"
                }
                return DecodedFrame(.frame, text, meaning: Meaning(message: String(text.prefix { $0 != ":" }), type: type))
            } catch {
                return DecodedFrame(.invalidMessage, "a control message: \(error)", fields: ["code": error.code.rawValue])
            }
        }

        mutating func gfdi(_ form: [UInt8], flow: CaptureFlow) -> DecodedFrame {
            let frame: GFDIFrame
            do { frame = try GFDIFrame(bytes: try COBS.decode(form)) } catch {
                return DecodedFrame(.corruptFrame, "a GFDI frame: \(error)", fields: ["code": error.code.rawValue])
            }
            let name = GarminCaptureDecoder.name(frame.type)
            var meaning = Meaning(message: name, type: Int(frame.type))
            do throws(GarminError) {
                let text = try read(frame, flow: flow, meaning: &meaning)
                return DecodedFrame(.frame, "\(name): \(text)", meaning: meaning)
            } catch {
                return DecodedFrame(.invalidMessage, "\(name): \(error)", meaning: meaning, fields: ["code": error.code.rawValue])
            }
        }

        /// The gist of one message, its fields into `meaning`; a download's chunks put together.
        mutating func read(_ frame: GFDIFrame, flow: CaptureFlow, meaning: inout Meaning) throws(GarminError) -> String {
            switch frame.type {
            case GFDIType.deviceInformation:
                let info = try GarminDeviceInformation(payload: frame.payload)
                meaning.fields = ["product": .number(Double(info.product)), "unit": .number(Double(info.unit)),
                                  "software": .string(info.softwareVersion), "name": .string(info.bluetoothName), "model": .string(info.model)]
                return "\(info.bluetoothName) (product \(info.product), software \(info.softwareVersion))"
            case GFDIType.response:
                let response = try GFDIResponse(payload: frame.payload)
                meaning.fields = ["to": .number(Double(response.originalType)), "status": .number(Double(response.statusByte))]
                var text = "to \(GarminCaptureDecoder.name(response.originalType)), status \(response.statusByte)"
                if response.originalType == GFDIType.downloadRequest, flow == .notification, response.status == .ack {
                    let answer = try GarminDownloadRequest.answered(response)
                    if answer.downloadStatus == 0 { download?.size = Int(answer.fileSize) }
                    text += ", download status \(answer.downloadStatus), \(answer.fileSize) bytes"
                } else if response.originalType == GFDIType.currentTimeRequest, flow == .write, response.status == .ack {
                    let time = try GarminCurrentTimeRequest.answered(response)
                    meaning.fields?["now"] = .number(Double(GarminTime.unix(time.now)))
                    meaning.fields?["utcOffset"] = .number(Double(time.utcOffset))
                    text += ", now \(GarminTime.unix(time.now)) (Unix), offset \(time.utcOffset) s"
                }
                return text
            case GFDIType.downloadRequest:
                let request = try GarminDownloadRequest(payload: frame.payload)
                if flow == .write { download = Download(index: request.index) }
                meaning.fields = ["index": .number(Double(request.index)), "offset": .number(Double(request.offset))]
                return "file \(request.index) from offset \(request.offset)"
            case GFDIType.fileTransferData:
                let chunk = try GarminFileData(payload: frame.payload)
                meaning.fields = ["offset": .number(Double(chunk.offset)), "bytes": .number(Double(chunk.data.count))]
                guard flow == .notification, var file = download, let size = file.size else {
                    return "offset \(chunk.offset), \(chunk.data.count) bytes"
                }
                let running = GarminCRC.checksum(chunk.data, seed: file.crc)
                guard Int(chunk.offset) == file.bytes.count, running == chunk.crc else {
                    download = nil
                    throw GarminError(.crcMismatch, "a chunk of file \(file.index) at offset \(chunk.offset) (\(file.bytes.count) expected) fails its running CRC or its place")
                }
                file.bytes += chunk.data
                file.crc = running
                download = file
                guard file.bytes.count >= size else { return "file \(file.index), offset \(chunk.offset), \(chunk.data.count) bytes" }
                download = nil
                return try complete(file, meaning: &meaning)
            case GFDIType.setFileFlag:
                let flag = try GarminSetFileFlag(payload: frame.payload)
                return "file \(flag.index), flags \(String(format: "0x%02x", flag.flags))\(flag.flags & GarminSetFileFlag.archive != 0 ? " (archive)" : "")"
            case GFDIType.systemEvent:
                let event = try GarminSystemEvent(payload: frame.payload)
                meaning.fields = ["event": .number(Double(event.event))]
                return "event \(event.event)"
            case GFDIType.currentTimeRequest:
                let request = try GarminCurrentTimeRequest(payload: frame.payload)
                return "reference \(request.reference)"
            case GFDIType.configuration:
                let configuration = try GarminConfiguration(payload: frame.payload)
                return "\(configuration.bitmap.count)-byte capability bitmap"
            case GFDIType.authNegotiation:
                let negotiation = try GarminAuthNegotiation(payload: frame.payload)
                return "flags \(negotiation.flags)"
            case GFDIType.protobufRequest, GFDIType.protobufResponse:
                let message = try GarminProtobufMessage(payload: frame.payload)
                meaning.fields = ["requestId": .number(Double(message.requestID)), "bytes": .number(Double(message.bytes.count))]
                let smart = try message.smart()
                if smart.asksBattery { return "request \(message.requestID): the battery" }
                if smart.hasDeviceStatus, smart.deviceStatus.hasBatteryStatus {
                    let battery = smart.deviceStatus.batteryStatus
                    meaning.fields?["level"] = .number(Double(battery.level))
                    meaning.fields?["status"] = .number(Double(battery.status.rawValue))
                    return "request \(message.requestID): battery \(battery.level) %, status \(battery.status.rawValue)"
                }
                return "request \(message.requestID): \(message.bytes.count) protobuf bytes of a service the gateway does not read"
            default:
                return "\(frame.payload.count) payload bytes"
            }
        }

        /// A file downloaded whole: the directory's entries, or a FIT file's sleep or heart rate.
        func complete(_ file: Download, meaning: inout Meaning) throws(GarminError) -> String {
            if file.index == 0 {
                let entries = try GarminDirectoryEntry.entries(file.bytes)
                meaning.fields?["files"] = .array(entries.map { .string("\($0.index): type \($0.type)/\($0.subtype), \($0.size) bytes") })
                return "the directory complete: \(entries.count) files"
            }
            let fit = try FITDecoder.decode(file.bytes)
            let items = fit.flatMap(FITRecords.sleepItems)
            let samples = fit.flatMap(FITRecords.heartRateSamples)
            if !items.isEmpty { meaning.records = items }
            if !samples.isEmpty { meaning.heartRate = samples }
            return "file \(file.index) complete (\(file.bytes.count) bytes of FIT): \(items.count) sleep items, \(samples.count) heart-rate samples"
        }
    }
}
