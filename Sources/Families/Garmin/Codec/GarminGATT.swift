import TSModels

/// The GATT side of a Garmin watch (protocol-spec/garmin/garmin.md §1): the Multi-Link (V2)
/// service's first receive/send pair.
public enum GarminGATT {
    public static let service = "6a4e2800-667b-11e3-949a-0800200c9a66"
    /// Watch → host, notified.
    public static let receive = "6a4e2810-667b-11e3-949a-0800200c9a66"
    /// Host → watch, written.
    public static let send = "6a4e2820-667b-11e3-949a-0800200c9a66"
}

extension GATTProfile {
    /// Garmin's Multi-Link pair, written with response as Gadgetbridge writes it (§1): each write
    /// is answered before the next goes, so none overtakes the one before it. Write commands (GBL,
    /// GBR) do over EATT's several bearers: a file's last acknowledgement reached the watch after
    /// the next download request, and the watch sent the new file from the old one's end
    /// (docs/testing.md, "Garmin: a file's last acknowledgement overtaken").
    public static let garmin = GATTProfile(service: GarminGATT.service, writeCharacteristic: GarminGATT.send,
                                           notifyCharacteristic: GarminGATT.receive, writeMode: .withResponse)
}
