/// BlueZ's D-Bus names in one place (bluez/doc/org.bluez.*.rst): the bus name, the manager
/// object, every interface and every error name this project uses.
extension BlueZ {
    public static let service = "org.bluez"
    /// The object with AgentManager1 (and ProfileManager1).
    public static let managerPath = "/org/bluez"
}

/// BlueZ's D-Bus interfaces.
public enum BlueZInterface {
    public static let adapter = "org.bluez.Adapter1"
    public static let device = "org.bluez.Device1"
    public static let gattService = "org.bluez.GattService1"
    public static let gattCharacteristic = "org.bluez.GattCharacteristic1"
    public static let gattManager = "org.bluez.GattManager1"
    public static let leAdvertisingManager = "org.bluez.LEAdvertisingManager1"
    public static let leAdvertisement = "org.bluez.LEAdvertisement1"
    public static let agentManager = "org.bluez.AgentManager1"
    public static let agent = "org.bluez.Agent1"
}

/// BlueZ's D-Bus error names (org.bluez.Error.*).
public enum BlueZErrorName {
    public static let failed = "org.bluez.Error.Failed"
    public static let rejected = "org.bluez.Error.Rejected"
    public static let notReady = "org.bluez.Error.NotReady"
    public static let notSupported = "org.bluez.Error.NotSupported"
    public static let notPermitted = "org.bluez.Error.NotPermitted"
    public static let inProgress = "org.bluez.Error.InProgress"
    public static let alreadyExists = "org.bluez.Error.AlreadyExists"
    public static let invalidOffset = "org.bluez.Error.InvalidOffset"
    public static let alreadyConnected = "org.bluez.Error.AlreadyConnected"
    public static let notConnected = "org.bluez.Error.NotConnected"
    public static let doesNotExist = "org.bluez.Error.DoesNotExist"
    public static let authenticationFailed = "org.bluez.Error.AuthenticationFailed"
    public static let authenticationCanceled = "org.bluez.Error.AuthenticationCanceled"
    public static let authenticationRejected = "org.bluez.Error.AuthenticationRejected"
    public static let authenticationTimeout = "org.bluez.Error.AuthenticationTimeout"
    public static let connectionAttemptFailed = "org.bluez.Error.ConnectionAttemptFailed"
}
