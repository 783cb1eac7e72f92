import Foundation
import Logging
import TSHCI

/// A short LE connection interval for a bulk transfer, relaxed again afterwards.
///
/// BlueZ has no D-Bus API for connection parameters. Of what the kernel offers a client, the
/// HCI LE Connection Update command on the link's handle (TSHCI, through libbluetooth) changes
/// the running link at once and touches nothing of bluetoothd's: the management interface's
/// Load Connection Parameters (CAP_NET_ADMIN) only sets what bluetoothd stores for the *next*
/// connection and would overwrite its own entries; the debugfs knobs are global, need root
/// and a mounted debugfs; the L2CAP socket option belongs to the socket's owner (bluetoothd).
/// The kernel sends LE commands from a raw socket only for CAP_NET_RAW: without it (and when
/// the controller refuses, or the link is not ours as central) the sync runs at whatever
/// interval is in force, and `-v` says why.
public enum FastConnection {
    public struct Link: Sendable {
        public var adapter: String
        public var handle: UInt16
    }

    public static func begin(adapter: String?, address: String, logger: Logger) -> Link? {
        let candidates = adapter.map { [$0] } ?? adapters()
        var lastError: HCIError?
        for name in candidates {
            do {
                let handle = try ConnectionParameters.handle(adapter: name, address: address)
                let update = try ConnectionParameters.update(adapter: name, handle: handle, to: .bulk)
                logger.info("connection interval \(format(update.interval)) for the sync (\(name), handle \(handle), latency \(update.latency), supervision timeout \(Int(update.supervisionTimeout) * 10) ms)")
                return Link(adapter: name, handle: handle)
            } catch {
                lastError = error
                if case .notConnected = error { continue }
                break
            }
        }
        logger.info("connection parameters left as they are for the sync: \(lastError?.description ?? "no adapter holds a link to \(address)")")
        return nil
    }

    public static func end(_ link: Link, logger: Logger) {
        do {
            let update = try ConnectionParameters.update(adapter: link.adapter, handle: link.handle, to: .relaxed)
            logger.info("connection interval \(format(update.interval)) again after the sync")
        } catch {
            logger.info("the link stays at the sync's connection interval: \(error.description)")
        }
    }

    public static func format(_ interval: UInt16) -> String {
        String(format: "%.2f ms", LEConnectionParameters.milliseconds(interval: interval))
    }

    /// hci0, hci1, … as the kernel lists them.
    public static func adapters() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/sys/class/bluetooth")) ?? []
        return names.filter { $0.hasPrefix("hci") && !$0.contains(":") }.sorted { $0.count != $1.count ? $0.count < $1.count : $0 < $1 }
    }
}
