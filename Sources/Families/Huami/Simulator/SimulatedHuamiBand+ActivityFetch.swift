import Foundation
import TSHuami

/// The activity fetch (protocol-spec/huami/huami.md §7): the start answer, the data packets with their
/// counters and the faults that damage them, the end with its CRC, the acknowledgement.
extension SimulatedHuamiBand {
    func fetch(_ request: HuamiFetchRequest) async {
        guard isAuthenticated else {
            statistics.requestsBeforeAuth += 1
            await send(.fetchControl, HuamiFetchAnswer.refused(opcode: request.bytes[0], status: HuamiAuthAnswer.wrongKeyStatus).bytes)
            return
        }
        switch request {
        case let .start(type, since):
            statistics.fetches += 1
            guard type == HuamiFetchRequest.activityType else {
                await send(.fetchControl, HuamiFetchAnswer.refused(opcode: HuamiFetchRequest.startOpcode, status: 0x02).bytes)
                return
            }
            // The minute holding `since`, not before what the band still holds, nor past what it recorded.
            let asked = HuamiBandHistory.minute(containing: since.unixSeconds)
            let first = min(max(asked, firstHeld), history.end)
            let minutes = min(configuration.maxMinutesPerFetch, Int((history.end - first) / 60))
            var count = minutes * configuration.sampleFormat.size
            if let off = takeFault({ if case let .countOff(bytes) = $0 { bytes } else { nil } }) { count = max(0, count + off) }
            pending = (first, minutes, count)
            sentThrough = nil
            await send(.fetchControl, HuamiFetchAnswer.started(count: UInt32(count), start: bandTime(first)).bytes)
        case .fetchData:
            guard let pending, pending.minutes > 0 else {
                await send(.fetchControl, HuamiFetchAnswer.refused(opcode: HuamiFetchRequest.fetchDataOpcode, status: 0x04).bytes)
                return
            }
            self.pending = nil
            guard configuration.answerTiming == .beforeResponse else {
                await transfer(first: pending.first, minutes: pending.minutes)
                return
            }
            // The data are no answer to this write but a stream after it: a band that held the
            // write's response back until hundreds of notifications had gone out would have its
            // write failed by bluetoothd (the e2e run of issue 47: "ATT error: 0x0e"). The stream
            // follows the response, after every earlier write's answers.
            let earlier = lateAnswers
            lateAnswers = Task { [weak self] in
                await earlier?.value
                await Task.yield()
                guard !Task.isCancelled, let self else { return }
                await self.transfer(first: pending.first, minutes: pending.minutes)
            }
        case .acknowledge:
            statistics.acknowledgements += 1
            if let sentThrough, configuration.dropsAcknowledgedData { firstHeld = max(firstHeld, sentThrough) }
            sentThrough = nil
            pending = nil
            await send(.fetchControl, HuamiFetchAnswer.acknowledged.bytes)
        }
    }

    /// A time in the band's zone: the one its clock was set with, else the history's.
    func bandTime(_ unixSeconds: Int64) -> HuamiTime {
        let zone = clockSet.flatMap { TimeZone(secondsFromGMT: $0.time.zoneQuarterHours * 900) } ?? history.timeZone
        return HuamiTime(unixSeconds: unixSeconds, zone: zone)
    }

    func transfer(first: Int64, minutes: Int) async {
        statistics.transfers += 1
        let data = HuamiSample.encode(history.samples(from: first, count: minutes), format: configuration.sampleFormat)
        var packets = HuamiDataPacket.packets(data, perPacket: configuration.dataBytesPerPacket)
        if let index = takeFault({ if case let .skipCounter(packet) = $0 { packet } else { nil } }), packets.indices.contains(index) {
            // Counted as if one packet before it had gone out and been lost.
            for later in index..<packets.count { packets[later].counter &+= 1 }
        }
        if let index = takeFault({ if case let .shortPacket(packet) = $0 { packet } else { nil } }), packets.indices.contains(index),
           packets[index].data.count > 1 {
            packets[index].data.removeLast()
        }
        let cutAfter = takeFault { if case let .cutTransfer(count) = $0 { count } else { nil } }
        for (index, packet) in packets.enumerated() {
            if index == cutAfter {
                await loseLink()
                return
            }
            guard notify != nil else { return }
            if let pacing = configuration.pacing, index > 0, index % pacing.packets == 0 { await pause(pacing.pause) }
            guard notify != nil else { return }
            statistics.dataPacketsSent += 1
            await send(.activityData, packet.bytes)
        }
        if let cutAfter, cutAfter >= packets.count {
            await loseLink()
            return
        }
        sentThrough = first + Int64(minutes) * 60
        await send(.fetchControl, HuamiFetchAnswer.finished(crc32: configuration.sendsCRC ? TSHuami.CRC32.checksum(data) : nil).bytes)
    }
}
