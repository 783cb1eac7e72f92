import Foundation
import TSFiles
import TSModels

/// Pairing secrets a watch takes on every connect (`PairingCredential.neededOnEveryConnect`,
/// Huami's auth key): `pair` keeps the one it was given beside the database, one file a watch and
/// secret, readable by its owner only (a 0700 directory, 0600 files); the commands after it read
/// it back. Never printed or logged: a `PairingSecret` describes itself without its text.
enum RememberedSecrets {
    static func directory(databasePath: String) -> String {
        (databasePath as NSString).deletingLastPathComponent + "/pairing-secrets"
    }

    static func path(watch: WatchID, key: String, databasePath: String) -> String {
        directory(databasePath: databasePath) + "/\(watch.rawValue.replacingOccurrences(of: ":", with: "")).\(key)"
    }

    static func save(_ secret: PairingSecret, watch: WatchID, databasePath: String) throws(FileWriteError) {
        try PrivateFile.prepareDirectory(directory(databasePath: databasePath), mode: 0o600)
        try PrivateFile.write(secret.text, to: path(watch: watch, key: secret.key, databasePath: databasePath))
    }

    /// The secret of `credential` kept for `watch`; nil when `pair` kept none.
    static func load(_ credential: PairingCredential, watch: WatchID, databasePath: String) -> PairingSecret? {
        guard let data = FileManager.default.contents(atPath: path(watch: watch, key: credential.key, databasePath: databasePath)),
              let text = String(data: data, encoding: .utf8) else { return nil }
        return PairingSecret(key: credential.key, text: text)
    }
}
