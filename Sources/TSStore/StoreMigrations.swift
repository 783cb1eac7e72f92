import GRDB

/// Every schema change, in order. New versions append a migration; none is ever edited.
enum StoreMigrations {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: watches, sleep records, cursors, alarms, monitors") { db in
            try db.create(table: "watch") { t in
                t.primaryKey("id", .text)
                t.column("name", .text)
                t.column("model", .text)
                t.column("firmware", .text)
                t.column("capabilities", .text)           // capabilities as JSON (StoredCapabilities)
                t.column("firstSeen", .integer).notNull()
                t.column("lastSeen", .integer).notNull()
                t.column("lastSync", .integer)
            }
            try db.create(table: "sleepRecord") { t in
                t.column("watchId", .text).notNull().references("watch", onDelete: .cascade)
                t.column("start", .integer).notNull()
                t.column("stage", .integer).notNull()
                t.column("duration", .integer).notNull()
                t.column("receivedAt", .integer).notNull()
                t.primaryKey(["watchId", "start", "stage"])
            }
            try db.create(table: "syncCursor") { t in
                t.primaryKey("watchId", .text).references("watch", onDelete: .cascade)
                t.column("rangeStart", .integer).notNull()
                t.column("upTo", .integer).notNull()
                t.column("committedUpTo", .integer)
                t.column("updatedAt", .integer).notNull()
            }
            try db.create(table: "alarmSnapshot") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("watchId", .text).notNull().references("watch", onDelete: .cascade)
                t.column("takenAt", .integer).notNull()
                t.column("origin", .text).notNull()
                t.column("alarms", .text).notNull()       // [Alarm] as JSON
            }
            try db.create(index: "alarmSnapshotByWatch", on: "alarmSnapshot", columns: ["watchId", "id"])
            try db.create(table: "monitorConfig") { t in
                t.column("watchId", .text).notNull().references("watch", onDelete: .cascade)
                t.column("type", .integer).notNull()
                t.column("config", .text).notNull()       // MonitorConfig as JSON
                t.column("updatedAt", .integer).notNull()
                t.primaryKey(["watchId", "type"])
            }
        }
        migrator.registerMigration("v2: live sleep sessions") { db in
            try db.create(table: "liveSession") { t in
                t.primaryKey("id", .text)
                t.column("watchId", .text).notNull().references("watch", onDelete: .cascade)
                t.column("state", .text).notNull()        // open, closed, complete
                t.column("startTime", .integer).notNull()
                t.column("endTime", .integer)
                t.column("unexpectedEndTime", .integer)
                t.column("interrupted", .boolean).notNull()
                t.column("interruptions", .integer).notNull()
                t.column("fellAsleepAt", .integer)
                t.column("wokeUpAt", .integer)
                t.column("lastActivity", .integer).notNull()
                t.column("timeZone", .text).notNull()
            }
            try db.create(index: "liveSessionByWatch", on: "liveSession", columns: ["watchId", "startTime"])
            try db.create(table: "liveStage") { t in
                t.column("sessionId", .text).notNull().references("liveSession", onDelete: .cascade)
                t.column("time", .integer).notNull()
                t.column("stage", .integer).notNull()
                t.column("kind", .text).notNull()
                t.primaryKey(["sessionId", "time", "kind"])
            }
        }
        migrator.registerMigration("v3: upload outbox") { db in
            // One row per thing to upload (a synced night), written in the same transaction as
            // the data it describes. Times are Unix seconds (REAL: backoff needs sub-seconds).
            try db.create(table: "uploadOutbox") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("sourceId", .text).notNull().unique()  // deduplication key, also sent to the server
                t.column("watchId", .text).notNull()             // no foreign key: forgetting a watch keeps its uploads
                t.column("kind", .text).notNull()                // sleepNight
                t.column("payload", .text).notNull()             // the JSON body, built when enqueued
                t.column("createdAt", .double).notNull()
                t.column("status", .text).notNull()              // pending, synced, failed
                t.column("attempts", .integer).notNull().defaults(to: 0)
                t.column("lastError", .text)
                t.column("nextAttemptAt", .double)
                t.column("syncedAt", .double)
                t.column("backendId", .text)
                t.column("httpStatus", .integer)
            }
            try db.create(index: "uploadOutboxDue", on: "uploadOutbox", columns: ["status", "nextAttemptAt", "id"])
            // Per watch: up to where the synced ranges have been turned into outbox events.
            try db.create(table: "uploadWatermark") { t in
                t.primaryKey("watchId", .text)
                t.column("consideredUpTo", .integer).notNull()
                t.column("updatedAt", .integer).notNull()
            }
        }
        migrator.registerMigration("v4: MQTT queue") { db in
            try db.create(table: "mqttQueue") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("topic", .text).notNull()
                t.column("payload", .blob).notNull()
                t.column("retain", .boolean).notNull()
                t.column("createdAt", .integer).notNull()
            }
        }
        migrator.registerMigration("v5: upload setting") { db in
            // Whether nights synced into this database feed an upload outbox, and how nights are
            // cut. Written by `tsgateway serve` from its `upload:` section, read by every writer
            // (the CLI's own syncs too), so whoever syncs, the outbox gets the nights.
            try db.create(table: "uploadSetting") { t in
                t.primaryKey("id", .integer).check { $0 == 1 }
                t.column("timeZone", .text).notNull()
                t.column("statisticsRule", .integer)
                t.column("updatedAt", .integer).notNull()
            }
        }
        migrator.registerMigration("v6: heart-rate samples") { db in
            // Samples from a watch's Heart Rate Measurement notifications while the daemon holds
            // its link. One per watch and millisecond of arrival: a sample delivered twice (a
            // replayed notification, a retried write) is kept once. Pruned to the configured
            // retention.
            try db.create(table: "heartRateSample") { t in
                t.column("watchId", .text).notNull().references("watch", onDelete: .cascade)
                t.column("timeMs", .integer).notNull()
                t.column("bpm", .integer).notNull()
                t.column("sensorContact", .text).notNull()
                t.column("energyExpended", .integer)
                t.column("rrIntervals", .text).notNull()
                t.primaryKey(["watchId", "timeMs"])
            }
        }
        migrator.registerMigration("v7: smart wake from the gateway") { db in
            // The smart window of each alarm slot the gateway wakes from (minutes before the
            // alarm's time), and each ringing it settled: rung, or left to the watch. A settled
            // ringing is never rung again, across restarts.
            try db.create(table: "smartWakeWindow") { t in
                t.column("watchId", .text).notNull().references("watch", onDelete: .cascade)
                t.column("slot", .integer).notNull()
                t.column("minutes", .integer).notNull()
                t.primaryKey(["watchId", "slot"])
            }
            try db.create(table: "smartWakeDecision") { t in
                t.column("watchId", .text).notNull().references("watch", onDelete: .cascade)
                t.column("slot", .integer).notNull()
                t.column("alarmTime", .integer).notNull()
                t.column("outcome", .text).notNull()
                t.column("stage", .integer)
                t.column("decidedAt", .integer).notNull()
                t.primaryKey(["watchId", "slot", "alarmTime"])
            }
        }
        migrator.registerMigration("v8: the dialect a watch speaks") { db in
            // Remembered from its last connect (or pair), so the next link opens in it.
            try db.alter(table: "watch") { t in t.add(column: "dialect", .text) }
        }
        return migrator
    }
}
