import Foundation
import Testing
import TSGarmin
import TSGarminSimulator
import TSGATT
import TSModels

/// The simulated Garmin watch through the codec, as a host speaks to it: the multi-link
/// registration, the handshake the watch leads, its time request, and its directory and FIT files
/// downloaded chunk by chunk, equal to its ground truth.
@Suite struct SimulatedGarminWatchTests {
    static let berlin = TimeZone(identifier: "Europe/Berlin")!
    /// 2025-11-23 07:30:00 UTC.
    static let now = Date(timeIntervalSince1970: 1_763_883_000)

    /// A host on the watch's link: writes, and reads the notifications as control messages or GFDI frames.
    actor Host {
        let watch: SimulatedGarminWatch
        var notifications: [[UInt8]] = []
        var read = 0
        var gfdi: UInt8?
        var splitter = COBSFrameSplitter()
        var frames: [GFDIFrame] = []

        init(_ watch: SimulatedGarminWatch) async throws {
            self.watch = watch
            let mtu = try ATTMTU(247)
            await watch.centralConnected(mtu: mtu) { [weak self] bytes in await self?.received(bytes) }
        }

        func received(_ bytes: [UInt8]) {
            notifications.append(bytes)
            // The watch's first frame follows the registration's answer at once.
            if bytes.first == 0, case let .registerResponse(_, service, 0, handle, _)? = try? MultiLinkControl(bytes: bytes),
               service == MultiLinkControl.Service.gfdi {
                gfdi = handle
            }
            guard let gfdi, bytes.first == gfdi else { return }
            for found in splitter.append(bytes.dropFirst()) {
                if let form = try? found.get(), let decoded = try? COBS.decode(form), let frame = try? GFDIFrame(bytes: decoded) { frames.append(frame) }
            }
        }

        func control(_ message: MultiLinkControl) async throws -> MultiLinkControl {
            let before = notifications.count
            await watch.centralWrote(message.bytes)
            let answer = try #require(notifications[before...].first { $0.first == 0 })
            return try MultiLinkControl(bytes: answer)
        }

        /// Writes a frame on the GFDI handle, in slices as a host with this MTU would.
        func write(_ frame: GFDIFrame) async throws {
            let gfdi = try #require(gfdi)
            let bytes = try frame.delimited()
            for start in stride(from: 0, to: bytes.count, by: 243) {
                await watch.centralWrote([gfdi] + bytes[start..<min(start + 243, bytes.count)])
            }
        }

        /// The watch's next frame.
        func next() throws -> GFDIFrame {
            guard read < frames.count else { throw GarminError(.frameTooShort, "no frame from the watch") }
            defer { read += 1 }
            return frames[read]
        }

        /// Downloads file `index` whole, acknowledging each chunk with the next offset; checks the running CRC.
        func download(_ index: UInt16) async throws -> [UInt8] {
            try await write(GFDIFrame(type: GFDIType.downloadRequest, payload: GarminDownloadRequest(index: index).payload))
            let answer = try GFDIResponse(payload: try next().payload)
            #expect(answer.originalType == GFDIType.downloadRequest)
            let (status, size) = try GarminDownloadRequest.answered(answer)
            #expect(status == 0)
            var file: [UInt8] = []
            while file.count < Int(size) {
                let frame = try next()
                #expect(frame.type == GFDIType.fileTransferData)
                let chunk = try GarminFileData(payload: frame.payload)
                #expect(Int(chunk.offset) == file.count, "chunks in order")
                file += chunk.data
                #expect(chunk.crc == GarminCRC.checksum(file), "the running CRC through this chunk")
                try await write(chunk.answer(.ok).frame)
            }
            return file
        }
    }

    static func watch(days: Int = 3) throws -> SimulatedGarminWatch {
        SimulatedGarminWatch(history: try GarminWatchHistory(seed: 7, timeZone: berlin, now: now, days: days))
    }

    @Test("the host registers GFDI; the watch leads the handshake and asks the time, which it takes from the answer")
    func handshake() async throws {
        let watch = try Self.watch()
        let host = try await Host(watch)
        #expect(try await host.control(.closeAllRequest(client: 2)) == .closeAllResponse(client: 2))
        guard case let .registerResponse(2, 1, 0, handle, 0) = try await host.control(.registerRequest(client: 2, service: 1, reliable: 0)) else {
            Issue.record("GFDI was not registered")
            return
        }
        #expect(handle > 0 && handle < 0x80)
        let info = try GarminDeviceInformation(payload: try await host.next().payload)
        #expect(info.bluetoothName == "Instinct 2S" && info.softwareVersion == "14.12")
        try await host.write(GFDIResponse(originalType: GFDIType.deviceInformation, status: .ack).frame)
        let auth = try GarminAuthNegotiation(payload: try await host.next().payload)
        try await host.write(auth.answer.frame)
        let configuration = try GarminConfiguration(payload: try await host.next().payload)
        #expect(configuration.has(GarminConfiguration.multiLinkService))
        try await host.write(GFDIResponse(originalType: GFDIType.configuration, status: .ack).frame)
        let request = try await host.next()
        #expect(request.type == GFDIType.currentTimeRequest)
        let reference = try GarminCurrentTimeRequest(payload: request.payload)
        let now = try #require(GarminTime.garmin(Int64(Self.now.timeIntervalSince1970)))
        try await host.write(reference.answer(now: now, utcOffset: 3600).frame)
        let answered = await watch.hostTime
        #expect(answered?.now == now && answered?.utcOffset == 3600)
        #expect(await watch.statistics.handshakesCompleted == 1)
        // A type it does not take: answered unsupported.
        try await host.write(GFDIFrame(type: 5999, payload: []))
        #expect(try GFDIResponse(payload: try await host.next().payload).status == .unsupported)
    }

