import TSGATT
import TSModels

/// SLEEP_QUERY request: records with start in [start, end), streamed in pages.
public struct SleepQuery: Payload {
    public static let openEnd = UInt32.max

    public var start: UInt32
    /// Exclusive; nil = no end.
    public var end: UInt32?
    /// Pages wanted in flight, 1…32.
    public var window: UInt8

    public init(start: UInt32, end: UInt32?, window: UInt8 = 8) {
        self.start = start
        self.end = end
        self.window = window
    }

    public init(from reader: inout ByteReader) throws(ProtocolError) {
        start = try reader.u32("start")
        let endValue = try reader.u32("end")
        end = endValue == Self.openEnd ? nil : endValue
        window = try reader.u8("window")
        try validate()
    }

    public func write(to writer: inout ByteWriter) throws(ProtocolError) {
        try validate()
        writer.u32(start); writer.u32(end ?? Self.openEnd); writer.u8(window)
    }

    func validate() throws(ProtocolError) {
        let effectiveEnd = end ?? Self.openEnd
        guard effectiveEnd > start else {
            throw ProtocolError(.rangeEndNotAfterStart, "query end \(effectiveEnd) is not after its start \(start)")
        }
        guard (1...32).contains(window) else { throw outOfRange("window", window, "1…32") }
    }
}

/// SLEEP_QUERY response: the transfer that follows.
public struct SleepTransfer: Payload {
    public var transferId: UInt16
    public var total: UInt32
    public var recordsPerPage: UInt8
    public var window: UInt8

    public init(transferId: UInt16, total: UInt32, recordsPerPage: UInt8, window: UInt8) {
        self.transferId = transferId
        self.total = total
        self.recordsPerPage = recordsPerPage
        self.window = window
    }

    /// ⌈total / recordsPerPage⌉.
    public var pageCount: Int { (Int(total) + Int(recordsPerPage) - 1) / max(Int(recordsPerPage), 1) }

    public init(from reader: inout ByteReader) throws(ProtocolError) {
        transferId = try reader.u16("transferId")
        total = try reader.u32("total")
        recordsPerPage = try reader.u8("recordsPerPage")
        window = try reader.u8("window")
        try validate()
    }

    public func write(to writer: inout ByteWriter) throws(ProtocolError) {
        try validate()
        writer.u16(transferId); writer.u32(total); writer.u8(recordsPerPage); writer.u8(window)
    }

    func validate() throws(ProtocolError) {
        guard transferId != 0 else { throw outOfRange("transferId", transferId, "1…65535") }
        guard recordsPerPage != 0 else { throw outOfRange("recordsPerPage", recordsPerPage, "1…255") }
        guard (1...32).contains(window) else { throw outOfRange("window", window, "1…32") }
        guard pageCount <= 65_535 else { throw outOfRange("page count", pageCount, "0…65535") }
    }
}

/// SLEEP_PAGE: one page of records of a transfer.
public struct SleepPage: Payload {
    public static let recordSize = 7
    /// Payload bytes before the records.
    public static let headerSize = 6

    public var transferId: UInt16
    public var page: UInt16
    /// The end marker: this is the transfer's last page.
    public var last: Bool
    public var records: [SleepItem]

    public init(transferId: UInt16, page: UInt16, last: Bool, records: [SleepItem]) {
        self.transferId = transferId
        self.page = page
        self.last = last
        self.records = records
    }

    public init(from reader: inout ByteReader) throws(ProtocolError) {
        transferId = try reader.u16("transferId")
        page = try reader.u16("page")
        let flags = try reader.u8("page flags")
        let count = Int(try reader.u8("record count"))
        try checkReserved(flags, allowed: 1, "page flags")
        guard count > 0 else { throw ProtocolError(.emptyPage, "page \(page) of transfer \(transferId) holds no records") }
        last = flags & 1 != 0
        records = []
        records.reserveCapacity(count)
        for index in 0..<count {
            let stageValue = try reader.u8("record \(index) stage")
            let start = try reader.u32("record \(index) start")
            let duration = try reader.u16("record \(index) duration")
            guard let stage = SleepStage(rawValue: stageValue) else {
                throw ProtocolError(.unknownSleepStage, "record \(index): sleep stage \(stageValue) is unknown (0 awake … 3 REM)")
            }
            guard duration > 0 else { throw ProtocolError(.zeroDuration, "record \(index) at \(start) has duration 0") }
            records.append(SleepItem(stage: stage, start: Int64(start), duration: Int64(duration)))
        }
    }

