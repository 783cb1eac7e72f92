import Foundation
import GRDB
import TSModels

extension GatewayStore {
    /// Stores heart-rate samples of a watch. A sample already stored (same watch, same
    /// millisecond of arrival) is not stored twice. Returns how many were new.
    @discardableResult
    public func storeHeartRate(_ samples: [HeartRateSample], watch: WatchID) async throws -> Int {
        guard !samples.isEmpty else { return 0 }
        let now = Int64(Date().timeIntervalSince1970)
        return try await write { db in
            try Self.ensureWatch(db, id: watch, now: now)
            var inserted = 0
            for sample in samples {
                try db.execute(sql: """
                    INSERT INTO heartRateSample (watchId, timeMs, bpm, sensorContact, energyExpended, rrIntervals)
                    VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
                    """, arguments: [watch.rawValue, Self.milliseconds(sample.time), sample.bpm, sample.sensorContact.rawValue,
                                     sample.energyExpended, sample.rrIntervals.map(String.init).joined(separator: " ")])
                inserted += db.changesCount
            }
            return inserted
        }
    }

    /// The samples of a watch received in [from, to), oldest first.
    public func heartRate(watch: WatchID, from: Date = .distantPast, to: Date = .distantFuture) async throws -> [HeartRateSample] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT timeMs, bpm, sensorContact, energyExpended, rrIntervals FROM heartRateSample
                WHERE watchId = ? AND timeMs >= ? AND timeMs < ? ORDER BY timeMs
                """, arguments: [watch.rawValue, Self.milliseconds(from), Self.milliseconds(to)]).map(Self.sample)
        }
    }

    /// The summary of the samples of a watch received in each span [start, end) (Unix seconds),
    /// aggregated by the database in one query per 500 spans rather than read sample by sample;
    /// a span without samples has no entry.
    public func heartRateSummaries(watch: WatchID, spans: some Collection<Range<Int64>>) async throws -> [Range<Int64>: HeartRateSummary] {
        let distinct = Array(Set(spans.filter { !$0.isEmpty }))
        guard !distinct.isEmpty else { return [:] }
        return try await pool.read { db in
            var summaries: [Range<Int64>: HeartRateSummary] = [:]
            for start in stride(from: 0, to: distinct.count, by: 500) {
                let chunk = Array(distinct[start..<min(start + 500, distinct.count)])
                var arguments: StatementArguments = []
                for (index, span) in chunk.enumerated() {
                    arguments += [index, Self.milliseconds(seconds: span.lowerBound), Self.milliseconds(seconds: span.upperBound)]
                }
                arguments += [watch.rawValue]
                let rows = try Row.fetchAll(db, sql: """
                    WITH span(position, lower, upper) AS (VALUES \(Array(repeating: "(?, ?, ?)", count: chunk.count).joined(separator: ", ")))
                    SELECT span.position, min(h.bpm) AS minimum, sum(h.bpm) AS total, max(h.bpm) AS maximum, count(*) AS samples
                    FROM span JOIN heartRateSample h ON h.watchId = ? AND h.timeMs >= span.lower AND h.timeMs < span.upper
                    GROUP BY span.position
                    """, arguments: arguments)
                for row in rows {
                    let position: Int = row["position"]
                    guard chunk.indices.contains(position) else { continue }
                    summaries[chunk[position]] = HeartRateSummary(minimum: row["minimum"], total: row["total"], maximum: row["maximum"], samples: row["samples"])
                }
            }
            return summaries
        }
    }

    /// Deletes every watch's samples received before `cutoff`; returns how many went.
    @discardableResult
    public func pruneHeartRate(before cutoff: Date) async throws -> Int {
        try await write { db in
            try db.execute(sql: "DELETE FROM heartRateSample WHERE timeMs < ?", arguments: [Self.milliseconds(cutoff)])
            return db.changesCount
        }
    }

    static func milliseconds(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1000).rounded(.down)
        return value >= 9.2e18 ? .max : value <= -9.2e18 ? .min : Int64(value)
    }

    static func milliseconds(seconds: Int64) -> Int64 {
        let (value, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        return overflow ? (seconds < 0 ? .min : .max) : value
    }

    static func sample(_ row: Row) throws -> HeartRateSample {
        let contactName: String = row["sensorContact"]
        guard let contact = SensorContact(rawValue: contactName) else { throw StoreError.corruptValue("heart-rate sensor contact \"\(contactName)\"") }
        let intervalsText: String = row["rrIntervals"]
        var intervals: [Int] = []
        for word in intervalsText.split(separator: " ") {
            guard let interval = Int(word) else { throw StoreError.corruptValue("heart-rate RR interval \"\(word)\"") }
            intervals.append(interval)
        }
        let milliseconds: Int64 = row["timeMs"]
        return HeartRateSample(time: Date(timeIntervalSince1970: Double(milliseconds) / 1000), bpm: row["bpm"], sensorContact: contact,
                               energyExpended: row["energyExpended"], rrIntervals: intervals)
    }
}
