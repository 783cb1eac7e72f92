/// The GATT side of a Huami band (protocol-spec/huami/huami.md §1).
public enum HuamiGATT {
    /// The two vendor services. The vendor characteristics below are found under them.
    public static let service = "0000fee0-0000-1000-8000-00805f9b34fb"
    public static let secondService = "0000fee1-0000-1000-8000-00805f9b34fb"

    /// `000000XX-0000-3512-2118-0009af100700`.
    public static func vendor(_ number: UInt8) -> String {
        let digits = String(number, radix: 16)
        return "000000" + (digits.count == 1 ? "0" : "") + digits + "-0000-3512-2118-0009af100700"
    }

    /// Configuration: alarms (write, notify).
    public static let configuration = vendor(0x03)
    /// Fetch control: the activity fetch's requests and answers (write, notify).
    public static let fetchControl = vendor(0x04)
    /// Activity data: counter-prefixed sample bytes (notify).
    public static let activityData = vendor(0x05)
    /// Battery (read, notify).
    public static let battery = vendor(0x06)
    /// Auth (write, notify).
    public static let auth = vendor(0x09)

    /// Standard characteristics the band uses.
    public static let currentTime = "00002a2b-0000-1000-8000-00805f9b34fb"
    public static let heartRateMeasurement = "00002a37-0000-1000-8000-00805f9b34fb"
    public static let heartRateControlPoint = "00002a39-0000-1000-8000-00805f9b34fb"
    public static let alertLevel = "00002a06-0000-1000-8000-00805f9b34fb"
}
