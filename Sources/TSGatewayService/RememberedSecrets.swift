import Foundation
import TSDevice
import TSFamilies
import TSFamilyKit
import TSFiles
import TSModels

/// Pairing secrets a watch takes on every connect (`PairingCredential.neededOnEveryConnect`,
/// a band's auth key): `pair` keeps the one it was given beside the database, one file a watch and
/// secret, readable by its owner only (a 0700 directory, 0600 files); the commands after it, and
/// `serve` for a watch whose configuration has no secret, read it back. Never printed or logged:
/// a `PairingSecret` describes itself without its text.
public enum RememberedSecrets {
    public static func directory(databasePath: String) -> String {
        (databasePath as NSString).deletingLastPathComponent + "/pairing-secrets"
    }

    public static func path(watch: WatchID, key: String, databasePath: String) -> String {
        directory(databasePath: databasePath) + "/\(watch.rawValue.replacingOccurrences(of: ":", with: "")).\(key)"
    }

    public static func save(_ secret: PairingSecret, watch: WatchID, databasePath: String) throws(FileWriteError) {
        try PrivateFile.prepareDirectory(directory(databasePath: databasePath), mode: 0o600)
        try PrivateFile.write(secret.text, to: path(watch: watch, key: secret.key, databasePath: databasePath))
    }

    /// The secret of `credential` kept for `watch`; nil when `pair` kept none.
    public static func load(_ credential: PairingCredential, watch: WatchID, databasePath: String) -> PairingSecret? {
        guard let data = FileManager.default.contents(atPath: path(watch: watch, key: credential.key, databasePath: databasePath)),
              let text = String(data: data, encoding: .utf8) else { return nil }
        return PairingSecret(key: credential.key, text: text)
    }
}

extension GatewayConfiguration {
    /// The secret `entry`'s configured dialect takes on every connect; nil: it takes none (or no
    /// dialect is configured, which `serve` then resolves from the watch).
    func everyConnectCredential(of entry: WatchEntry) -> PairingCredential? {
        guard let name = entry.dialect, let credential = try? WatchFamilies.dialect(named: name).credential, credential.neededOnEveryConnect else { return nil }
        return credential
    }

    /// The secret `pair` kept beside this configuration's database for `entry`, when its dialect takes one on every connect.
    public func rememberedSecret(of entry: WatchEntry) -> PairingSecret? {
        everyConnectCredential(of: entry).flatMap { RememberedSecrets.load($0, watch: entry.address, databasePath: database) }
    }

    /// What `serve --check` refuses: each watch (not simulated) whose dialect takes a secret on
    /// every connect that neither the configuration nor `pair` gave, with what to add.
    public func watchesWithoutTheirSecret() -> [String] {
        watches.compactMap { entry in
            guard !entry.simulated, entry.pairingSecret == nil, let credential = everyConnectCredential(of: entry),
                  rememberedSecret(of: entry) == nil, let dialect = entry.dialect else { return nil }
            return "watch \(entry.address)\(entry.name.map { " (\($0))" } ?? ""): \(credential.holder) takes its \(credential.key) on every connect, "
                + "and neither this file nor the service's data directory (\(RememberedSecrets.directory(databasePath: database))) holds one; "
                + "add `\(credential.key): …` under it (\(credential.meaning)), or pair it as the service's user with "
                + "`tsgateway pair \(entry.address) --dialect \(dialect) --\(credential.key) … --db \(database)`"
        }
    }
}
