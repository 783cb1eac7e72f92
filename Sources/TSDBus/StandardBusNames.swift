/// The names the D-Bus specification defines: the message bus's own name, path and interface,
/// and the standard interfaces every object may have. The standard error names are `BusError`'s
/// constants (`BusError.failed`, `BusError.addressInUse`, …). Every module uses these instead of
/// spelling the names out.
public enum StandardBusNames {
    /// The message bus itself: its well-known name and its interface (`RequestName`,
    /// `AddMatch`, `NameOwnerChanged`, …).
    public static let bus = "org.freedesktop.DBus"
    /// The message bus's object path.
    public static let busPath = "/org/freedesktop/DBus"
    /// The interface of messages libdbus makes up locally (`Disconnected`).
    public static let local = "org.freedesktop.DBus.Local"

    public static let properties = "org.freedesktop.DBus.Properties"
    public static let objectManager = "org.freedesktop.DBus.ObjectManager"
    public static let introspectable = "org.freedesktop.DBus.Introspectable"
    public static let peer = "org.freedesktop.DBus.Peer"
}
