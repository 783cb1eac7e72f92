/// The secret a dialect's watches take for pairing, as its coordinator declares it: the option
/// (`pair --credential KEY=VALUE`; `--auth-code`, `--auth-key` for the built-in ones) and the
/// configuration key (`KEY:` in serve's configuration) that carry it, which
/// watches take it, and what makes a value wrong. The front doors read this; none of them knows a
/// dialect by name.
public struct PairingCredential: Sendable {
    /// `auth-code`, `auth-key`: the option is `--credential KEY=VALUE`, the configuration key `KEY:`.
    public var key: String
    /// Which watches take it, for errors: "a watch that binds with a code".
    public var holder: String
    /// What it is, for `--help`: "the code the watch shows as a QR code for pairing".
    public var meaning: String
    /// What is wrong with a value, in words for the person who typed it; nil: nothing.
    public var problem: @Sendable (String) -> String?
    /// The watch takes it on every connect, not only when pairing (an auth key): `pair`
    /// keeps it, readable by its owner only, for the commands after it.
    public var neededOnEveryConnect: Bool

    public init(key: String, holder: String, meaning: String, neededOnEveryConnect: Bool = false,
                problem: @escaping @Sendable (String) -> String?) {
        self.key = key
        self.holder = holder
        self.meaning = meaning
        self.neededOnEveryConnect = neededOnEveryConnect
        self.problem = problem
    }

    /// The secret `text` stands for, or what is wrong with it.
    public func secret(_ text: String) -> Result<PairingSecret, PairingSecretError> {
        if let problem = problem(text) { return .failure(PairingSecretError(key: key, problem: problem)) }
        return .success(PairingSecret(key: key, text: text))
    }
}

/// A pairing secret as given (an auth code, an auth key). It is a credential: its description
/// never holds it, so logs and errors cannot print it.
public struct PairingSecret: Sendable, Hashable, CustomStringConvertible {
    /// The credential's key (`auth-code`, `auth-key`).
    public let key: String
    public let text: String

    public init(key: String, text: String) {
        self.key = key
        self.text = text
    }

    public var description: String { "an \(key) of \(text.utf8.count) bytes" }
}

/// A pairing secret that cannot be one, or given to a watch that takes none of that kind.
public struct PairingSecretError: CategorizedError, Sendable, Hashable, CustomStringConvertible {
    public var key: String
    public var problem: String

    public init(key: String, problem: String) {
        self.key = key
        self.problem = problem
    }

    public var description: String { "\(key): \(problem)" }
    public var category: ErrorCategory { .invalidInput }
}

/// What the configuration reader and the command line need to know of a dialect: its name and
/// the pairing secret it takes. The full coordinator (`WatchDialect`, TSDevice) says more.
public struct DialectTerms: Sendable {
    public var name: Dialect
    public var credential: PairingCredential?

    public init(name: Dialect, credential: PairingCredential? = nil) {
        self.name = name
        self.credential = credential
    }

    /// Where a secret of `key` was given for a watch of `dialect`: what to add so that it fits,
    /// or nil when it does. `option` spells how the user names a dialect (`--dialect NAME`, `dialect: NAME`).
    public static func misplaced(key: String, for dialect: Dialect?, among dialects: [DialectTerms], option: (Dialect) -> String) -> String? {
        if let dialect, dialects.first(where: { $0.name == dialect })?.credential?.key == key { return nil }
        let takers = dialects.filter { $0.credential?.key == key }
        guard let first = takers.first, let holder = first.credential?.holder else { return "no dialect this build speaks takes \(key)" }
        return "\(key) is for \(holder); add " + takers.map { option($0.name) }.joined(separator: " or ")
    }
}
