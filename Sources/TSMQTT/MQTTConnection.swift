import CMosquitto
import Foundation
import Synchronization

/// An MQTT 3.1.1 client over Debian's libmosquitto: connects in the background, reconnects
/// with exponential backoff by itself, and reports on its network thread through the handlers.
public final class MQTTConnection: @unchecked Sendable {
    public struct Options: Sendable {
        public var host: String
        public var port: Int
        public var clientId: String
        public var username: String?
        public var password: String?
        public var caFile: String?
        public var certFile: String?
        public var keyFile: String?
        public var keepAlive: Int = 30
        /// false: the broker keeps this client's subscriptions and QoS 1 messages while it is away.
        public var cleanSession = true
        public var will: Message?

        public init(host: String, port: Int, clientId: String) {
            self.host = host
            self.port = port
            self.clientId = clientId
        }
    }

    public struct Message: Sendable, Hashable {
        public var topic: String
        public var payload: [UInt8]
        public var qos: Int32
        public var retain: Bool

        public init(topic: String, payload: [UInt8], qos: Int32 = 1, retain: Bool = false) {
            self.topic = topic
            self.payload = payload
            self.qos = qos
            self.retain = retain
        }

        public init(topic: String, text: String, qos: Int32 = 1, retain: Bool = false) {
            self.init(topic: topic, payload: Array(text.utf8), qos: qos, retain: retain)
        }

        public var text: String { String(decoding: payload, as: UTF8.self) }
    }

    public struct Handlers: Sendable {
        /// The broker accepted the connection (again).
        public var connected: @Sendable () -> Void = {}
        /// The connection ended; the reason text (libmosquitto reconnects by itself).
        public var disconnected: @Sendable (String) -> Void = { _ in }
        /// The broker acknowledged a QoS 1 message (PUBACK) with this message id.
        public var published: @Sendable (Int32) -> Void = { _ in }
        public var message: @Sendable (Message) -> Void = { _ in }

        public init() {}
    }

    private let handle: OpaquePointer
    private let options: Options
    private let handlers: Handlers
    private let context: Unmanaged<HandlerBox>
    private let started = Atomic<Bool>(false)
    private let stopped = Atomic<Bool>(false)

    /// What the C callbacks reach through libmosquitto's user-data pointer.
    final class HandlerBox: Sendable {
        let handlers: Handlers
        let connected = Atomic<Bool>(false)
        init(handlers: Handlers) { self.handlers = handlers }
    }

    /// libmosquitto is opened on the first connection (CMosquitto): nil when it is ready, else why not.
    private static let libraryProblem: String? = {
        if let problem = tsg_mosquitto_load() { return String(cString: problem) }
        _ = tsg_mosquitto_lib_init()
        return nil
    }()

