import TSDevice
import TSFamilies
import TSFamilyKit
import TSModels

/// The configuration as `tsgateway serve` reads it: a `dialect:` names one this build registers
/// (its family's line in `WatchFamilies`). The reader itself takes the list, so it builds without the device layer
/// (the configuration fuzz target, scripts/fuzz).
extension GatewayConfiguration {
    public static func load(path: String) throws(ConfigurationError) -> GatewayConfiguration {
        return try load(path: path, dialects: WatchFamilies.dialectTerms)
    }

    public static func parse(_ text: String, file: String) throws(ConfigurationError) -> GatewayConfiguration {
        return try parse(text, file: file, dialects: WatchFamilies.dialectTerms)
    }
}
