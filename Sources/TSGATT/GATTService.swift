import TSModels

/// The vendor GATT service of wire protocol v1 (wire-protocol.md §1).
public enum WatchGATT {
    public static let service = "54530001-6777-4e3b-9c2a-7473676174e5"
    /// Central → watch (write, write-without-response).
    public static let writeCharacteristic = "54530002-6777-4e3b-9c2a-7473676174e5"
    /// Watch → central (notify).
    public static let notifyCharacteristic = "54530003-6777-4e3b-9c2a-7473676174e5"
}

extension GATTProfile {
    /// Protocol v1's service: write commands when the watch allows them.
    public static let protocolV1 = GATTProfile(service: WatchGATT.service, writeCharacteristic: WatchGATT.writeCharacteristic,
                                               notifyCharacteristic: WatchGATT.notifyCharacteristic, writeMode: .withoutResponseWhenAllowed)
}
