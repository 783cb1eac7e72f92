import TSDevice
import TSFamilies
import TSFamilyKit
import TSModels
import TSSnoop
import TSTransport

/// Which dialect's exchange an HCI capture carries, asked of every registered dialect with a
/// GATT profile and a capture decoder: the one whose service the capture's GATT discovery found
/// (and whose handles carry values), else the one whose frames its handles carry most of, or the
/// one `--dialect` names when the capture holds its exchange and no other dialect's.
struct CapturedDialect {
    var dialect: WatchDialect
    var decoder: any CaptureDecoder
    var exchange: CapturedExchange
    /// Why this dialect, for the text output.
    var reason: String

    /// The dialects a capture can be decoded in.
    static var decodable: [WatchDialect] { WatchFamilies.dialects.filter { $0.capturable != nil } }
    static var names: String { decodable.map(\.name.rawValue).joined(separator: ", ") }

    static func find(in traffic: ATTTraffic, asked: Dialect?, path: String) throws -> CapturedDialect {
        let candidates = decodable.compactMap { dialect -> CapturedDialect? in
            guard let (profile, decoder) = dialect.capturable else { return nil }
            return CapturedDialect(dialect: dialect, decoder: decoder, exchange: CapturedExchange(traffic: traffic, profile: profile, decoder: decoder), reason: "")
        }
        let carried = candidates.filter { !$0.exchange.values.isEmpty }
        let discovered = carried.filter { $0.exchange.handleSource == .discovery }
        if let asked {
            let dialect = try WatchFamilies.dialect(named: asked)
            guard dialect.capturable != nil else {
                throw CLIFailure("the \(asked) dialect has no frames of its own to decode; use one of \(names)", status: .usage)
            }
            let mine = carried.first { $0.dialect.name == asked }
            // Another dialect's service in the discovery, or more of another's frames, and this
            // one's values only by frames that happen to pass its checks.
            let most = carried.filter { $0.dialect.name != asked }.max { $0.frameCount < $1.frameCount }
            let other = discovered.first { $0.dialect.name != asked }
                ?? (mine == nil ? carried.first : most.flatMap { most in mine.map { most.frameCount > $0.frameCount } == true ? most : nil })
            if let other, mine == nil || mine?.exchange.handleSource == .frames {
                throw CLIFailure("\(path) carries the \(other.dialect.name) dialect's exchange (\(other.exchange.values.count) value(s), \(other.describedSource)), not \(asked)'s; run it again with --dialect \(other.dialect.name), or without --dialect", status: .usage)
            }
            guard var mine else { throw noTraffic(traffic, path: path, dialects: asked.rawValue) }
            mine.reason = "as --dialect says; \(mine.describedSource)"
            return mine
        }
        if var found = discovered.first {
            found.reason = found.describedSource
            return found
        }
        guard var found = carried.max(by: { $0.frameCount < $1.frameCount }) else {
            throw noTraffic(traffic, path: path, dialects: names)
        }
        found.reason = found.describedSource
        return found
    }

    var describedSource: String {
        exchange.handleSource == .discovery
            ? "its service \(exchange.profile.service.lowercased()) found by the capture's GATT discovery"
            : "no GATT discovery of its service in the capture; its frames found on handle(s) \(exchange.writeHandles.union(exchange.notifyHandles).sorted().map { "0x" + String($0, radix: 16) }.joined(separator: ", "))"
    }

    /// The frames that pass the dialect's checks in its values.
    var frameCount: Int {
        var session = decoder.session(started: nil)
        var count = 0
        for value in exchange.values { count += session.append(value.bytes, channel: value.channel, flow: value.flow).filter(\.isFrame).count }
        return count
    }

    static func noTraffic(_ traffic: ATTTraffic, path: String, dialects: String) -> CLIFailure {
        CLIFailure("\(path) holds no ATT write or notification that carries frames of \(dialects) (\(traffic.operations.count) ATT PDU(s) in all); was the capture running during the sync, and of the watch's adapter?", status: .dataError)
    }
}
