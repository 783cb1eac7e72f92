import Foundation
import TSModels
import TSSimulator

/// What `tsgateway serve` reads from its YAML file (udev/config.example.yaml documents each key).
public struct GatewayConfiguration: Sendable {
    public enum BusKind: String, Sendable, CaseIterable {
        case system, session
    }

    /// One watch the daemon keeps connected.
    public struct WatchEntry: Sendable, Hashable {
        /// The Bluetooth address (upper case); for a simulated watch, an address in the
        /// documentation range 00:00:5E:00:54:xx unless the file gives one.
        public var address: WatchID
        public var name: String?
        public var adapter: String?
        /// A watch simulated inside the daemon (development, tests, demos).
        public var simulated = false
        public var seed: UInt64 = 20_251_119
        public var historyDays = 30
        /// Simulated link slowness: a pause before each packet on the link.
        public var packetDelay: Duration = .zero
        /// A test's hold on the simulated link (`pause-after-packets`, `resume-file`): after that many
        /// notifications, the next wait until the file exists.
        public var pauseAfterPackets: Int?
        public var resumeFile: String?
        /// Simulated link loss: the link drops after this many packets.
        public var disconnectEvery: Int?
        /// Simulated live night: stage events this far apart while the daemon is connected.
        public var liveStageInterval: Duration?
        /// Simulated heart: a Heart Rate Measurement this often while the daemon is connected.
        public var heartRateInterval: Duration = .seconds(1)
        /// Whether the simulated watch has the standard services (Device Information, Battery,
        /// Current Time, Heart Rate) beside protocol v1.
        public var standardServices = true
        /// False: the simulated watch is a band with the standard services only.
        public var servesProtocolV1 = true
        /// The protocol the simulated watch speaks (`protocol: 1.0` makes it a version-1 watch,
        /// without smart windows, RING or alarm alerts).
        public var simulatedProtocol: SimulatedProtocol = .version1_1
        /// Where the simulated watch's ground truth is written when the daemon stops (`SimulatedGroundTruth`).
        public var groundTruth: String?

        /// The dialect the watch speaks (`dialect:`); nil: as its GATT services say.
        public var dialect: Dialect?
        /// The secret the watch takes for pairing (`auth-code:`, `auth-key:`: the dialect's
        /// `credential`), sent when it must pair again.
        public var pairingSecret: PairingSecret?
        /// Smart windows the gateway wakes from, minutes by alarm slot (`smart-wake:`); nil: as stored
        /// (set over D-Bus, or by an earlier configuration).
        public var smartWake: [Int: Int]?

        public init(address: WatchID, name: String? = nil) {
            self.address = address
            self.name = name
        }
    }

    public var database: String
    public var bus: BusKind = .system
    public var timeZone: TimeZone = .current
    public var syncInterval: Duration = .seconds(3600)
    public var timeSyncInterval: Duration = .seconds(86_400)
    /// While the system clock is not trusted (`ClockTrust`), how often it is looked at again.
    public var clockCheckInterval: Duration = .seconds(15)
    public var batteryInterval: Duration = .seconds(1800)
    /// How long heart-rate samples are kept; older ones are deleted.
    public var heartRateRetention: Duration = .seconds(30 * 86_400)
    /// How far back the first sync of a watch reaches.
    public var firstSyncDays = 30
    public var reconnectMinimum: Duration = .seconds(1)
    public var reconnectMaximum: Duration = .seconds(300)
    public var statisticsRule: StatisticsRule?
    public var watches: [WatchEntry] = []
    /// Where synced nights are uploaded (the outbox); nil: no uploads.
    public var upload: UploadSettings?
    /// The MQTT broker the daemon publishes to; nil: no MQTT.
    public var mqtt: MQTTSettings?
    /// Where the daemon writes each watch's HTML sleep report; nil: no reports.
    public var report: ReportSettings?

    /// `upload:` — POST each synced night to an HTTP endpoint, through the store's outbox.
    public struct UploadSettings: Sendable, Hashable {
        /// The full URL of the sleep endpoint, e.g. https://health.example.org/api/v1/sleep.
        public var endpoint: URL
        /// Sent as `Authorization: Bearer TOKEN` when set.
        public var token: String?
        /// How often the outbox is looked at when nothing new arrives.
        public var interval: Duration = .seconds(60)
        /// Per request.
        public var timeout: Duration = .seconds(30)
        /// Exponential backoff of a failing upload: first retry after `retryMinimum`, at most `retryMaximum`.
        public var retryMinimum: Duration = .seconds(5)
        public var retryMaximum: Duration = .seconds(3600)

        public init(endpoint: URL) { self.endpoint = endpoint }
    }

    /// `mqtt:` — state, Home Assistant discovery, events and commands on an MQTT broker.
    public struct MQTTSettings: Sendable, Hashable {
        public var host: String
        public var port: Int = 1883
        public var username: String?
        public var password: String?
        /// TLS: the CA file to verify the broker with (enables TLS); optional client certificate and key.
        public var caFile: String?
        public var certFile: String?
        public var keyFile: String?
        /// Every topic starts with this; one prefix per gateway keeps several gateways apart.
        public var topicPrefix = "tsgateway"
        /// This gateway's id in topics and client ids (default: the host name).
        public var gatewayId: String
        /// Home Assistant discovery prefix; nil switches discovery off.
        public var discoveryPrefix: String? = "homeassistant"
        public var keepAlive: Int = 30

        public init(host: String, gatewayId: String) {
            self.host = host
            self.gatewayId = gatewayId
        }
    }

    /// `report:` — an HTML sleep report per watch, written into a directory on a schedule.
    public struct ReportSettings: Sendable, Hashable {
        /// Absolute; created (0700, or 0755 when the files are 0644) if missing.
        public var directory: String
        /// How many days, up to today, each report shows.
        public var days = 30
        /// How often the reports are written (also after each sync).
        public var every: Duration = .seconds(3600)
        /// File mode: 0600 (health data) unless the configuration says 0640 or 0644.
        public var mode: Int = 0o600

        public init(directory: String) { self.directory = directory }
    }

    public init(database: String, watches: [WatchEntry] = []) {
        self.database = database
        self.watches = watches
    }

    public static let defaultPath = "/etc/tsgateway/config.yaml"
    public static let defaultDatabase = "/var/lib/tsgateway/tsgateway.sqlite"
}
