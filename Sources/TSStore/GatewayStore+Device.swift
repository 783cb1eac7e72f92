import Foundation
import GRDB
import TSModels

/// One version of a watch's alarm table and why it changed.
public struct AlarmSnapshot: Sendable, Hashable {
    public var takenAt: Date
    public var origin: AlarmTableOrigin
    public var alarms: [Alarm]
}

extension GatewayStore {
    /// Records what is known of a watch after connecting.
    public func saveWatch(id: WatchID, name: String?, info: DeviceInfo) async throws {
        let now = Int64(Date().timeIntervalSince1970)
        let capabilities = String(decoding: try JSONCoding.recordEncoder(sortedKeys: false).encode(info.capabilities), as: UTF8.self)
        try await write { db in
            try Self.ensureWatch(db, id: id, now: now)
            try db.execute(sql: "UPDATE watch SET name = COALESCE(?, name), model = ?, firmware = ?, capabilities = ?, dialect = COALESCE(?, dialect), lastSeen = ? WHERE id = ?",
                           arguments: [name, info.model, info.firmware, capabilities, info.dialect?.rawValue, now, id.rawValue])
        }
    }

    public func markSynced(watch: WatchID, at date: Date = Date()) async throws {
        try await write { db in
            try db.execute(sql: "UPDATE watch SET lastSync = ? WHERE id = ?", arguments: [Int64(date.timeIntervalSince1970), watch.rawValue])
        }
    }

    public func watches() async throws -> [StoredWatch] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM watch ORDER BY firstSeen, id").map { row in
                var info: DeviceInfo?
                if let json: String = row["capabilities"], let model: String = row["model"], let firmware: String = row["firmware"] {
                    let capabilities = try StoredCapabilities.decode(json)
                    info = DeviceInfo(model: model, firmware: firmware, capabilities: capabilities,
                                      dialect: (row["dialect"] as String?).map(Dialect.init(rawValue:)))
                }
                return StoredWatch(
                    id: try row.watchID("id"), name: row["name"], info: info,
                    firstSeen: Date(timeIntervalSince1970: TimeInterval(row["firstSeen"] as Int64)),
                    lastSeen: Date(timeIntervalSince1970: TimeInterval(row["lastSeen"] as Int64)),
                    lastSync: (row["lastSync"] as Int64?).map { Date(timeIntervalSince1970: TimeInterval($0)) })
            }
        }
    }

    /// Adds a snapshot when the table differs from the latest one; returns whether it did. An
    /// edit the watch announced (`watch`, `app`, `onceAlarmFired`) whose table a read stored first
    /// (the read reached the watch after the edit and was saved before the announcement was)
    /// takes that snapshot over: the history says who changed the table, and a read changes nothing.
    @discardableResult
    public func saveAlarmSnapshot(_ alarms: [Alarm], watch: WatchID, origin: AlarmTableOrigin) async throws -> Bool {
        let now = Int64(Date().timeIntervalSince1970)
        let json = String(decoding: try JSONCoding.recordEncoder().encode(alarms.sorted { $0.slot < $1.slot }), as: UTF8.self)
        return try await write { db in
            try Self.ensureWatch(db, id: watch, now: now)
            let latest = try Row.fetchOne(db, sql: "SELECT id, origin, alarms FROM alarmSnapshot WHERE watchId = ? ORDER BY id DESC LIMIT 1", arguments: [watch.rawValue])
            if let latest, latest["alarms"] as String == json {
                guard Self.announcedOrigins.contains(origin), latest["origin"] as String == AlarmTableOrigin.read.rawValue else { return false }
                try db.execute(sql: "UPDATE alarmSnapshot SET origin = ? WHERE id = ?", arguments: [origin.rawValue, latest["id"] as Int64])
                return true
            }
            try db.execute(sql: "INSERT INTO alarmSnapshot (watchId, takenAt, origin, alarms) VALUES (?, ?, ?, ?)",
                           arguments: [watch.rawValue, now, origin.rawValue, json])
            return true
        }
    }

    /// Origins of a table the watch announced as changed on its side.
    static let announcedOrigins: Set<AlarmTableOrigin> = [.watch, .app, .onceAlarmFired]

    /// Every stored version of the alarm table, oldest first.
    public func alarmHistory(watch: WatchID) async throws -> [AlarmSnapshot] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT takenAt, origin, alarms FROM alarmSnapshot WHERE watchId = ? ORDER BY id", arguments: [watch.rawValue])
                .map(Self.alarmSnapshot)
        }
    }

    /// The latest stored version of the alarm table; nil before any.
    public func latestAlarmSnapshot(watch: WatchID) async throws -> AlarmSnapshot? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT takenAt, origin, alarms FROM alarmSnapshot WHERE watchId = ? ORDER BY id DESC LIMIT 1", arguments: [watch.rawValue])
                .map(Self.alarmSnapshot)
        }
    }

    private static func alarmSnapshot(_ row: Row) throws -> AlarmSnapshot {
        let json: String = row["alarms"], originText: String = row["origin"]
        guard let origin = AlarmTableOrigin(stored: originText) else { throw StoreError.corruptValue("alarm history origin \"\(originText)\"") }
        return AlarmSnapshot(takenAt: Date(timeIntervalSince1970: TimeInterval(row["takenAt"] as Int64)), origin: origin,
                             alarms: try JSONDecoder().decode([Alarm].self, from: Data(json.utf8)))
    }

    public func saveMonitorConfig(_ config: MonitorConfig, watch: WatchID) async throws {
        let now = Int64(Date().timeIntervalSince1970)
        let json = String(decoding: try JSONCoding.recordEncoder(sortedKeys: false).encode(config), as: UTF8.self)
        try await write { db in
            try Self.ensureWatch(db, id: watch, now: now)
            try db.execute(sql: """
                INSERT INTO monitorConfig (watchId, type, config, updatedAt) VALUES (?, ?, ?, ?)
                ON CONFLICT(watchId, type) DO UPDATE SET config = excluded.config, updatedAt = excluded.updatedAt
                """, arguments: [watch.rawValue, Int(config.type.rawValue), json, now])
        }
    }

    public func monitorConfigs(watch: WatchID) async throws -> [MonitorConfig] {
        try await pool.read { db in
            try String.fetchAll(db, sql: "SELECT config FROM monitorConfig WHERE watchId = ? ORDER BY type", arguments: [watch.rawValue])
                .map { try JSONDecoder().decode(MonitorConfig.self, from: Data($0.utf8)) }
        }
    }
}
