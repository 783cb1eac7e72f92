import TSModels

/// How the gateway decides which dialect a watch speaks, in this order:
/// 1. the dialect asked for: `dialect:` of its configuration entry, `--dialect` on the command line;
/// 2. the one remembered for it: `pair` (or an earlier connect) stored the dialect it spoke;
/// 3. its GATT services: the one dialect whose service the watch offers (BlueZ lists a known
///    device's service UUIDs, from its advertisements or an earlier connect, without connecting).
///    A service several dialects share, or one that other vendors' protocols use too
///    (`WatchDialect.identifiedByService`), decides nothing: the user says which with
///    `--dialect` or `dialect:`, and `pair --dialect` has it remembered;
/// 4. otherwise protocol v1's central, which speaks to a watch found without its service
///    through the standard services (decided once connected).
public enum DialectResolution {
    public enum Reason: String, Sendable, Hashable {
        case asked, remembered, services, fallback
    }

    public static func resolve(asked: Dialect?, remembered: Dialect?, serviceUUIDs: [String],
                               among dialects: [WatchDialect]) throws -> (dialect: WatchDialect, reason: Reason) {
        if let asked { return (try dialects.named(asked), .asked) }
        // A remembered dialect this build no longer speaks is passed over, not an error.
        if let remembered, let found = dialects.first(where: { $0.name == remembered }) { return (found, .remembered) }
        let serving = serving(serviceUUIDs, among: dialects)
        if serving.count > 1 || serving.contains(where: { !$0.identifiedByService }) { throw SharedServiceError(dialects: serving.map(\.name)) }
        if let only = serving.first { return (only, .services) }
        return (try dialects.named(.fallback), .fallback)
    }

    /// The dialects whose GATT service is among `serviceUUIDs` (any letter case).
    public static func serving(_ serviceUUIDs: [String], among dialects: [WatchDialect]) -> [WatchDialect] {
        let offered = Set(serviceUUIDs.map { $0.lowercased() })
        return dialects.filter { dialect in dialect.gatt.map { offered.contains($0.service.lowercased()) } ?? false }
    }

    /// What `scan` says of a device's dialect from the services it advertises: the one they
    /// identify, or, for a service that does not tell (`isAmbiguous`), the candidates marked as
    /// ambiguous with what to type to ask the watch itself, or nothing.
    public static func hint(_ serviceUUIDs: [String], among dialects: [WatchDialect]) -> String? {
        let serving = serving(serviceUUIDs, among: dialects)
        guard !serving.isEmpty else { return nil }
        guard isAmbiguous(serviceUUIDs, among: dialects) else { return serving[0].name.rawValue }
        let others = serving.count == 1 ? " or another vendor's protocol" : ""
        return "ambiguous: " + serving.map(\.name.rawValue).joined(separator: " or ") + others
            + " (a shared service; `tsgateway probe ADDRESS` asks the watch, then pair --dialect NAME)"
    }

    /// The services name dialects but do not tell which one the device speaks: several dialects
    /// share them, or one that other vendors' protocols use too (a chip vendor's service).
    public static func isAmbiguous(_ serviceUUIDs: [String], among dialects: [WatchDialect]) -> Bool {
        let serving = serving(serviceUUIDs, among: dialects)
        return serving.count > 1 || serving.contains { !$0.identifiedByService }
    }
}

/// The watch offers a service that several dialects use: its services cannot tell which it speaks.
public struct SharedServiceError: CategorizedError, Sendable, Hashable, CustomStringConvertible {
    public var dialects: [Dialect]

    public init(dialects: [Dialect]) { self.dialects = dialects }

    public var description: String {
        let names = dialects.map(\.rawValue).joined(separator: ", ")
        let shared = dialects.count > 1 ? "is used by several dialects (\(names))" : "is used by \(names) and by other vendors' protocols"
        return "the watch's GATT service \(shared), so it does not tell which dialect the watch speaks; "
            + "say it with --dialect NAME (`pair --dialect NAME` remembers it; in serve's configuration: `dialect:`)"
    }

    public var category: ErrorCategory { .invalidInput }
}
