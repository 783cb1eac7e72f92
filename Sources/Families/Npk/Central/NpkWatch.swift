import Foundation
import SwiftProtobuf
import TSDevice
import TSGATT
import TSModels
import TSNpk
import TSTransport

/// How the gateway introduces itself to an NPK watch (protocol-spec/npk/topstep-npk.md section 6).
public struct NpkWatchOptions: Sendable {
    /// Bind (03/01) on every connect instead of logging in (03/02).
    public var bind = false
    /// Bind when a login answers that the watch is bound to another user id (result 1).
    public var bindWhenLoginRefused = true
    /// The code the watch shows as a QR code, when the wearer gave one.
    public var authCode = ""
    public var userId = "tsgateway"
    /// How long a bind waits for the wearer to confirm it on the watch.
    public var bindTimeout: Duration = .seconds(30)
    /// Bytes per ATT write; nil: the link's MTU − 3.
    public var chunkSize: Int?

    public init() {}

    /// What the configuration says: bind when pairing, with its auth code.
    public init(_ configuration: WatchConfiguration) {
        bind = configuration.pairing
        authCode = configuration.pairingSecret?.text ?? ""
    }
}

/// A bind or login the watch refused, in words that say what to do.
public struct NpkAuthError: CategorizedError, Sendable, Hashable, CustomStringConvertible {
    public var command: NpkCommand
    public var result: NpkBindResult

    public var description: String {
        switch result {
        case .declinedOnWatch: "the wearer declined the pairing on the watch; pair again and accept it there"
        case .notAnsweredOnWatch: "nobody confirmed the pairing on the watch in time; pair again and confirm it on the watch"
        default: "\(command == .bind ? "bind" : "login") refused: \(result)"
        }
    }

    public var category: ErrorCategory {
        switch result {
        case .declinedOnWatch: .permission
        case .notAnsweredOnWatch: .timeout
        case .userIdMismatch, .factoryResetNeeded: .notPaired
        default: .failed
        }
    }
}

/// A settings write the watch answered with a result other than 0.
public struct NpkRefusal: CategorizedError, Sendable, Hashable, CustomStringConvertible {
    public var command: NpkCommand
    public var result: Int32

    public var description: String { "the watch refused \(command) with result \(result)" }
    public var category: ErrorCategory { .failed }
}