    public func write(to writer: inout ByteWriter) throws(ProtocolError) {
        guard !records.isEmpty else { throw ProtocolError(.emptyPage, "page \(page) of transfer \(transferId) holds no records") }
        guard records.count <= 255 else { throw outOfRange("record count", records.count, "1…255") }
        writer.u16(transferId); writer.u16(page); writer.u8(last ? 1 : 0); writer.u8(UInt8(records.count))
        for (index, record) in records.enumerated() {
            guard let start = UInt32(exactly: record.start) else { throw outOfRange("record \(index) start", record.start, "0…4294967295") }
            guard record.duration != 0 else { throw ProtocolError(.zeroDuration, "record \(index) at \(start) has duration 0") }
            guard let duration = UInt16(exactly: record.duration) else { throw outOfRange("record \(index) duration", record.duration, "1…65535") }
            writer.u8(record.stage.rawValue); writer.u32(start); writer.u16(duration)
        }
    }
}

/// SLEEP_PAGE_ACK: cumulative acknowledgement of a transfer's pages.
public struct SleepPageAck: Payload {
    public var transferId: UInt16
    /// Every page below this has been received.
    public var nextExpected: UInt16
    /// Resend from `nextExpected` now (a gap or a corrupt frame was seen).
    public var retransmit: Bool

    public init(transferId: UInt16, nextExpected: UInt16, retransmit: Bool) {
        self.transferId = transferId
        self.nextExpected = nextExpected
        self.retransmit = retransmit
    }

    public init(from reader: inout ByteReader) throws(ProtocolError) {
        transferId = try reader.u16("transferId")
        nextExpected = try reader.u16("nextExpected")
        let flags = try reader.u8("ack flags")
        try checkReserved(flags, allowed: 1, "ack flags")
        retransmit = flags & 1 != 0
    }

    public func write(to writer: inout ByteWriter) throws(ProtocolError) {
        writer.u16(transferId); writer.u16(nextExpected); writer.u8(retransmit ? 1 : 0)
    }
}

/// SLEEP_COMMIT request: `count` records with start in [start, end) are durably stored.
public struct SleepCommit: Payload {
    public var start: UInt32
    public var end: UInt32
    public var count: UInt32

    public init(start: UInt32, end: UInt32, count: UInt32) {
        self.start = start
        self.end = end
        self.count = count
    }

    public init(from reader: inout ByteReader) throws(ProtocolError) {
        start = try reader.u32("start")
        end = try reader.u32("end")
        count = try reader.u32("count")
        try validate()
    }

    public func write(to writer: inout ByteWriter) throws(ProtocolError) {
        try validate()
        writer.u32(start); writer.u32(end); writer.u32(count)
    }

    func validate() throws(ProtocolError) {
        guard end > start else { throw ProtocolError(.rangeEndNotAfterStart, "commit end \(end) is not after its start \(start)") }
    }
}

public struct SleepCommitResult: Payload {
    /// Records the watch deleted; 0 for watches that keep synced data.
    public var deleted: UInt32

    public init(deleted: UInt32) { self.deleted = deleted }
    public init(from reader: inout ByteReader) throws(ProtocolError) { deleted = try reader.u32("deleted") }
    public func write(to writer: inout ByteWriter) throws(ProtocolError) { writer.u32(deleted) }
}

public struct SleepAbort: Payload {
    public var transferId: UInt16

    public init(transferId: UInt16) { self.transferId = transferId }
    public init(from reader: inout ByteReader) throws(ProtocolError) { transferId = try reader.u16("transferId") }
    public func write(to writer: inout ByteWriter) throws(ProtocolError) { writer.u16(transferId) }
}
