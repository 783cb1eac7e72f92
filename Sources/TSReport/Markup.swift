import Foundation

/// Text and numbers as they go into HTML and SVG.
enum Markup {
    /// Escapes the five characters that may not appear as themselves in text or attribute values.
    static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.count)
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    /// A coordinate with at most two decimals and no trailing zeros ("12", "12.5", "12.25").
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        let hundredths = (value * 100).rounded()
        if hundredths == 0 { return "0" }
        var text = String(format: "%.2f", hundredths / 100)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }

    /// "7 h 05 min", "45 min", "0 min".
    static func duration(_ seconds: Int64) -> String {
        let minutes = max(0, seconds) / 60
        guard minutes >= 60 else { return "\(minutes) min" }
        return "\(minutes / 60) h \(minutes % 60 < 10 ? "0" : "")\(minutes % 60) min"
    }

    /// "7h05", the short form for axis labels and averages.
    static func hoursShort(_ seconds: Int64) -> String {
        let minutes = max(0, seconds) / 60
        return "\(minutes / 60)h\(minutes % 60 < 10 ? "0" : "")\(minutes % 60)"
    }
}
