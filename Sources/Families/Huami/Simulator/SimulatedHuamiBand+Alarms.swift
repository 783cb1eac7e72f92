import TSHuami

/// The alarm table (protocol-spec/huami/huami.md §4): slots set, cleared and read back, after auth only.
extension SimulatedHuamiBand {
    func configure(_ request: HuamiConfigRequest) async {
        guard isAuthenticated else {
            statistics.requestsBeforeAuth += 1
            await send(.configuration, HuamiConfigAnswer.other(opcode: request.bytes[0], status: HuamiAuthAnswer.wrongKeyStatus, rest: []).bytes)
            return
        }
        switch request {
        case let .setAlarm(alarm):
            statistics.alarmWrites += 1
            alarmSlots[Int(alarm.slot)] = alarm
            say("alarm \(Self.describe(alarm))")
            await send(.configuration, HuamiConfigAnswer.alarmSet(status: 0x01).bytes)
        case let .clearAlarm(slot):
            statistics.alarmWrites += 1
            alarmSlots[Int(slot)] = nil
            say("alarm slot \(slot): cleared")
            await send(.configuration, HuamiConfigAnswer.alarmSet(status: 0x01).bytes)
        case .alarmStatus:
            let held = alarmSlots.compactMap { $0 }.map { HuamiAlarmStatus(slot: $0.slot, isEnabled: $0.isEnabled) }
            await send(.configuration, HuamiConfigAnswer.alarmStatus(held).bytes)
        case .alarmTable:
            for chunk in HuamiAlarmTable.chunks(alarmSlots.compactMap { $0 }) { await send(.configuration, chunk.bytes) }
        }
    }
}
