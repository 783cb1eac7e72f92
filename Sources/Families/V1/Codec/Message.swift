import TSGATT
import TSModels

/// How a frame relates to others, from its flags (wire-protocol.md §2, §4).
public enum MessageForm: String, Sendable, Hashable, CaseIterable {
    case request, response, event, eventAck, stream, nack

    public var flags: FrameFlags {
        switch self {
        case .request, .stream, .nack: []
        case .response, .eventAck: .response
        case .event: .event
        }
    }
}

/// Every message of protocol version 1 and 1.1, with its decoded payload.
public enum Message: Sendable, Hashable {
    case helloRequest(HelloRequest)
    case helloResponse(HelloResponse)
    case deviceInfoRequest
    case deviceInfoResponse(DeviceInfoPayload)
    case timeSetRequest(TimeSet)
    case timeSetResponse
    case batteryRequest
    case batteryResponse(BatteryStatus)
    case alarmsGetRequest
    case alarmsGetResponse(AlarmTable)
    case alarmsSetRequest(AlarmTable)
    case alarmsSetResponse
    case alarmsChanged(AlarmsChanged)
    case alarmsChangedAck
    case monitorGetRequest(MonitorRequest)
    case monitorGetResponse(MonitorConfig)
    case monitorSetRequest(MonitorConfig)
    case monitorSetResponse
    case sleepQueryRequest(SleepQuery)
    case sleepQueryResponse(SleepTransfer)
    case sleepPage(SleepPage)
    case sleepPageAck(SleepPageAck)
    case sleepCommitRequest(SleepCommit)
    case sleepCommitResponse(SleepCommitResult)
    case sleepAbortRequest(SleepAbort)
    case sleepAbortResponse
    case liveSubscribeRequest(LiveSubscribe)
    case liveSubscribeResponse
    case liveStage(LiveStageEvent)
    case liveStageAck
    case extensionsRequest(ExtensionsRequest)
    case extensionsResponse(ExtensionsResponse)
    case ringRequest(RingRequest)
    case ringResponse(RingResponse)
    case alarmAlert(AlarmAlert)
    case alarmAlertAck
    /// An ERROR answering a request.
    case error(ErrorReport)
    /// An unsolicited ERROR: a NACK of a corrupt frame.
    case nack(ErrorReport)

    /// Decodes the frame's payload according to its command and flags.
    public init(frame: Frame) throws(ProtocolError) {
        let flags = frame.flags.intersection(.defined)
        guard let forms = Message.formsByCommand[frame.command] else {
            throw ProtocolError(.unknownCommand, "command \(frame.command) is not defined in protocol version 1 or 1.1")
        }
        let form: MessageForm? = switch flags {
        case []: forms.contains(.request) ? .request : forms.contains(.stream) ? .stream : forms.contains(.nack) ? .nack : nil
        case .response: forms.contains(.response) ? .response : forms.contains(.eventAck) ? .eventAck : nil
        case .event: forms.contains(.event) ? .event : nil
        default: nil
        }
        guard let form, let descriptor = Message.descriptors[DescriptorKey(command: frame.command, form: form)] else {
            throw ProtocolError(.unexpectedDirection, "command \(frame.command) cannot be sent with flags 0x\(String(frame.flags.rawValue, radix: 16))")
        }
        self = try descriptor.decodePayload(frame.payload)
    }

    /// The frame carrying this message with `sequence`.
    public func frame(sequence: UInt8) throws(ProtocolError) -> Frame {
        let parts = self.parts
        return Frame(flags: parts.form.flags, sequence: sequence, command: parts.command,
                     payload: try parts.body.encodedPayload())
    }

    /// `<message>.<form>`, e.g. `alarmsSet.request` (vectors/README.md).
    public var kind: String { parts.kind }

    public var command: CommandID { parts.command }
    public var form: MessageForm { parts.form }

