import ArgumentParser
import TSModels

/// A watch's address as a command's argument (`pair`, `unpair`, `probe`): made a `WatchID` while
/// the command line is parsed, so a mistyped one is a usage error naming the argument and the form
/// it takes before anything talks to BlueZ.
enum WatchAddressArgument {
    static func parse(_ text: String) throws -> WatchID {
        guard let id = WatchID(text) else {
            throw ValidationError("expected a Bluetooth address, six pairs of hex digits such as AA:BB:CC:DD:EE:FF (`tsgateway scan --all` lists those in reach)")
        }
        return id
    }
}
