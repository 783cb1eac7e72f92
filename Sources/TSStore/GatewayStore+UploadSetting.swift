import Foundation
import GRDB
import TSModels

/// This database feeds an upload outbox: nights are cut in `timeZone` under `statisticsRule`
/// (nil: each watch's own).
public struct UploadSetting: Sendable, Hashable {
    public var timeZone: TimeZone
    public var statisticsRule: StatisticsRule?

    public init(timeZone: TimeZone, statisticsRule: StatisticsRule?) {
        self.timeZone = timeZone
        self.statisticsRule = statisticsRule
    }
}

extension GatewayStore {
    /// Records whether syncs into this database enqueue uploads (nil: they do not).
    public func setUploadSetting(_ setting: UploadSetting?) async throws {
        let now = Int64(Date().timeIntervalSince1970)
        try await write { db in
            guard let setting else {
                try db.execute(sql: "DELETE FROM uploadSetting")
                return
            }
            try db.execute(sql: "INSERT OR REPLACE INTO uploadSetting (id, timeZone, statisticsRule, updatedAt) VALUES (1, ?, ?, ?)",
                           arguments: [setting.timeZone.identifier, setting.statisticsRule.map { Int($0.rawValue) }, now])
        }
    }

    public func uploadSetting() async throws -> UploadSetting? {
        try await pool.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT timeZone, statisticsRule FROM uploadSetting WHERE id = 1") else { return nil }
            let zoneName: String = row["timeZone"]
            guard let zone = TimeZone(identifier: zoneName) else { throw StoreError.corruptValue("upload time zone \"\(zoneName)\"") }
            var rule: StatisticsRule?
            if let number: Int = row["statisticsRule"] {
                guard let known = StatisticsRule(rawValue: UInt8(clamping: number)) else { throw StoreError.corruptValue("upload statistics rule \(number)") }
                rule = known
            }
            return UploadSetting(timeZone: zone, statisticsRule: rule)
        }
    }
}