    var parts: (kind: String, command: CommandID, form: MessageForm, body: any Payload) {
        func p(_ command: CommandID, _ form: MessageForm, _ body: any Payload) -> (String, CommandID, MessageForm, any Payload) {
            (Message.descriptors[DescriptorKey(command: command, form: form)]?.kind ?? "?", command, form, body)
        }
        let empty = EmptyPayload()
        return switch self {
        case let .helloRequest(body): p(.hello, .request, body)
        case let .helloResponse(body): p(.hello, .response, body)
        case .deviceInfoRequest: p(.deviceInfo, .request, empty)
        case let .deviceInfoResponse(body): p(.deviceInfo, .response, body)
        case let .timeSetRequest(body): p(.timeSet, .request, body)
        case .timeSetResponse: p(.timeSet, .response, empty)
        case .batteryRequest: p(.battery, .request, empty)
        case let .batteryResponse(body): p(.battery, .response, body)
        case .alarmsGetRequest: p(.alarmsGet, .request, empty)
        case let .alarmsGetResponse(body): p(.alarmsGet, .response, body)
        case let .alarmsSetRequest(body): p(.alarmsSet, .request, body)
        case .alarmsSetResponse: p(.alarmsSet, .response, empty)
        case let .alarmsChanged(body): p(.alarmsChanged, .event, body)
        case .alarmsChangedAck: p(.alarmsChanged, .eventAck, empty)
        case let .monitorGetRequest(body): p(.monitorGet, .request, body)
        case let .monitorGetResponse(body): p(.monitorGet, .response, body)
        case let .monitorSetRequest(body): p(.monitorSet, .request, body)
        case .monitorSetResponse: p(.monitorSet, .response, empty)
        case let .sleepQueryRequest(body): p(.sleepQuery, .request, body)
        case let .sleepQueryResponse(body): p(.sleepQuery, .response, body)
        case let .sleepPage(body): p(.sleepPage, .stream, body)
        case let .sleepPageAck(body): p(.sleepPageAck, .request, body)
        case let .sleepCommitRequest(body): p(.sleepCommit, .request, body)
        case let .sleepCommitResponse(body): p(.sleepCommit, .response, body)
        case let .sleepAbortRequest(body): p(.sleepAbort, .request, body)
        case .sleepAbortResponse: p(.sleepAbort, .response, empty)
        case let .liveSubscribeRequest(body): p(.liveSubscribe, .request, body)
        case .liveSubscribeResponse: p(.liveSubscribe, .response, empty)
        case let .liveStage(body): p(.liveStage, .event, body)
        case .liveStageAck: p(.liveStage, .eventAck, empty)
        case let .extensionsRequest(body): p(.extensions, .request, body)
        case let .extensionsResponse(body): p(.extensions, .response, body)
        case let .ringRequest(body): p(.ring, .request, body)
        case let .ringResponse(body): p(.ring, .response, body)
        case let .alarmAlert(body): p(.alarmAlert, .event, body)
        case .alarmAlertAck: p(.alarmAlert, .eventAck, empty)
        case let .error(body): p(.error, .response, body)
        case let .nack(body): p(.error, .nack, body)
        }
    }
}

// MARK: - Descriptor table

struct DescriptorKey: Hashable {
    var command: CommandID
    var form: MessageForm
}

struct MessageDescriptor: Sendable {
    var kind: String
    var command: CommandID
    var form: MessageForm
    var decodePayload: @Sendable ([UInt8]) throws(ProtocolError) -> Message
    var decodeBody: @Sendable (KeyedDecodingContainer<MessageCodingKeys>) throws -> Message

    init<P: Payload>(_ kind: String, _ command: CommandID, _ form: MessageForm, _ type: P.Type, _ wrap: @escaping @Sendable (P) -> Message) {
        self.kind = kind
        self.command = command
        self.form = form
        decodePayload = { (bytes: [UInt8]) throws(ProtocolError) -> Message in wrap(try P(payload: bytes, name: kind)) }
        decodeBody = { container in wrap(try container.decode(P.self, forKey: .body)) }
    }

    init(_ kind: String, _ command: CommandID, _ form: MessageForm, empty message: Message) {
        self.init(kind, command, form, EmptyPayload.self) { _ in message }
    }
}

enum MessageCodingKeys: String, CodingKey {
    case kind, body
}

