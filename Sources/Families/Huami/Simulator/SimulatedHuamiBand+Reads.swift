import Foundation
import TSGATT
import TSHuami
import TSTransport

/// What the band answers a central's reads: the standard services over a loopback link (Device
/// Information, Current Time, Heart Rate Measurement) and its own battery and clock.
extension SimulatedHuamiBand {
    public nonisolated var standardCharacteristics: Set<StandardCharacteristic> {
        Set(StandardCharacteristic.allCases.filter { deviceInformation($0) != nil }).union([.currentTime, .heartRateMeasurement])
    }

    public func read(_ characteristic: StandardCharacteristic) async throws -> [UInt8] {
        if characteristic == .currentTime { return clock().currentTimeBytes }
        guard let value = deviceInformation(characteristic) else { throw TransportError.characteristicMissing(characteristic) }
        return value
    }

    public func write(_ value: [UInt8], to characteristic: StandardCharacteristic) async throws {
        guard characteristic == .currentTime else { throw TransportError.characteristicMissing(characteristic) }
        await centralWrote(value, to: .currentTime)
    }

    public func notifications(of characteristic: StandardCharacteristic) async -> AsyncStream<[UInt8]> {
        guard characteristic == .heartRateMeasurement else { return AsyncStream { $0.finish() } }
        let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self, bufferingPolicy: .unbounded)
        heartRateStreams.append(continuation)
        return stream
    }

    /// When the band was last taken off the charger and last charged, as the battery reading carries them.
    public var lastOff: Int64 { history.end - 2 * 86_400 - 3 * 3600 }
    public var lastCharge: Int64 { history.end - 2 * 86_400 - 5 * 3600 }

    /// The battery reading: `00`, level, state (`HuamiBattery`), then the last time the band was off
    /// at bytes 3…9 and the last charge at 11…17 as year u16, month, day, hour, minute, second —
    /// the offsets miband2 and satcar77/miband4 read (Gadgetbridge reads the last charge from byte
    /// 10; the project's central reads neither, protocol-spec/huami/huami.md §6). A reading of zeros there
    /// is no date, and miband2's `get_battery` fails on it.
    public func batteryBytes() -> [UInt8] {
        var bytes = battery.bytes
        func date(_ seconds: Int64) -> [UInt8] { Array(bandTime(seconds).shortBytes.prefix(7)) }
        bytes.replaceSubrange(3..<10, with: date(lastOff))
        bytes.replaceSubrange(11..<18, with: date(lastCharge))
        return bytes
    }

    /// A read of `characteristic`: the battery and the clock; the rest are not readable.
    public func read(_ characteristic: Characteristic) throws(HuamiError) -> [UInt8] {
        switch characteristic {
        case .battery: return batteryBytes()
        case .currentTime: return clock().currentTimeBytes
        default: throw HuamiError(.unknownOpcode, "the band's \(characteristic.rawValue) characteristic cannot be read")
        }
    }

    /// Device Information as the band serves it.
    public nonisolated func deviceInformation(_ characteristic: StandardCharacteristic) -> [UInt8]? {
        switch characteristic {
        case .modelNumber: Array(configuration.name.utf8)
        case .firmwareRevision, .softwareRevision: Array(configuration.firmware.utf8)
        case .hardwareRevision: Array(configuration.hardware.utf8)
        case .serialNumber: Array(configuration.serial.utf8)
        case .manufacturerName: Array("Huami (simulated)".utf8)
        default: nil
        }
    }
}