    public init(_ options: Options, handlers: Handlers) throws(MQTTError) {
        if let problem = Self.libraryProblem {
            throw MQTTError("MQTT needs libmosquitto (sudo apt install libmosquitto1): \(problem)")
        }
        self.options = options
        self.handlers = handlers
        let box = HandlerBox(handlers: handlers)
        context = Unmanaged.passRetained(box)
        guard let handle = tsg_mosquitto_new(options.clientId, options.cleanSession, context.toOpaque()) else {
            context.release()
            throw MQTTError("cannot create an MQTT client (out of memory, or an empty client id with a persistent session)")
        }
        self.handle = handle
        _ = tsg_mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311)
        do {
            try check(tsg_mosquitto_reconnect_delay_set(handle, 1, 30, true), "reconnect delay")
            if let username = options.username {
                try check(tsg_mosquitto_username_pw_set(handle, username, options.password), "username and password")
            }
            if let caFile = options.caFile {
                try check(tsg_mosquitto_tls_set(handle, caFile, nil, options.certFile, options.keyFile, nil), "TLS (ca-file \(caFile))")
            }
            if let will = options.will {
                let code = will.payload.withUnsafeBytes { bytes in
                    tsg_mosquitto_will_set(handle, will.topic, Int32(bytes.count), bytes.baseAddress, will.qos, will.retain)
                }
                try check(code, "last will")
            }
        } catch {
            tsg_mosquitto_destroy(handle)
            context.release()
            throw error
        }
        tsg_mosquitto_connect_callback_set(handle) { _, data, code in
            guard let data else { return }
            let box = Unmanaged<HandlerBox>.fromOpaque(data).takeUnretainedValue()
            if code == 0 {
                box.connected.store(true, ordering: .sequentiallyConsistent)
                box.handlers.connected()
            } else {
                box.handlers.disconnected(String(cString: tsg_mosquitto_connack_string(code)))
            }
        }
        tsg_mosquitto_disconnect_callback_set(handle) { _, data, code in
            guard let data else { return }
            let box = Unmanaged<HandlerBox>.fromOpaque(data).takeUnretainedValue()
            box.connected.store(false, ordering: .sequentiallyConsistent)
            box.handlers.disconnected(code == 0 ? "disconnected" : String(cString: tsg_mosquitto_strerror(code)))
        }
        tsg_mosquitto_publish_callback_set(handle) { _, data, mid in
            guard let data else { return }
            Unmanaged<HandlerBox>.fromOpaque(data).takeUnretainedValue().handlers.published(mid)
        }
        tsg_mosquitto_message_callback_set(handle) { _, data, message in
            guard let data, let message, let topic = message.pointee.topic else { return }
            let count = Int(message.pointee.payloadlen)
            let payload = count > 0 && message.pointee.payload != nil
                ? Array(UnsafeRawBufferPointer(start: message.pointee.payload, count: count)) : []
            Unmanaged<HandlerBox>.fromOpaque(data).takeUnretainedValue().handlers.message(
                Message(topic: String(cString: topic), payload: payload, qos: message.pointee.qos, retain: message.pointee.retain))
        }
    }

    deinit {
        stop()
        tsg_mosquitto_destroy(handle)
        context.release()
    }

    public var isConnected: Bool { context.takeUnretainedValue().connected.load(ordering: .sequentiallyConsistent) }

    /// Starts the network thread and the first connection attempt. A broker that is down is
    /// not an error: the thread keeps trying.
    public func start() throws(MQTTError) {
        guard !started.exchange(true, ordering: .sequentiallyConsistent) else { return }
        let code = tsg_mosquitto_connect_async(handle, options.host, Int32(options.port), Int32(options.keepAlive))
        // A refused or unreachable broker at start is retried by the loop like a lost connection.
        if code != MOSQ_ERR_SUCCESS.rawValue && code != MOSQ_ERR_ERRNO.rawValue && code != MOSQ_ERR_NO_CONN.rawValue {
            throw MQTTError("cannot connect to the MQTT broker \(options.host):\(options.port): \(String(cString: tsg_mosquitto_strerror(code)))")
        }
        try check(tsg_mosquitto_loop_start(handle), "the network thread")
    }

    /// Disconnects and stops the network thread.
    public func stop() {
        guard started.load(ordering: .sequentiallyConsistent), !stopped.exchange(true, ordering: .sequentiallyConsistent) else { return }
        _ = tsg_mosquitto_disconnect(handle)
        _ = tsg_mosquitto_loop_stop(handle, false)
    }

    /// Hands a message to libmosquitto; returns its message id (PUBACK reports it for QoS 1).
    @discardableResult
    public func publish(_ message: Message) throws(MQTTError) -> Int32 {
        var mid: Int32 = 0
        let code = message.payload.withUnsafeBytes { bytes in
            tsg_mosquitto_publish(handle, &mid, message.topic, Int32(bytes.count), bytes.baseAddress, message.qos, message.retain)
        }
        try check(code, "publish to \(message.topic)")
        return mid
    }

    public func subscribe(_ pattern: String, qos: Int32 = 1) throws(MQTTError) {
        try check(tsg_mosquitto_subscribe(handle, nil, pattern, qos), "subscribe to \(pattern)")
    }

    private func check(_ code: Int32, _ what: String) throws(MQTTError) {
        guard code == MOSQ_ERR_SUCCESS.rawValue else {
            throw MQTTError("MQTT \(what): \(String(cString: tsg_mosquitto_strerror(code)))")
        }
    }
}

public struct MQTTError: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
