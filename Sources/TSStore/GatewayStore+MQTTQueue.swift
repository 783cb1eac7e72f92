import Foundation
import GRDB

/// One MQTT message waiting for the broker's acknowledgement.
public struct QueuedMQTTMessage: Sendable, Hashable {
    public var id: Int64
    public var topic: String
    public var payload: [UInt8]
    public var retain: Bool
    public var createdAt: Date
}

extension GatewayStore {
    /// Queues messages (QoS 1) until the broker acknowledges them. A retained message replaces a
    /// queued, unacknowledged retained message on the same topic: only the newest state matters.
    /// Returns the new rows' ids, in order.
    @discardableResult
    public func enqueueMQTT(_ messages: [(topic: String, payload: [UInt8], retain: Bool)], now: Date = Date()) async throws -> [Int64] {
        try await write { db in
            var ids: [Int64] = []
            for message in messages {
                if message.retain {
                    try db.execute(sql: "DELETE FROM mqttQueue WHERE topic = ? AND retain = 1", arguments: [message.topic])
                }
                try db.execute(sql: "INSERT INTO mqttQueue (topic, payload, retain, createdAt) VALUES (?, ?, ?, ?)",
                               arguments: [message.topic, Data(message.payload), message.retain, Int64(now.timeIntervalSince1970)])
                ids.append(db.lastInsertedRowID)
            }
            return ids
        }
    }

    /// Messages not yet acknowledged, oldest first.
    public func queuedMQTT(limit: Int = 1000) async throws -> [QueuedMQTTMessage] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM mqttQueue ORDER BY id LIMIT ?", arguments: [limit]).map { row in
                QueuedMQTTMessage(id: row["id"], topic: row["topic"], payload: Array((row["payload"] as Data?) ?? Data()),
                                  retain: row["retain"], createdAt: Date(timeIntervalSince1970: TimeInterval(row["createdAt"] as Int64)))
            }
        }
    }

    /// The broker acknowledged these.
    public func removeQueuedMQTT(ids: [Int64]) async throws {
        guard !ids.isEmpty else { return }
        try await write { db in
            for id in ids { try db.execute(sql: "DELETE FROM mqttQueue WHERE id = ?", arguments: [id]) }
        }
    }

    public func queuedMQTTCount() async throws -> Int {
        try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM mqttQueue") ?? 0 }
    }
}