extension Message {
    static let allDescriptors: [MessageDescriptor] = [
        .init("hello.request", .hello, .request, HelloRequest.self) { .helloRequest($0) },
        .init("hello.response", .hello, .response, HelloResponse.self) { .helloResponse($0) },
        .init("deviceInfo.request", .deviceInfo, .request, empty: .deviceInfoRequest),
        .init("deviceInfo.response", .deviceInfo, .response, DeviceInfoPayload.self) { .deviceInfoResponse($0) },
        .init("timeSet.request", .timeSet, .request, TimeSet.self) { .timeSetRequest($0) },
        .init("timeSet.response", .timeSet, .response, empty: .timeSetResponse),
        .init("battery.request", .battery, .request, empty: .batteryRequest),
        .init("battery.response", .battery, .response, BatteryStatus.self) { .batteryResponse($0) },
        .init("alarmsGet.request", .alarmsGet, .request, empty: .alarmsGetRequest),
        .init("alarmsGet.response", .alarmsGet, .response, AlarmTable.self) { .alarmsGetResponse($0) },
        .init("alarmsSet.request", .alarmsSet, .request, AlarmTable.self) { .alarmsSetRequest($0) },
        .init("alarmsSet.response", .alarmsSet, .response, empty: .alarmsSetResponse),
        .init("alarmsChanged.event", .alarmsChanged, .event, AlarmsChanged.self) { .alarmsChanged($0) },
        .init("alarmsChanged.eventAck", .alarmsChanged, .eventAck, empty: .alarmsChangedAck),
        .init("monitorGet.request", .monitorGet, .request, MonitorRequest.self) { .monitorGetRequest($0) },
        .init("monitorGet.response", .monitorGet, .response, MonitorConfig.self) { .monitorGetResponse($0) },
        .init("monitorSet.request", .monitorSet, .request, MonitorConfig.self) { .monitorSetRequest($0) },
        .init("monitorSet.response", .monitorSet, .response, empty: .monitorSetResponse),
        .init("sleepQuery.request", .sleepQuery, .request, SleepQuery.self) { .sleepQueryRequest($0) },
        .init("sleepQuery.response", .sleepQuery, .response, SleepTransfer.self) { .sleepQueryResponse($0) },
        .init("sleepPage.stream", .sleepPage, .stream, SleepPage.self) { .sleepPage($0) },
        .init("sleepPageAck.request", .sleepPageAck, .request, SleepPageAck.self) { .sleepPageAck($0) },
        .init("sleepCommit.request", .sleepCommit, .request, SleepCommit.self) { .sleepCommitRequest($0) },
        .init("sleepCommit.response", .sleepCommit, .response, SleepCommitResult.self) { .sleepCommitResponse($0) },
        .init("sleepAbort.request", .sleepAbort, .request, SleepAbort.self) { .sleepAbortRequest($0) },
        .init("sleepAbort.response", .sleepAbort, .response, empty: .sleepAbortResponse),
        .init("liveSubscribe.request", .liveSubscribe, .request, LiveSubscribe.self) { .liveSubscribeRequest($0) },
        .init("liveSubscribe.response", .liveSubscribe, .response, empty: .liveSubscribeResponse),
        .init("liveStage.event", .liveStage, .event, LiveStageEvent.self) { .liveStage($0) },
        .init("liveStage.eventAck", .liveStage, .eventAck, empty: .liveStageAck),
        .init("error.response", .error, .response, ErrorReport.self) { .error($0) },
        .init("error.nack", .error, .nack, ErrorReport.self) { .nack($0) },
        .init("extensions.request", .extensions, .request, ExtensionsRequest.self) { .extensionsRequest($0) },
        .init("extensions.response", .extensions, .response, ExtensionsResponse.self) { .extensionsResponse($0) },
        .init("ring.request", .ring, .request, RingRequest.self) { .ringRequest($0) },
        .init("ring.response", .ring, .response, RingResponse.self) { .ringResponse($0) },
        .init("alarmAlert.event", .alarmAlert, .event, AlarmAlert.self) { .alarmAlert($0) },
        .init("alarmAlert.eventAck", .alarmAlert, .eventAck, empty: .alarmAlertAck),
    ]

    static let descriptors: [DescriptorKey: MessageDescriptor] = Dictionary(
        uniqueKeysWithValues: allDescriptors.map { (DescriptorKey(command: $0.command, form: $0.form), $0) })

    static let descriptorsByKind: [String: MessageDescriptor] = Dictionary(
        uniqueKeysWithValues: allDescriptors.map { ($0.kind, $0) })

    static let formsByCommand: [CommandID: Set<MessageForm>] = allDescriptors.reduce(into: [:]) {
        $0[$1.command, default: []].insert($1.form)
    }

    /// Every message kind, in specification order.
    public static var allKinds: [String] { allDescriptors.map(\.kind) }
}

/// `{"kind": "alarmsSet.request", "body": {…}}`, the shape of the test vectors and of
/// `tsgateway protocol decode --json`.
extension Message: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: MessageCodingKeys.self)
        let kind = try container.decode(String.self, forKey: .kind)
        guard let descriptor = Message.descriptorsByKind[kind] else {
            throw DecodingError.dataCorruptedError(forKey: .kind, in: container, debugDescription: "unknown message kind \"\(kind)\"")
        }
        self = try descriptor.decodeBody(container)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: MessageCodingKeys.self)
        let parts = self.parts
        try container.encode(parts.kind, forKey: .kind)
        try container.encode(parts.body, forKey: .body)
    }
}
