/// Reads FIT files (protocol-spec/garmin/garmin.md §9), chained ones included: each file's header
/// and its CRC, the file's CRC, definitions (either byte order, developer fields), data messages
/// and compressed-timestamp headers, which watches write and Garmin's Python decoder refuses.
/// Every defect is a `GarminError` naming where it was; nothing is guessed.
public enum FITDecoder {
    public static func decode(_ bytes: [UInt8]) throws(GarminError) -> [FITFile] {
        guard !bytes.isEmpty else { throw GarminError(.fitHeaderInvalid, "an empty FIT file") }
        var files: [FITFile] = []
        var at = 0
        while at < bytes.count {
            let (file, next) = try decodeOne(bytes, at: at, index: files.count)
            files.append(file)
            at = next
        }
        return files
    }

    struct Definition {
        var global: UInt16
        var bigEndian: Bool
        var fields: [(number: UInt8, size: Int, type: UInt8)]
        var developer: [(number: UInt8, size: Int, index: UInt8)]
    }

    static func decodeOne(_ bytes: [UInt8], at start: Int, index: Int) throws(GarminError) -> (FITFile, Int) {
        let which = index == 0 ? "the FIT file" : "chained FIT file \(index + 1)"
        let size = Int(bytes[start])
        guard size == 12 || size == 14 else {
            throw GarminError(.fitHeaderInvalid, "\(which) has a header of \(size) bytes; a FIT header has 12 or 14")
        }
        guard start + size <= bytes.count else {
            throw GarminError(.fitTruncated, "\(which) ends inside its \(size)-byte header")
        }
        guard Array(bytes[(start + 8)..<(start + 12)]) == Array(".FIT".utf8) else {
            throw GarminError(.fitHeaderInvalid, "\(which) lacks the \".FIT\" mark at bytes 8–11")
        }
        if size == 14 {
            let sent = read16(bytes, start + 12, bigEndian: false)
            let computed = GarminCRC.checksum(bytes[start..<(start + 12)])
            // 0 means the writer did not compute one.
            guard sent == 0 || sent == computed else {
                throw GarminError(.fitHeaderCRCMismatch, "\(which)'s header CRC is \(hex16(sent)), its bytes give \(hex16(computed))")
            }
        }
        let header = FITHeader(size: UInt8(size), protocolVersion: bytes[start + 1], profileVersion: read16(bytes, start + 2, bigEndian: false),
                               dataSize: read32(bytes, start + 4, bigEndian: false))
        let dataStart = start + size
        let dataEnd = dataStart + Int(header.dataSize)
        guard dataEnd + 2 <= bytes.count else {
            throw GarminError(.fitTruncated, "\(which) announces \(header.dataSize) data bytes and a CRC, but \(bytes.count - dataStart) bytes follow its header")
        }
        let sent = read16(bytes, dataEnd, bigEndian: false)
        let computed = GarminCRC.checksum(bytes[start..<dataEnd])
        guard sent == computed else {
            throw GarminError(.fitCRCMismatch, "\(which)'s CRC is \(hex16(sent)), its bytes give \(hex16(computed))")
        }
        var definitions: [UInt8: Definition] = [:]
        var messages: [FITMessage] = []
        var lastTimestamp: UInt32?
        var at = dataStart
        func need(_ count: Int, _ what: String, record: Int) throws(GarminError) {
            guard at + count <= dataEnd else {
                throw GarminError(.fitTruncated, "\(which): \(what) of the record at data byte \(record) runs past the \(header.dataSize) data bytes")
            }
        }
        while at < dataEnd {
            let recordHeader = bytes[at]
            let recordAt = at - dataStart
            at += 1
            if recordHeader & 0x80 != 0 {
                let local = (recordHeader >> 5) & 0x03
                guard let definition = definitions[local] else {
                    throw GarminError(.fitUndefinedLocalType, "\(which): a compressed-timestamp record at data byte \(recordAt) uses local type \(local), which no definition before it gave")
                }
                guard let last = lastTimestamp else {
                    throw GarminError(.fitCompressedWithoutTimestamp, "\(which): a compressed-timestamp record at data byte \(recordAt) comes before any full timestamp")
                }
                let offset = UInt32(recordHeader & 0x1F)
                var time = (last & ~0x1F) &+ offset
                if offset < last & 0x1F { time &+= 0x20 }
                lastTimestamp = time
                var message = try data(definition, bytes, at: &at, end: dataEnd, which: which)
                message.fields[FITField.timestamp] = .unsigned(UInt64(time))
                messages.append(message)
            } else if recordHeader & 0x40 != 0 {
                let local = recordHeader & 0x0F
                try need(5, "the definition", record: recordAt)
                let architecture = bytes[at + 1]
                guard architecture <= 1 else {
                    throw GarminError(.fitDefinitionInvalid, "\(which): the definition at data byte \(recordAt) names architecture \(architecture); 0 and 1 are the byte orders")
                }
                let bigEndian = architecture == 1
                let global = read16(bytes, at + 2, bigEndian: bigEndian)
                let count = Int(bytes[at + 4])
                at += 5
                try need(count * 3, "the \(count) field definitions", record: recordAt)
                var fields: [(UInt8, Int, UInt8)] = []
                for field in 0..<count {
                    let size = Int(bytes[at + 3 * field + 1])
                    guard size > 0 else {
                        throw GarminError(.fitDefinitionInvalid, "\(which): field \(bytes[at + 3 * field]) of the definition at data byte \(recordAt) has size 0")
                    }
                    fields.append((bytes[at + 3 * field], size, bytes[at + 3 * field + 2]))
                }
                at += count * 3
                var developer: [(UInt8, Int, UInt8)] = []
                if recordHeader & 0x20 != 0 {
                    try need(1, "the developer field count", record: recordAt)
                    let developerCount = Int(bytes[at])
                    at += 1
                    try need(developerCount * 3, "the \(developerCount) developer field definitions", record: recordAt)
                    for field in 0..<developerCount {
                        developer.append((bytes[at + 3 * field], Int(bytes[at + 3 * field + 1]), bytes[at + 3 * field + 2]))
                    }
                    at += developerCount * 3
                }
                definitions[local] = Definition(global: global, bigEndian: bigEndian, fields: fields.map { (number: $0.0, size: $0.1, type: $0.2) },
                                                developer: developer.map { (number: $0.0, size: $0.1, index: $0.2) })
            } else {
                let local = recordHeader & 0x0F
                guard let definition = definitions[local] else {
                    throw GarminError(.fitUndefinedLocalType, "\(which): a data record at data byte \(recordAt) uses local type \(local), which no definition before it gave")
                }
                let message = try data(definition, bytes, at: &at, end: dataEnd, which: which)
                if let time = message.timestamp { lastTimestamp = time }
                messages.append(message)
            }
        }
        return (FITFile(header: header, messages: messages), dataEnd + 2)
    }

