import Foundation

/// What a report leaves out of text unless personal data is kept: Bluetooth addresses but the
/// watch's (each a stable address-N), values after auth code/key/secret/token, heart rates,
/// quoted text (alarm labels, names), hex dumps of frames and the Serial Number.
struct PersonalDataMask {
    let watch: String?

    /// `freeText` false: text of a known shape (the probe's JSON, `adapter info`), where quoted
    /// strings are UUIDs and names, not the person's words.
    func apply(_ text: String, freeText: Bool = true) -> String {
        var result = text
        var pseudonyms: [String: String] = [:]
        let address = /(?:[0-9A-Fa-f]{2}[:_]){5}[0-9A-Fa-f]{2}/
        result = result.replacing(address) { match in
            let normalized = match.output.uppercased().replacingOccurrences(of: "_", with: ":")
            if let watch, normalized == watch.uppercased() { return String(match.output) }
            if let known = pseudonyms[normalized] { return known }
            let name = "address-\(pseudonyms.count + 1)"
            pseudonyms[normalized] = name
            return name
        }
        result = result.replacing(/(?i)((?:auth[ _-]?(?:code|key)|secret|token|key)"?\s*[:=]\s*"?)[^\s",}]+/) { "\($0.output.1)(masked)" }
        result = result.replacing(/(?i)(--(?:auth-code|auth-key|key|secret|token)(?:\s+|=))[^\s;]+/) { "\($0.output.1)(masked)" }
        result = result.replacing(/(?i)(--credential(?:\s+|=)[^\s=;]+=)[^\s;]+/) { "\($0.output.1)(masked)" }
        result = result.replacing(/(?i)("?serial(?:[ _-]?number)?(?: string)?"?\s*[:=]\s*"?)[^",\n}]+/) { "\($0.output.1)(masked)" }
        result = result.replacing(/("name"\s*:\s*"Serial Number String"\s*,\s*"value"\s*:\s*")[^"]*/) { "\($0.output.1)(masked)" }
        result = result.replacing(/(?i)\b\d{1,3}\s*bpm\b/) { _ in "(heart rate masked)" }
        result = result.replacing(/(?:\b[0-9A-Fa-f]{2}[ :]){11,}[0-9A-Fa-f]{2}\b/) { _ in "(hex dump masked)" }
        guard freeText else { return result }
        result = result.replacing(/"[^"\n]*"/) { match in
            // JSON keys stay; values and quoted text go.
            match.output.count <= 2 ? String(match.output) : "\"…\""
        }
        return result
    }

    /// `protocol decode --json` lines reduced to each frame's structure: the keys that say what a
    /// frame is and how it fared, never its body.
    static func frameStructure(_ jsonLines: String) -> String {
        let kept: Set<String> = ["type", "sequence", "flags", "direction", "connection", "time", "command", "code", "bytes", "kind", "dialect", "message", "key"]
        func reduce(_ value: Any) -> Any? {
            switch value {
            case let object as [String: Any]:
                var out: [String: Any] = [:]
                for (key, inner) in object where kept.contains(key) {
                    if let reduced = reduce(inner) { out[key] = reduced }
                }
                return out
            case is [Any]: return nil
            default: return value
            }
        }
        return jsonLines.split(separator: "\n").compactMap { line -> String? in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)),
                  let reduced = reduce(object),
                  let data = try? JSONSerialization.data(withJSONObject: reduced, options: [.sortedKeys]) else { return nil }
            return String(decoding: data, as: UTF8.self)
        }.joined(separator: "\n") + "\n"
    }
}