    @Test("a battery request through PROTOBUF is acknowledged naming its id, then answered reusing it")
    func batteryThroughProtobuf() async throws {
        var configuration = SimulatedGarminWatch.Configuration()
        configuration.batteryLevel = 47
        let watch = SimulatedGarminWatch(history: try GarminWatchHistory(seed: 7, timeZone: Self.berlin, now: Self.now, days: 1), configuration: configuration)
        let host = try await Host(watch)
        _ = try await host.control(.registerRequest(client: 2, service: 1, reliable: 0))
        _ = try await host.next()  // DEVICE_INFORMATION
        try await host.write(try GarminProtobufMessage(requestID: 300, smart: .batteryRequest).frame(type: GFDIType.protobufRequest))
        let acknowledgement = try GFDIResponse(payload: try await host.next().payload)
        #expect(acknowledgement.originalType == GFDIType.protobufRequest && acknowledgement.status == .ack)
        #expect(try GarminProtobufMessage.acknowledged(acknowledgement) == 300)
        let frame = try await host.next()
        #expect(frame.type == GFDIType.protobufResponse)
        let answer = try GarminProtobufMessage(payload: frame.payload)
        #expect(answer.requestID == 300)
        let battery = try answer.smart().deviceStatus.batteryStatus
        #expect(battery.level == 47 && battery.status == .ok)
        #expect(await watch.statistics.batteryAnswers == 1)
    }

    @Test("a handle closed is handed out again, never one still in use")
    func handlesAreNeverShared() async throws {
        let host = try await Host(try Self.watch(days: 1))
        func register(_ service: UInt16) async throws -> UInt8 {
            guard case let .registerResponse(2, _, 0, handle, _) = try await host.control(.registerRequest(client: 2, service: service, reliable: 0)) else {
                Issue.record("service \(service) was not registered")
                return 0
            }
            return handle
        }
        let (first, second, third) = (try await register(12), try await register(13), try await register(14))
        #expect(Set([first, second, third]).count == 3 && !Set([first, second, third]).contains(0))
        #expect(try await register(13) == second, "a service registered again keeps its handle")
        #expect(try await host.control(.closeHandleRequest(client: 2, service: 12, handle: first))
            == .closeHandleResponse(client: 2, service: 12, handle: first, status: 0))
        // Before, the next handle was the count of open ones plus one: 3, the third service's.
        let fourth = try await register(15)
        #expect(fourth != second && fourth != third)
        #expect(fourth == first)
    }

    @Test("garmin-ble's CLOSE_ALL layout is answered with its own client")
    func garminBLELayout() async throws {
        let host = try await Host(try Self.watch(days: 1))
        let before = await host.notifications.count
        await host.watch.centralWrote([0x00, 0x05, 0x00, 0x00] + Array(repeating: 0, count: 8) + [0x00])
        let answer = try #require(await host.notifications[before...].first)
        #expect(try MultiLinkControl(bytes: answer) == .closeAllResponse(client: 0))
    }

    @Test("the directory and every FIT file download whole, and hold exactly the watch's ground truth; archived files are marked")
    func filesEqualGroundTruth() async throws {
        let watch = try Self.watch(days: 3)
        let host = try await Host(watch)
        _ = try await host.control(.registerRequest(client: 2, service: 1, reliable: 0))
        _ = try await host.next()  // device information; the downloads need no handshake here
        let entries = try GarminDirectoryEntry.entries(try await host.download(0))
        #expect(entries.count == watch.history.directory.count && !entries.isEmpty)
        var items: [SleepItem] = [], samples: [HeartRateSample] = []
        for entry in entries {
            let bytes = try await host.download(entry.index)
            #expect(bytes.count == Int(entry.size))
            for file in try FITDecoder.decode(bytes) {
                #expect(file.fileType == UInt64(entry.subtype))
                items += FITRecords.sleepItems(file)
                samples += FITRecords.heartRateSamples(file)
            }
            try await host.write(GFDIFrame(type: GFDIType.setFileFlag, payload: GarminSetFileFlag(index: entry.index).payload))
            #expect(try GFDIResponse(payload: try await host.next().payload).status == .ack)
        }
        #expect(items == watch.history.sleepItems)
        #expect(samples == watch.history.heartRates)
        #expect(await watch.archived == Set(entries.map(\.index)))
    }
}