    static func data(_ definition: Definition, _ bytes: [UInt8], at: inout Int, end: Int, which: String) throws(GarminError) -> FITMessage {
        let length = definition.fields.reduce(0) { $0 + $1.size } + definition.developer.reduce(0) { $0 + $1.size }
        guard at + length <= end else {
            throw GarminError(.fitTruncated, "\(which): a message \(definition.global) of \(length) bytes runs past the data")
        }
        var fields: [UInt8: FITValue] = [:]
        for field in definition.fields {
            fields[field.number] = value(Array(bytes[at..<(at + field.size)]), type: field.type, bigEndian: definition.bigEndian)
            at += field.size
        }
        var developer: [FITDeveloperValue] = []
        for field in definition.developer {
            developer.append(FITDeveloperValue(number: field.number, developerIndex: field.index, bytes: Array(bytes[at..<(at + field.size)])))
            at += field.size
        }
        return FITMessage(global: definition.global, fields: fields, developerFields: developer)
    }

    /// A field's bytes as a value of its base type: an array when the size holds several, raw bytes
    /// for a type this reader does not know or a size that is no whole number of values.
    static func value(_ raw: [UInt8], type: UInt8, bigEndian: Bool) -> FITValue {
        guard let base = FITBaseType(rawValue: type) else { return .bytes(raw) }
        switch base {
        case .string:
            let text = raw.prefix { $0 != 0 }
            guard !text.isEmpty else { return .invalid }
            return String(validating: text, as: UTF8.self).map(FITValue.string) ?? .bytes(raw)
        case .byte:
            return raw.allSatisfy { $0 == 0xFF } ? .invalid : .bytes(raw)
        default:
            guard raw.count % base.size == 0 else { return .bytes(raw) }
            let values = stride(from: 0, to: raw.count, by: base.size).map { offset in
                number(Array(raw[offset..<(offset + base.size)]), base, bigEndian: bigEndian)
            }
            return values.count == 1 ? values[0] : .array(values)
        }
    }

    static func number(_ raw: [UInt8], _ base: FITBaseType, bigEndian: Bool) -> FITValue {
        let ordered = bigEndian ? raw.reversed() : raw
        let bits = ordered.enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
        guard bits != base.invalidBits else { return .invalid }
        if base.isFloat {
            return .float(base == .float32 ? Double(Float(bitPattern: UInt32(truncatingIfNeeded: bits))) : Double(bitPattern: bits))
        }
        if base.isSigned {
            let width = base.size * 8
            let signed = width == 64 ? Int64(bitPattern: bits) : Int64(bitPattern: bits << UInt64(64 - width)) >> Int64(64 - width)
            return .signed(signed)
        }
        return .unsigned(bits)
    }
}

func read16(_ bytes: [UInt8], _ at: Int, bigEndian: Bool) -> UInt16 {
    bigEndian ? UInt16(bytes[at]) << 8 | UInt16(bytes[at + 1]) : UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8
}

func read32(_ bytes: [UInt8], _ at: Int, bigEndian: Bool) -> UInt32 {
    (0..<4).reduce(UInt32(0)) { value, index in
        value | UInt32(bytes[at + (bigEndian ? 3 - index : index)]) << (8 * UInt32(index))
    }
}
