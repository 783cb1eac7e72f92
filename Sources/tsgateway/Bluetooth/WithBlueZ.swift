import TSBlueZ

/// Runs a BlueZ operation, turning its errors into CLI failures.
func withBlueZ<T>(_ body: (BlueZ) async throws -> T) async throws -> T {
    let bluez: BlueZ
    do { bluez = try BlueZ.connect() } catch { throw CLIFailure.from(error) }
    defer { bluez.bus.close() }
    do {
        return try await body(bluez)
    } catch {
        throw CLIFailure.from(error)
    }
}