/// TopStep's NPK dialect behind the seam: frames of TSNpk over any `WatchTransport`, one request
/// in flight, answers matched by cmd, key and sequence, everything else routed as a notification.
public actor NpkWatch: LinkedCentral {
    public let transport: any WatchTransport
    public nonisolated let configuration: WatchConfiguration
    public nonisolated let options: NpkWatchOptions
    public private(set) var info: DeviceInfo?
    public package(set) var connectTimings = ConnectTimings()
    /// Bytes the reassembler dropped on the current link, by reason.
    public var streamDrops: NpkStreamDropCounts { reassembler.drops }
    /// Requests sent again after getting no answer in time, since this actor was made.
    public private(set) var retransmissions = 0
    /// Sync frames of a transfer already given up, ignored.
    public internal(set) var staleSyncFrames = 0
    /// Sleep items the watch sent that are no records (a negative or zero duration, an unknown
    /// stage; `NpkSleep`), never stored.
    public internal(set) var rejectedSleepItems = 0
    /// Heart-rate days the watch sent that are no `TSMetaHeartRateDay`, never stored.
    public internal(set) var rejectedHeartRateDays = 0
    /// Manual heart-rate readings the watch sent outside 1…255 bpm, never stored.
    public internal(set) var rejectedHeartRateReadings = 0

    package var connection: (any TransportConnection)?
    package var connectionGeneration = 0
    private var reassembler = NpkReassembler()
    private var matcher = NpkRequestMatcher()
    private var answer: (token: Int, continuation: CheckedContinuation<NpkFrame?, any Error>)?
    private var answerTokens = 0
    /// An answer that came while its request was still being written (an in-process watch answers at once).
    private var earlyAnswer: NpkFrame?
    package var requestTurns = RequestTurns()
    var sleepSink: SleepSink?
    var heartRateSink: HeartRateSink?
    var retiredSyncSequences: Set<UInt16> = []
    /// Battery levels the watch pushes, to every `batteryLevelChanges()` stream until the link ends.
    let batteryLevels = EventFanOut<UInt8>(buffer: 16)
    let fanOut = EventFanOut<WatchEvent>(buffer: 64)

    /// `options` nil: as `configuration` says (`NpkWatchOptions(configuration)`).
    public init(transport: any WatchTransport, configuration: WatchConfiguration = WatchConfiguration(), options: NpkWatchOptions? = nil) {
        self.transport = transport
        self.configuration = configuration
        self.options = options ?? NpkWatchOptions(configuration)
    }

    public nonisolated var dialect: Dialect { .npk }
    public nonisolated func events() -> AsyncStream<WatchEvent> { fanOut.subscribe() }
    public var isConnected: Bool { connection != nil }
    public var linkMTU: Int? { connection?.mtu.value }

    public var capabilities: WatchCapabilities { info?.capabilities ?? .nothing }

    // MARK: Connecting

    @discardableResult
    public func connect() async throws -> DeviceInfo {
        if connection != nil, let info { return info }
        reassembler = NpkReassembler()
        matcher.reset()
        retiredSyncSequences = []
        try await openLink()
        return try await describing {
            try await authenticate()
            let peripheral = try await request(.deviceInfo).payload(as: TSMetaPeripheralInfo.self)
            // No standard service is read over this dialect; nil would read as protocol v1's service alone.
            var described = NpkDevice.deviceInfo(from: peripheral, services: ServiceSet([]))
            described.dialect = .npk
            info = described
            if configuration.syncTimeOnConnect { try await syncTime() }
            return described
        }
    }

    public func disconnect() async { await closeLink() }

    /// Who the watch is, asked without logging in or binding (device information, 02/02), for
    /// `tsgateway probe`: nothing on the watch changes. The link is closed again after.
    public func identify() async throws -> DeviceInfo {
        guard connection == nil else { throw WatchError.protocolViolation("identify needs a watch not yet connected") }
        reassembler = NpkReassembler()
        matcher.reset()
        retiredSyncSequences = []
        try await openLink()
        do {
            let peripheral = try await request(.deviceInfo).payload(as: TSMetaPeripheralInfo.self)
            var described = NpkDevice.deviceInfo(from: peripheral, services: ServiceSet([]))
            described.dialect = .npk
            await closeLink()
            return described
        } catch {
            await closeLink()
            throw error
        }
    }

    /// Login, or bind when configured to or when the watch says it is bound to another user id.
    private func authenticate() async throws {
        var param = TSMetaAuthParam()
        param.userID = options.userId
        param.system = 1
        param.version = "1"
        param.brand = "tsgateway"
        param.model = "gateway"
        param.authCode = options.authCode
        param.time = try NpkTime.timeModel(at: configuration.now(), in: configuration.timeZone)
        var command: NpkCommand = options.bind ? .bind : .login
        var result = try await authResult(command, param)
        if result == .userIdMismatch, command == .login, options.bindWhenLoginRefused {
            command = .bind
            result = try await authResult(command, param)
        }
        guard result.isSuccess else { throw NpkAuthError(command: command, result: result) }
        // After a bind the sequence starts again from 1.
        if command == .bind { matcher.reset() }
    }

    private func authResult(_ command: NpkCommand, _ param: TSMetaAuthParam) async throws -> NpkBindResult {
        let timeout = command == .bind ? options.bindTimeout : configuration.requestTimeout
        if command == .bind {
            configuration.confirmationNeeded?("if the watch asks, confirm the pairing on it (waiting up to \(options.bindTimeout.components.seconds) s)")
        }
        let answer = try await request(command, message: param, timeout: timeout)
        return NpkBindResult(rawValue: try answer.payload(as: TSMetaAuthRespond.self).result)
    }

    package func releaseLink(reason: String) {
        matcher.abandon()
        if let waiting = answer {
            answer = nil
            waiting.continuation.resume(throwing: WatchError.disconnected(reason))
        }
        failSleepTransfer(WatchError.disconnected(reason))
        failHeartRateTransfer(WatchError.disconnected(reason))
        batteryLevels.finishAll()
        fanOut.send(.linkLost(reason: reason))
    }

    // MARK: Requests

    /// Sends one request and waits for its answer, resending it (same sequence, retransmission
    /// flag) when none comes in time; one request is in flight at a time.
    func request(_ command: NpkCommand, message: (any SwiftProtobuf.Message)? = nil, timeout: Duration? = nil) async throws -> NpkFrame {
        await takeTurn()
        defer { endTurn() }
        guard let link = connection else { throw WatchError.notConnected }
        let payload: [UInt8] = try message?.serializedBytes() ?? []
        var frame = try matcher.request(command, payload: payload)
        earlyAnswer = nil
        let attempts = 1 + max(0, configuration.requestRetries)
        for attempt in 1...attempts {
            if attempt > 1 {
                // An answer that came after the last wait ended and before this resend is the
                // request's (the matcher has already paired it): taken, not asked for again. It
                // was lost so, and the request failed as unanswered, when answers came late.
                if let early = earlyAnswer {
                    earlyAnswer = nil
                    return early
                }
                guard let again = matcher.retransmission() else { break }
                frame = again
                retransmissions += 1
            }
            configuration.traffic?("writing \(command) seq \(frame.sequence)\(attempt > 1 ? " again (attempt \(attempt))" : "")")
            do {
                try await send(frame, on: link)
            } catch {
                // Not sent: nothing waits for its answer.
                matcher.abandon()
                throw error
            }
            if let answered = try await awaitAnswer(timeout: timeout ?? configuration.requestTimeout) { return answered }
            flushStream()
        }
        matcher.abandon()
        throw WatchError.timeout(command: command.description, attempts: attempts)
    }

    /// A settings write: the watch answers `TSCommonResponse`, 0 = done.
    func write(_ command: NpkCommand, message: any SwiftProtobuf.Message) async throws {
        let result = try await request(command, message: message).payload(as: TSCommonResponse.self).result
        guard result == 0 else { throw NpkRefusal(command: command, result: result) }
    }

    private func send(_ frame: NpkFrame, on link: any TransportConnection) async throws {
        let size = min(options.chunkSize ?? NpkChunking.chunkSize(mtu: link.mtu.value), link.mtu.chunkSize)
        do {
            for chunk in NpkChunking.chunks(try frame.encoded(), size: size) { try await link.write(chunk) }
        } catch let error as TransportError {
            throw error.category == .unavailable ? WatchError.disconnected(error.description) : error
        }
    }

    private func awaitAnswer(timeout: Duration) async throws -> NpkFrame? {
        if let early = earlyAnswer {
            earlyAnswer = nil
            return early
        }
        guard connection != nil else { throw WatchError.disconnected("the link ended while waiting for the answer") }
        answerTokens += 1
        let token = answerTokens
        return try await withCheckedThrowingContinuation { continuation in
            answer = (token, continuation)
            Task { [weak self] in
                try? await Task.sleep(for: timeout)
                await self?.answerTimedOut(token)
            }
        }
    }

    private func answerTimedOut(_ token: Int) {
        guard let waiting = answer, waiting.token == token else { return }
        answer = nil
        waiting.continuation.resume(returning: nil)
    }


    // MARK: Receiving

    package func received(_ bytes: [UInt8]) {
        for output in reassembler.feed(bytes) {
            if case let .frame(frame) = output { route(frame) }
        }
    }

    /// The link went quiet: a frame held back by damaged bytes will not complete now.
    func flushStream() {
        for output in reassembler.flush() { if case let .frame(frame) = output { route(frame) } }
    }

    private func route(_ frame: NpkFrame) {
        switch matcher.route(frame) {
        case let .response(answered):
            if let waiting = answer {
                configuration.traffic?("\(frame.command) seq \(frame.sequence) → its request, waiting")
                answer = nil
                waiting.continuation.resume(returning: answered)
            } else {
                // Its request is not waiting (its write has not returned yet, or its wait has just
                // ended and it is about to be sent again): kept for it.
                configuration.traffic?("\(frame.command) seq \(frame.sequence) → its request, kept until it waits again")
                earlyAnswer = answered
            }
        case let .notification(notice):
            if notice.command != .sleepData && notice.command != .heartRateData {
                configuration.traffic?("\(frame.command) seq \(frame.sequence) answers no request in flight: read as the watch's own news")
            }
            notification(notice)
        }
    }

    private func notification(_ frame: NpkFrame) {
        switch frame.command {
        case .sleepData: sleepFrame(frame)
        case .heartRateData: heartRateFrame(frame)
        case .syncEnd:
            // The end names the type it ends (sleep when it names none the gateway knows).
            if (try? frame.payload(as: TSMetaSyncStopRequest.self).type) == NpkSyncType.heartRate.rawValue {
                heartRateTransferEnded(frame)
            } else {
                sleepTransferEnded(frame)
            }
        case .batteryChanged:
            guard let level = try? NpkDevice.battery(from: frame.payload(as: TSMetaBatteryModel.self)).level else { return }
            batteryLevels.send(level)
        case .dataChanged:
            guard let changed = try? frame.payload(as: TSMetaDataChanged.self), changed.type == 1 else { return }
            Task { await self.alarmsChangedOnWatch() }
        default:
            break
        }
    }
}
