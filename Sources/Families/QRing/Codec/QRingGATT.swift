import TSModels

/// The GATT side of a QRing ring (protocol-spec/qring/qring.md §1).
public enum QRingGATT {
    /// 16-byte command packets: the gateway writes to `commandWrite`, the ring answers on `commandNotify`.
    public static let commandService = "6e40fff0-b5a3-f393-e0a9-e50e24dcca9e"
    public static let commandWrite = "6e400002-b5a3-f393-e0a9-e50e24dcca9e"
    public static let commandNotify = "6e400003-b5a3-f393-e0a9-e50e24dcca9e"
    /// Big-data frames (sleep).
    public static let bigDataService = "de5bf728-d711-4e47-af26-65e3012a5dc7"
    public static let bigDataWrite = "de5bf72a-d711-4e47-af26-65e3012a5dc7"
    public static let bigDataNotify = "de5bf729-d711-4e47-af26-65e3012a5dc7"
}

extension GATTProfile {
    /// QRing's command pair (16-byte packets, written without response) and its big-data pair.
    public static let qring = GATTProfile(
        service: QRingGATT.commandService, writeCharacteristic: QRingGATT.commandWrite, notifyCharacteristic: QRingGATT.commandNotify,
        writeMode: .withoutResponse,
        secondChannel: GATTChannel(service: QRingGATT.bigDataService, writeCharacteristic: QRingGATT.bigDataWrite,
                                   notifyCharacteristic: QRingGATT.bigDataNotify))
}
