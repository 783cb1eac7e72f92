/// The release of tsgateway: `tsgateway --version`, the daemon's D-Bus `Version` property and the
/// gateway's device in Home Assistant all say this.
public enum GatewayVersion {
    public static let current = "0.3.0"
}
