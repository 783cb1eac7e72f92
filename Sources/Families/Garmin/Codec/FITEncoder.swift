/// Writes a FIT file (protocol-spec/garmin/garmin.md §9): a definition before the first message
/// of each layout (and again when its local type was taken by another), little-endian, a 14-byte
/// header with its CRC and the file's CRC. With `compressesTimestamps`, a message whose
/// timestamp is within 31 s after the last one written goes with a compressed-timestamp header,
/// as watches write them: the simulated watch serves both kinds.
public struct FITEncoder: Sendable {
    public struct Field: Sendable, Hashable {
        public var number: UInt8
        public var type: FITBaseType
        public var value: FITValue

        public init(_ number: UInt8, _ type: FITBaseType, _ value: FITValue) {
            self.number = number
            self.type = type
            self.value = value
        }
    }

    public var compressesTimestamps: Bool
    var data: [UInt8] = []
    /// Local type → the layout it was last defined with.
    var defined: [UInt8: Layout] = [:]
    var nextCompressedLocal: UInt8 = 0
    var nextLocal: UInt8 = 4
    var lastTimestamp: UInt32?

    struct Layout: Hashable, Sendable {
        var global: UInt16
        var fields: [Slot]
        struct Slot: Hashable, Sendable {
            var number: UInt8
            var size: Int
            var type: FITBaseType
        }
    }

    public init(compressesTimestamps: Bool = false) { self.compressesTimestamps = compressesTimestamps }

    public mutating func write(global: UInt16, _ fields: [Field]) throws(GarminError) {
        var fields = fields
        var compressed: UInt32?
        if compressesTimestamps, let index = fields.firstIndex(where: { $0.number == FITField.timestamp }),
           case let .unsigned(value) = fields[index].value, let time = UInt32(exactly: value),
           let last = lastTimestamp, time >= last, time - last < 32 {
            compressed = time
            fields.remove(at: index)
        }
        let slots = try fields.map { field throws(GarminError) in Layout.Slot(number: field.number, size: try Self.size(field), type: field.type) }
        let layout = Layout(global: global, fields: slots)
        let local = localType(for: layout, compressed: compressed != nil)
        if defined[local] != layout {
            data.append(0x40 | local)
            data += [0, 0] + le16(global) + [UInt8(slots.count)]
            for slot in slots { data += [slot.number, UInt8(slot.size), slot.type.rawValue] }
            defined[local] = layout
        }
        if let compressed {
            data.append(0x80 | local << 5 | UInt8(compressed & 0x1F))
            lastTimestamp = compressed
        } else {
            data.append(local)
            if let index = fields.firstIndex(where: { $0.number == FITField.timestamp }), case let .unsigned(value) = fields[index].value {
                lastTimestamp = UInt32(truncatingIfNeeded: value)
            }
        }
        for (field, slot) in zip(fields, slots) { data += try Self.bytes(field.value, type: field.type, size: slot.size) }
    }

    /// The whole file: header (with its CRC), the records, the file's CRC.
    public func file(profileVersion: UInt16 = 2132) -> [UInt8] {
        var header: [UInt8] = [14, 0x20] + le16(profileVersion)
        let size = UInt32(data.count)
        header += [UInt8(size & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size >> 16 & 0xFF), UInt8(size >> 24)]
        header += Array(".FIT".utf8)
        header += le16(GarminCRC.checksum(header))
        let body = header + data
        return body + le16(GarminCRC.checksum(body))
    }

    /// A local type holding `layout` already, else the next one in turn: 0–3 for a message with a
    /// compressed timestamp (its header has two bits for it), 4–15 for the others.
    mutating func localType(for layout: Layout, compressed: Bool) -> UInt8 {
        let range: ClosedRange<UInt8> = compressed ? 0...3 : 4...15
        if let held = range.first(where: { defined[$0] == layout }) { return held }
        if compressed {
            defer { nextCompressedLocal = (nextCompressedLocal + 1) % 4 }
            return nextCompressedLocal
        }
        defer { nextLocal = nextLocal == 15 ? 4 : nextLocal + 1 }
        return nextLocal
    }

    static func size(_ field: Field) throws(GarminError) -> Int {
        switch field.value {
        case let .string(text):
            let size = text.utf8.count + 1
            guard size <= 255 else { throw GarminError(.fitValueInvalid, "field \(field.number): a string of \(size - 1) bytes; a FIT field holds at most 254") }
            return size
        case let .bytes(raw):
            guard (1...255).contains(raw.count) else { throw GarminError(.fitValueInvalid, "field \(field.number): \(raw.count) bytes; a FIT field holds 1…255") }
            return raw.count
        case let .array(values):
            let size = values.count * field.type.size
            guard (1...255).contains(size) else { throw GarminError(.fitValueInvalid, "field \(field.number): an array of \(size) bytes; a FIT field holds 1…255") }
            return size
        default:
            return field.type.size
        }
    }

    static func bytes(_ value: FITValue, type: FITBaseType, size: Int) throws(GarminError) -> [UInt8] {
        func little(_ bits: UInt64) -> [UInt8] { (0..<type.size).map { UInt8(truncatingIfNeeded: bits >> (8 * UInt64($0))) } }
        switch value {
        case let .unsigned(number):
            let limit: UInt64 = type.size == 8 ? .max : (1 << UInt64(type.size * 8)) - 1
            guard number <= limit, number != type.invalidBits else {
                throw GarminError(.fitValueInvalid, "\(number) does not fit a FIT \(type) as a valid value")
            }
            return little(number)
        case let .signed(number):
            let bits = Int64(type.size * 8)
            let range: ClosedRange<Int64> = bits == 64 ? Int64.min...(Int64.max - 1) : -(1 << (bits - 1))...((1 << (bits - 1)) - 2)
            guard type.isSigned, range.contains(number) else {
                throw GarminError(.fitValueInvalid, "\(number) does not fit a FIT \(type) as a valid value")
            }
            return little(UInt64(bitPattern: number))
        case let .float(number):
            return little(type == .float32 ? UInt64(Float(number).bitPattern) : number.bitPattern)
        case let .string(text):
            return Array(text.utf8) + Array(repeating: 0, count: size - text.utf8.count)
        case let .bytes(raw):
            return raw
        case let .array(values):
            var out: [UInt8] = []
            for element in values { out += try bytes(element, type: type, size: type.size) }
            return out
        case .invalid:
            return little(type.invalidBits)
        }
    }
}
