import Foundation
import Logging
import TSDevice
import TSGatewayAPI
import TSModels
import TSMQTT
import TSSleep
import TSStore
import TSWatchService

/// Publishes the daemon's watches to an MQTT broker: a retained state document per watch,
/// Home Assistant discovery configs, availability with a last will, event messages, and a
/// command topic for alarms. Every message goes through the store's queue first and leaves it
/// only when the broker acknowledges it (QoS 1), so a broker that is down, or a gateway that
/// restarts, loses nothing.
///
/// Topics (`P` = topic-prefix/gateway-id, `W` = the watch address in lower-case hex, the same
/// on every gateway):
///   P/status                               online | offline (retained; offline is the last will)
///   P/watch/W/state                        the state document (retained; after a heart-rate
///                                          sample at most every 15 s)
///   P/watch/W/event/alarms_changed|fell_asleep|woke_up|sleep_synced|session|smart_wake|clock|storage   (the event's JSON)
///   P/watch/W/event/night                  {"event_type", "time", "stage"?, "alarm_slot"?} (NightEvent)
///   P/watch/W/command/alarms/set           {"id", "alarms": [{"time": "07:00", "repeat": [...], ...}]}
///   P/watch/W/command/sleep/sync           {"id"}
///   P/watch/W/command/reply                {"id", "command", "ok", "error"?}
///   DISCOVERY/sensor|binary_sensor|event/tsgateway_W/NAME/config   (retained; once the watch has
///                                          said what it is (now or in an earlier run), again when
///                                          that changes, and when DISCOVERY/status says online:
///                                          Home Assistant's birth)
///   DISCOVERY/binary_sensor/tsgateway_gateway_G/online/config   the gateway's own device
public actor MQTTBridge {
    let settings: GatewayConfiguration.MQTTSettings
    let store: GatewayStore
    let supervisors: [WatchSupervisor]
    let timeZone: TimeZone
    /// Whether the disk holding the database (and so the queue) takes writes; nil: not watched.
    let storage: StorageHealth?
    let logger: Logger
    private var connection: MQTTConnection?
    private var connected = false
    /// Message id → queue row, for messages handed to libmosquitto and not yet acknowledged.
    private var inFlight: [Int32: Int64] = [:]
    /// The last queue row handed to libmosquitto on this connection. Rows are numbered in the
    /// order they were queued, so a flush sends only those after it: the queue is read across an
    /// await, and a row sent and acknowledged meanwhile may still be in what was read (command
    /// replies went out twice). A new connection sends everything still queued.
    private var publishedUpTo: Int64 = 0
    private var lastRefusal: String?
    /// Per watch: last night's figures and the alarm table, for the state document.
    private var nights: [WatchID: LastNightFigures] = [:]
    private var alarms: [WatchID: [Alarm]] = [:]
    /// Per watch: the identity (name, model, firmware) its discovery configs were last published with.
    private var publishedIdentity: [WatchID: String] = [:]
    /// Per watch: when a heart-rate sample last brought out the state document.
    private var lastHeartRateState: [WatchID: ContinuousClock.Instant] = [:]
    /// A watch sends heart rate about once a second; the state document follows it at most this often.
    static let heartRateStateInterval: Duration = .seconds(15)

    public init(settings: GatewayConfiguration.MQTTSettings, store: GatewayStore, supervisors: [WatchSupervisor],
                timeZone: TimeZone, storage: StorageHealth? = nil, logger: Logger) {
        self.settings = settings
        self.store = store
        self.supervisors = supervisors
        self.timeZone = timeZone
        self.storage = storage
        self.logger = logger
    }

    public nonisolated var base: String { "\(settings.topicPrefix)/\(settings.gatewayId)" }
    public nonisolated static func key(_ watchId: WatchID) -> String { watchId.rawValue.lowercased().filter(\.isHexDigit) }
    public nonisolated func watchTopic(_ watchId: WatchID) -> String { "\(base)/watch/\(Self.key(watchId))" }
    /// Where the night's events go, as Home Assistant's event entity reads them.
    public nonisolated func nightTopic(_ watchId: WatchID) -> String { "\(watchTopic(watchId))/event/night" }

    enum Signal: Sendable {
        case connected
        case disconnected(String)
        case acknowledged(Int32)
        case message(MQTTConnection.Message)
    }

    /// Until cancelled: publishes `events`, answers commands; says offline when it stops.
    public func run(events: AsyncStream<GatewayEvent>) async {
        let (signals, signal) = AsyncStream.makeStream(of: Signal.self)
        var handlers = MQTTConnection.Handlers()
        handlers.connected = { signal.yield(.connected) }
        handlers.disconnected = { signal.yield(.disconnected($0)) }
        handlers.published = { signal.yield(.acknowledged($0)) }
        handlers.message = { signal.yield(.message($0)) }
        var options = MQTTConnection.Options(host: settings.host, port: settings.port, clientId: "tsgateway-\(settings.gatewayId)")
        options.username = settings.username
        options.password = settings.password
        options.caFile = settings.caFile
        options.certFile = settings.certFile
        options.keyFile = settings.keyFile
        options.keepAlive = settings.keepAlive
        options.will = MQTTConnection.Message(topic: "\(base)/status", text: "offline", qos: 1, retain: true)
        do {
            let connection = try MQTTConnection(options, handlers: handlers)
            self.connection = connection
            try connection.start()
        } catch {
            logger.error("MQTT is off: \(error)")
            return
        }
        logger.notice("MQTT: publishing to \(settings.host):\(settings.port) under \(base)/")
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [self] in for await item in signals { await handle(item) } }
            group.addTask { [self] in for await event in events { await publish(event) } }
            await group.next()
            group.cancelAll()
        }
        signal.finish()
        if connected, let connection {
            _ = try? connection.publish(MQTTConnection.Message(topic: "\(base)/status", text: "offline", qos: 1, retain: true))
            try? await Task { try await Task.sleep(for: .milliseconds(200)) }.value
        }
        connection?.stop()
    }

    private func handle(_ signal: Signal) async {
        switch signal {
        case .connected:
            connected = true
            inFlight.removeAll()
            publishedUpTo = 0
            logger.info("MQTT: connected to \(settings.host):\(settings.port)")
            do {
                try connection?.subscribe("\(base)/watch/+/command/#", qos: 1)
                // Home Assistant's birth message: an HA that starts after the gateway gets discovery again.
                if let prefix = settings.discoveryPrefix { try connection?.subscribe("\(prefix)/status", qos: 1) }
                try connection?.publish(MQTTConnection.Message(topic: "\(base)/status", text: "online", qos: 1, retain: true))
            } catch {
                logger.warning("MQTT: \(error)")
            }
            publishDiscovery(supervisors)
            for supervisor in supervisors { await enqueue([await state(of: supervisor)]) }
            await flush()
        case let .disconnected(reason):
            if connected {
                logger.warning("MQTT: connection lost (\(reason)); libmosquitto reconnects")
            } else if reason != lastRefusal {
                // Once per reason: a wrong password would otherwise be logged at every retry.
                logger.error("MQTT: \(settings.host):\(settings.port) refused the connection: \(reason) (check the mqtt: section; retrying)")
            }
            lastRefusal = connected ? nil : reason
            connected = false
            inFlight.removeAll()
            publishedUpTo = 0
        case let .acknowledged(mid):
            guard let row = inFlight.removeValue(forKey: mid) else { return }
            do { try await store.removeQueuedMQTT(ids: [row]) } catch {
                // The row stays queued: sent again at the next connection (QoS 1 allows a duplicate).
                if storage?.noticed(error) != true { logger.error("MQTT queue: \(error)") }
            }
        case let .message(message):
            if let prefix = settings.discoveryPrefix, message.topic == "\(prefix)/status" {
                // Home Assistant (re)started: discovery and every state document again.
                guard String(decoding: message.payload, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == "online" else { return }
                logger.info("MQTT: Home Assistant is online; publishing discovery again")
                publishDiscovery(supervisors)
                for supervisor in supervisors { await enqueue([await state(of: supervisor)]) }
                await flush()
                return
            }
            await command(message)
        }
    }

    // MARK: Publishing

    private func publish(_ event: GatewayEvent) async {
        guard let supervisor = supervisors.first(where: { $0.id == event.watch }) else { return }
        switch event.kind {
        case .sleepSynced: nights[event.watch] = nil
        case let .alarmsChanged(changed, _): alarms[event.watch] = changed
        // The supervisor reads the table at each connect, without an event.
        case .connection(connected: true, _):
            alarms[event.watch] = nil
            // The watch has just reported its model and firmware: the device block follows.
            if publishedIdentity[event.watch] != HomeAssistantDiscovery.identity(supervisor.status) { publishDiscovery([supervisor]) }
        case .heartRate:
            let now = ContinuousClock.now
            if let last = lastHeartRateState[event.watch], now - last < Self.heartRateStateInterval { return }
            lastHeartRateState[event.watch] = now
        default: break
        }
        var messages = [await state(of: supervisor)]
        let name: String? = switch event.type {
        case .alarmsChanged: "alarms_changed"
        case .fellAsleep: "fell_asleep"
        case .wokeUp: "woke_up"
        case .sleepSynced: "sleep_synced"
        case .session: "session"
        case .smartWake: "smart_wake"
        case .clock: "clock"
        case .storage: "storage"
        case .connection, .battery, .heartRate, .liveStage, .night: nil
        }
        if let name {
            messages.append(MQTTConnection.Message(topic: "\(watchTopic(event.watch))/event/\(name)", text: event.json(), qos: 1, retain: false))
        }
        if case let .night(night) = event.kind {
            messages = [MQTTConnection.Message(topic: nightTopic(event.watch), text: MQTTJSON.text(MQTTNightMessage(night, time: event.time)), qos: 1, retain: false)]
        }
        await enqueue(messages)
        await flush()
    }

    private func enqueue(_ messages: [MQTTConnection.Message]) async {
        do {
            try await store.enqueueMQTT(messages.map { ($0.topic, $0.payload, $0.retain) })
        } catch where StorageHealth.condition(of: error) != nil {
            // The disk refuses the queue: the messages go straight to the broker while it is
            // connected (the state saying why among them), not kept for a later connection.
            storage?.noticed(error)
            guard connected, let connection else {
                logger.warning("MQTT: \(messages.count) message\(messages.count == 1 ? "" : "s") not queued (\(error)) and not sent: no broker connection")
                return
            }
            for message in messages {
                do { _ = try connection.publish(message) } catch { logger.warning("MQTT: \(message.topic) not sent: \(error)") }
            }
        } catch {
            logger.error("MQTT queue: \(error)")
        }
    }

    /// Hands every queued message not yet in flight to libmosquitto.
    private func flush() async {
        guard connected, let connection else { return }
        do {
            let rows = try await store.queuedMQTT()
            // Compared after the await, and raised with each row before the next await.
            for row in rows where row.id > publishedUpTo {
                let mid = try connection.publish(MQTTConnection.Message(topic: row.topic, payload: row.payload, qos: 1, retain: row.retain))
                inFlight[mid] = row.id
                publishedUpTo = row.id
            }
        } catch {
            logger.warning("MQTT: \(error); the queue is kept for the next connection")
        }
    }

    /// The retained state document of a watch (`MQTTStateDocument`).
    func state(of supervisor: WatchSupervisor) async -> MQTTConnection.Message {
        let status = supervisor.status
        let night = await lastNight(of: supervisor)
        let alarms = await alarmTable(of: supervisor)
        let document = MQTTStateDocument(
            watch: supervisor.id, name: status.name, dialect: (status.dialect ?? status.info?.spokenDialect)?.rawValue, connected: status.connected, battery: status.batteryLevel,
            batteryState: status.batteryState?.rawValue, lastSync: status.lastSync.map { ISO8601DateFormatter().string(from: $0) },
            session: status.sessionState?.rawValue, heartRate: status.heartRate, asleep: status.sleepStage.map { $0 != .awake } ?? false,
            nextAlarm: NextAlarm.after(Date(), alarms: alarms, timeZone: timeZone).map { Self.localISO($0, timeZone) }, night: night,
            clockTrusted: status.clockHeld == nil, clockReason: status.clockHeld,
            storage: storage?.condition?.rawValue ?? "ok", storageReason: storage?.reason)
        return MQTTConnection.Message(topic: "\(watchTopic(supervisor.id))/state", text: MQTTJSON.text(document), qos: 1, retain: true)
    }

    /// Last night's figures, computed from the store when a sync brings records (not at every event).
    private func lastNight(of supervisor: WatchSupervisor) async -> LastNightFigures {
        if let cached = nights[supervisor.id] { return cached }
        let clock = LocalDayClock(timeZone: timeZone)
        let today = clock.localDateAndHour(of: Int64(Date().timeIntervalSince1970)).date
        let before = clock.adding(days: -2, to: today)
        var figures = LastNightFigures()
        if let report = try? await supervisor.dailySleep(first: before, last: today, timeZone: timeZone),
           let night = report.days.last(where: { !$0.nightSleeps.isEmpty }) {
            figures.date = night.date.description
            figures.sleepMinutes = Int(night.nightSleeps.reduce(Int64(0)) { $0 + $1.summary.totalSleepDuration } / 60)
            figures.quality = Int(night.dailySummary.qualityScore)
            figures.deepShare = Int(night.dailySummary.deepSleepPercentage)
            figures.deepMinutes = Int(night.nightSleeps.reduce(Int64(0)) { $0 + $1.summary.deepSleepDuration } / 60)
            figures.efficiency = SleepEfficiency.percent(of: night.nightSleeps)
            figures.heartRate = night.nightHeartRate?.average
            figures.naps = night.validNaps.count
            figures.napMinutes = Int(night.validNaps.reduce(Int64(0)) { $0 + $1.summary.totalSleepDuration } / 60)
        }
        nights[supervisor.id] = figures
        return figures
    }

    /// The watch's alarm table: from the store once, then from the change events.
    private func alarmTable(of supervisor: WatchSupervisor) async -> [Alarm] {
        if let cached = alarms[supervisor.id] { return cached }
        let table = (try? await store.latestAlarmSnapshot(watch: supervisor.id)?.alarms) ?? []
        alarms[supervisor.id] = table
        return table
    }

    static func localISO(_ date: Date, _ zone: TimeZone) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = zone
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }

    /// Home Assistant MQTT discovery of one watch (`HomeAssistantDiscovery`) with `status`.
    func discovery(for supervisor: WatchSupervisor, status: WatchStatus) -> [MQTTConnection.Message] {
        guard let prefix = settings.discoveryPrefix else { return [] }
        return HomeAssistantDiscovery.messages(prefix: prefix, base: base, stateTopic: "\(watchTopic(supervisor.id))/state", nightTopic: nightTopic(supervisor.id),
                                               watchKey: Self.key(supervisor.id), status: status, gatewayId: settings.gatewayId,
                                               version: GatewayVersion.current)
    }

    /// Publishes the gateway's device and the discovery configs of those of `watches` that have
    /// said what they are (retained; not through the queue: they are published again at every
    /// connection), and remembers what their device blocks said. A watch not reached yet (a fresh
    /// database) follows at its first connect, so that Home Assistant sees it once, complete.
    private func publishDiscovery(_ watches: [WatchSupervisor]) {
        guard connected, let prefix = settings.discoveryPrefix, let connection else { return }
        do {
            for message in HomeAssistantDiscovery.gatewayMessages(prefix: prefix, base: base, gatewayId: settings.gatewayId, version: GatewayVersion.current) {
                try connection.publish(message)
            }
        } catch {
            logger.warning("MQTT: discovery of the gateway not published: \(error)")
        }
        for supervisor in watches {
            // One reading of the status for both: it changes on other threads meanwhile.
            let status = supervisor.status
            guard status.info != nil else { continue }
            do {
                for message in discovery(for: supervisor, status: status) { try connection.publish(message) }
                publishedIdentity[supervisor.id] = HomeAssistantDiscovery.identity(status)
            } catch {
                logger.warning("MQTT: discovery of \(supervisor.id) not published: \(error)")
            }
        }
    }

    // MARK: Commands

    private func command(_ message: MQTTConnection.Message) async {
        // P/watch/W/command/NAME…
        let prefix = "\(base)/watch/"
        guard message.topic.hasPrefix(prefix) else { return }
        let parts = message.topic.dropFirst(prefix.count).split(separator: "/", maxSplits: 2).map(String.init)
        guard parts.count == 3, parts[1] == "command", parts[2] != "reply" else { return }
        let key = parts[0], name = parts[2]
        let replyTopic = "\(base)/watch/\(key)/command/reply"
        let id = (try? JSONDecoder().decode(MQTTCommandEnvelope.self, from: Data(message.payload)))?.id?.text
        func reply(_ error: String?) async {
            let answer = MQTTCommandReply(id: id, command: name, ok: error == nil, error: error)
            await enqueue([MQTTConnection.Message(topic: replyTopic, text: MQTTJSON.text(answer), qos: 1, retain: false)])
            await flush()
        }
        guard let supervisor = supervisors.first(where: { Self.key($0.id) == key }) else {
            return await reply("no watch \(key) on this gateway; watches: \(supervisors.map { Self.key($0.id) }.joined(separator: ", "))")
        }
        let door: any WatchAccess = supervisor
        do {
            switch name {
            case "alarms/set":
                let alarms = try AlarmJSON.table(from: message.payload)
                try await door.setAlarms(alarms)
                logger.info("MQTT: \(supervisor.id): alarms set from a command (\(alarms.count) alarm\(alarms.count == 1 ? "" : "s"))")
                await reply(nil)
            case "sleep/sync":
                _ = try await door.syncSleep(SyncRequest(), progress: nil)
                await reply(nil)
            default:
                await reply("unknown command \"\(name)\"; known: alarms/set, sleep/sync")
            }
        } catch let error as AlarmTextError {
            await reply(error.message)
        } catch {
            await reply(String(describing: error))
        }
    }
}

/// The next time any enabled alarm rings.
enum NextAlarm {
    static func after(_ now: Date, alarms: [Alarm], timeZone: TimeZone) -> Date? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        var best: Date?
        for alarm in alarms where alarm.isEnabled {
            for offset in 0...7 {
                guard let day = calendar.date(byAdding: .day, value: offset, to: calendar.startOfDay(for: now)),
                      let time = calendar.date(bySettingHour: Int(alarm.hour), minute: Int(alarm.minute), second: 0, of: day), time > now else { continue }
                guard alarm.repeatDays.allows(time, in: calendar) else { continue }
                if best.map({ time < $0 }) ?? true { best = time }
                break
            }
        }
        return best
    }
}
