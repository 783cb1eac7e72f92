import TSHuamiWatch

extension WatchFamily {
    /// Huami bands (Mi Band 3–6, Amazfit Bip/GTS/GTR 1–2): recognised by their vendor service,
    /// paired with the band's auth key.
    public static let huami = WatchFamily(dialect: .huami)
}
