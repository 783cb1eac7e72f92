import TSDevice
import TSModels

/// The configuration as `tsgateway serve` reads it: a `dialect:` names one this build registers
/// (`WatchDialects`). The reader itself takes the list, so it builds without the device layer
/// (the configuration fuzz target, scripts/fuzz).
extension GatewayConfiguration {
    public static func load(path: String) throws(ConfigurationError) -> GatewayConfiguration {
        try load(path: path, dialects: WatchDialects.terms)
    }

    public static func parse(_ text: String, file: String) throws(ConfigurationError) -> GatewayConfiguration {
        try parse(text, file: file, dialects: WatchDialects.terms)
    }
}
