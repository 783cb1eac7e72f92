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
                t.column("capabilities", .text)           // DeviceCapabilities as JSON
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
        return migrator
    }
}
