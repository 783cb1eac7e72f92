import Foundation

/// Left-aligned columns separated by two spaces, aligned by terminal display width.
enum TextTable {
    static func render(_ rows: [[String]]) -> String {
        let widths = rows.reduce(into: [Int]()) { widths, row in
            for (index, cell) in row.enumerated() {
                if index >= widths.count { widths.append(0) }
                widths[index] = max(widths[index], displayWidth(cell))
            }
        }
        return rows.map { row in
            var line = ""
            for (index, cell) in row.enumerated() {
                line += cell
                if index < row.count - 1 { line += String(repeating: " ", count: widths[index] - displayWidth(cell) + 2) }
            }
            return line.replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
        }.joined(separator: "\n")
    }

    /// Columns a terminal uses for `text`: 2 for wide East Asian characters and emoji, 0 for
    /// combining marks, 1 otherwise.
    static func displayWidth(_ text: String) -> Int {
        text.reduce(0) { total, character in
            let scalars = character.unicodeScalars
            guard let first = scalars.first else { return total }
            if scalars.contains(where: { $0.properties.isEmojiPresentation }) || isWide(first.value) { return total + 2 }
            return total + (first.properties.generalCategory == .nonspacingMark ? 0 : 1)
        }
    }

    private static func isWide(_ value: UInt32) -> Bool {
        switch value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
             0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x20000...0x3FFFD: true
        default: false
        }
    }
}
