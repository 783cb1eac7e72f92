import TSTestSupport
import Foundation
import Testing
@testable import TSDBus

/// A service exported by the project's own D-Bus layer, on a private bus.
struct EchoRig {
    let bus: PrivateBus
    let server: BusConnection
    let client: BusConnection
    let name = "org.tsgateway.Echo"
    let state = PropertyBox()

    final class PropertyBox: @unchecked Sendable {
        let lock = NSLock()
        private var value: Int32 = 7
        var level: Int32 {
            get { lock.lock(); defer { lock.unlock() }; return value }
            set { lock.lock(); value = newValue; lock.unlock() }
        }
    }

    init() async throws {
        bus = try PrivateBus()
        server = try BusConnection(.address(bus.address))
        client = try BusConnection(.address(bus.address))
        try await server.requestName(name)
        let box = state
        try server.export(path: "/echo", interfaces: [DBusInterface("org.tsgateway.Echo", methods: [
            DBusMethod("Echo", in: "av", out: "av") { arguments, _ in arguments },
            DBusMethod("Concat", in: "ss", out: "s") { arguments, _ in [.string((arguments[0].stringValue ?? "") + (arguments[1].stringValue ?? ""))] },
            DBusMethod("Fail", in: "s") { arguments, _ in throw BusError(name: "org.tsgateway.Error.Refused", message: arguments[0].stringValue ?? "") },
            DBusMethod("Sleep", in: "u") { arguments, _ in
                try await Task.sleep(for: .milliseconds(Int(arguments[0].uint32Value ?? 0)))
                return []
            },
        ], properties: [
            DBusProperty("Level", "i", get: { .int32(box.level) }, set: { box.level = $0.int32Value ?? 0 }),
            DBusProperty("Name", "s", get: { .string("echo") }),
        ], signals: [("Ping", "s")])])
    }

    func callEcho(_ values: [DBusValue]) async throws -> [DBusValue] {
        let reply = try await client.call(destination: name, path: "/echo", interface: "org.tsgateway.Echo", member: "Echo",
                                          [.array(element: "v", values.map(DBusValue.variant))])
        // Strip exactly the one variant level callEcho added.
        return reply.first?.arrayValue?.map { if case let .variant(inner) = $0 { inner } else { $0 } } ?? []
    }

    func close() {
        client.close()
        server.close()
        bus.stop()
    }
}

@Suite struct EchoServiceTests {
    /// Calls are sent from the callers' threads, replies dispatched on the loop's: many tasks
    /// calling at once on one connection each get their own reply.
    /// A task preferring the connection's executor runs on its loop thread between calls, and
    /// still finishes once the connection is closed (then on the global executor).
    @Test func aTaskOnTheConnectionsExecutorRunsOnItsLoopThread() async throws {
        let rig = try await EchoRig(); defer { rig.close() }
        let threads = try await withTaskExecutorPreference(rig.client.executor) {
            var threads: Set<UInt> = []
            for index in 0..<50 {
                let reply = try await rig.client.call(destination: rig.name, path: "/echo", interface: "org.tsgateway.Echo", member: "Concat",
                                                      [.string("call \(index)"), .string("?")])
                #expect(reply.first?.stringValue == "call \(index)?")
                threads.insert(UInt(pthread_self()))
            }
            return threads
        }
        #expect(threads == [rig.client.loop.threadID])
        let finished = await withTaskExecutorPreference(rig.client.executor) {
            rig.client.close()
            try? await Task.sleep(for: .milliseconds(20))
            return true
        }
        #expect(finished)
    }

    @Test func concurrentCallsFromManyTasksEachGetTheirOwnReply() async throws {
        let rig = try await EchoRig(); defer { rig.close() }
        let mismatches = try await withThrowingTaskGroup(of: Int.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var wrong = 0
                    for index in 0..<150 {
                        let text = "task \(task) call \(index)"
                        let reply = try await rig.client.call(destination: rig.name, path: "/echo", interface: "org.tsgateway.Echo", member: "Concat",
                                                              [.string(text), .string("!")])
                        if reply.first?.stringValue != text + "!" { wrong += 1 }
                    }
                    return wrong
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(mismatches == 0)
    }
    @Test func everyTypeRoundTripsThroughAVariant() async throws {
        let rig = try await EchoRig(); defer { rig.close() }
        let values: [DBusValue] = [
            .byte(0xA5), .boolean(true), .boolean(false), .int16(-12345), .uint16(54321), .int32(-2_000_000_000), .uint32(4_000_000_000),
            .int64(.min), .uint64(.max), .double(-3.25), .string("grüße 💤"), .string(""), .objectPath("/org/bluez/hci0/dev_AA_BB"),
            .signature("a{oa{sa{sv}}}"),
            .array(element: "i", [.int32(1), .int32(2)]), .array(element: "s", []), .bytes([0, 1, 255]),
            .structure([.string("x"), .int32(3), .structure([.boolean(true)])]),
            .variant(.variant(.string("nested"))),
            .properties(["Powered": .boolean(true), "Alias": .string("hci0"), "UUIDs": .strings(["180a"]), "Nested": .variant(.uint16(5))]),
            .dictionary(key: "o", value: "a{sa{sv}}", [DBusDictEntry(key: .objectPath("/org/bluez/hci0"), value:
                .dictionary(key: "s", value: "a{sv}", [DBusDictEntry(key: .string("org.example.Adapter1"), value: .properties(["Powered": .boolean(false)]))]))]),
            .dictionary(key: "y", value: "ay", []),
        ]
        let echoed = try await rig.callEcho(values)
        #expect(echoed.count == values.count)
        for (sent, received) in zip(values, echoed) {
            #expect(received == sent, "\(sent.signature) came back as \(received.signature)")
        }
    }

    @Test func managedObjectsDecodeAsNestedDictionaries() async throws {
        let rig = try await EchoRig(); defer { rig.close() }
        rig.server.exportObjectManager(at: "/tree")
        try rig.server.export(path: "/tree/a", interfaces: [DBusInterface("org.tsgateway.Leaf", properties: [DBusProperty("Id", "u", get: { .uint32(1) })])])
        try rig.server.export(path: "/tree/b/c", interfaces: [DBusInterface("org.tsgateway.Leaf", properties: [DBusProperty("Id", "u", get: { .uint32(2) })])])
        let objects = try await rig.client.managedObjects(destination: rig.name, path: "/tree")
        #expect(objects.keys.sorted() == ["/tree/a", "/tree/b/c"])
        #expect(objects["/tree/b/c"]?["org.tsgateway.Leaf"]?["Id"] == .uint32(2))
    }

    @Test func interfacesAddedAndRemovedAreSignalled() async throws {
        let rig = try await EchoRig(); defer { rig.close() }
        rig.server.exportObjectManager(at: "/tree")
        let signals = try await rig.client.signals(SignalMatch(sender: rig.name, interface: "org.freedesktop.DBus.ObjectManager"))
        try rig.server.export(path: "/tree/new", interfaces: [DBusInterface("org.tsgateway.Leaf")])
        rig.server.unexport(path: "/tree/new")
        var iterator = signals.makeAsyncIterator()
        let added = await iterator.next()
        let removed = await iterator.next()
        #expect(added?.member == "InterfacesAdded")
        #expect(added?.arguments.first == .objectPath("/tree/new"))
        #expect(removed?.member == "InterfacesRemoved")
        #expect(removed?.arguments.last == .strings(["org.tsgateway.Leaf"]))
    }

    @Test func typedArgumentsAndErrorsCarryTheirNames() async throws {
        let rig = try await EchoRig(); defer { rig.close() }
        let joined = try await rig.client.call(destination: rig.name, path: "/echo", interface: "org.tsgateway.Echo", member: "Concat", [.string("ab"), .string("cd")])
        #expect(joined == [.string("abcd")])
        await #expect { _ = try await rig.client.call(destination: rig.name, path: "/echo", interface: "org.tsgateway.Echo", member: "Fail", [.string("no way")]) } throws: { error in
            (error as? BusError) == BusError(name: "org.tsgateway.Error.Refused", message: "no way")
        }
        await #expect { _ = try await rig.client.call(destination: rig.name, path: "/echo", interface: "org.tsgateway.Echo", member: "Concat", [.int32(1)]) } throws: { error in
            (error as? BusError)?.name == BusError.invalidArgs && "\(error)".contains("\"ss\"")
        }
    }

    @Test func propertiesGetSetAndChangeSignals() async throws {
        let rig = try await EchoRig(); defer { rig.close() }
        #expect(try await rig.client.getProperty(destination: rig.name, path: "/echo", interface: "org.tsgateway.Echo", name: "Level") == .int32(7))
        let changes = try await rig.client.signals(SignalMatch(path: "/echo", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        try await rig.client.setProperty(destination: rig.name, path: "/echo", interface: "org.tsgateway.Echo", name: "Level", value: .int32(42))
        #expect(try await rig.client.getAllProperties(destination: rig.name, path: "/echo", interface: "org.tsgateway.Echo") == ["Level": .int32(42), "Name": .string("echo")])
        var iterator = changes.makeAsyncIterator()
        let changed = await iterator.next()
        #expect(changed?.arguments[1].propertiesValue == ["Level": .int32(42)])
        await #expect { try await rig.client.setProperty(destination: rig.name, path: "/echo", interface: "org.tsgateway.Echo", name: "Name", value: .string("x")) } throws: {
            ($0 as? BusError)?.name == "org.freedesktop.DBus.Error.PropertyReadOnly"
        }
    }

    @Test func signalsReachSubscribers() async throws {
        let rig = try await EchoRig(); defer { rig.close() }
        let first = try await rig.client.signals(SignalMatch(interface: "org.tsgateway.Echo", member: "Ping"))
        let second = try await rig.client.signals(SignalMatch(path: "/echo"))
        try rig.server.emitSignal(path: "/echo", interface: "org.tsgateway.Echo", member: "Ping", [.string("hello")])
        var a = first.makeAsyncIterator(), b = second.makeAsyncIterator()
        #expect(await a.next()?.arguments == [.string("hello")])
        #expect(await b.next()?.member == "Ping")
    }

    @Test func introspectionDescribesTheObject() async throws {
        let rig = try await EchoRig(); defer { rig.close() }
        let xml = try await rig.client.call(destination: rig.name, path: "/echo", interface: "org.freedesktop.DBus.Introspectable", member: "Introspect")
        let text = try #require(xml.first?.stringValue)
        #expect(text.contains("<interface name=\"org.tsgateway.Echo\">"))
        #expect(text.contains("<method name=\"Concat\"><arg type=\"s\" direction=\"in\"/><arg type=\"s\" direction=\"in\"/><arg type=\"s\" direction=\"out\"/></method>"))
        #expect(text.contains("<property name=\"Level\" type=\"i\" access=\"readwrite\"/>"))
        let root = try await rig.client.call(destination: rig.name, path: "/", interface: "org.freedesktop.DBus.Introspectable", member: "Introspect")
        #expect(root.first?.stringValue?.contains("<node name=\"echo\"/>") == true)
    }

    @Test func unixFileDescriptorsPassThrough() async throws {
        let rig = try await EchoRig(); defer { rig.close() }
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        let echoed = try await rig.callEcho([.unixFD(fds[1])])
        guard case let .unixFD(received) = echoed.first else { Issue.record("no fd in \(echoed)"); return }
        defer { close(received) }
        #expect(received != fds[1], "a duplicate descriptor arrives")
        #expect(write(received, "x", 1) == 1)
        var byte: UInt8 = 0
        #expect(read(fds[0], &byte, 1) == 1)
        #expect(byte == UInt8(ascii: "x"))
    }
}

/// Timeouts, cancellation, malformed replies, unknown objects and a vanishing bus: typed
/// errors, never a trap or a hang.
@Suite struct BusFailureTests {
    /// Without the timeout the 3-second method would succeed; the NoReply error shows it was honoured.
    @Test func aSlowMethodTimesOutWithNoReply() async throws {
        let rig = try await EchoRig(); defer { rig.close() }
        await #expect { _ = try await rig.client.call(destination: rig.name, path: "/echo", interface: "org.tsgateway.Echo", member: "Sleep", [.uint32(3000)], timeout: .milliseconds(150)) } throws: {
            ($0 as? BusError)?.name == BusError.noReply
        }
    }

    @Test func aCallIsCancellable() async throws {
        let rig = try await EchoRig(); defer { rig.close() }
        let task = Task { try await rig.client.call(destination: rig.name, path: "/echo", interface: "org.tsgateway.Echo", member: "Sleep", [.uint32(5000)]) }
        try await Task.sleep(for: .milliseconds(50))
        task.cancel()
        await #expect(throws: CancellationError.self) { _ = try await task.value }
    }

    @Test func aReplyWithTheWrongSignatureIsATypedError() async throws {
        let rig = try await EchoRig(); defer { rig.close() }
        try rig.server.export(path: "/liar", interfaces: [
            DBusInterface("org.freedesktop.DBus.ObjectManager", methods: [DBusMethod("GetManagedObjects", out: "s") { _, _ in [.string("not a tree")] }]),
        ])
        await #expect { _ = try await rig.client.managedObjects(destination: rig.name, path: "/liar") } throws: { error in
            (error as? BusError)?.name == BusError.invalidSignature && "\(error)".contains("expected \"a{oa{sa{sv}}}\"")
        }
    }

    @Test func unknownObjectsAndNamesAreTypedErrors() async throws {
        let rig = try await EchoRig(); defer { rig.close() }
        await #expect { _ = try await rig.client.call(destination: rig.name, path: "/nothing/here", interface: "org.tsgateway.Echo", member: "Echo", [.array(element: "v", [])]) } throws: {
            ($0 as? BusError)?.name == BusError.unknownMethod
        }
        await #expect { _ = try await rig.client.call(destination: "org.nobody.Home", path: "/", interface: "org.x", member: "Y") } throws: {
            ($0 as? BusError)?.name == BusError.serviceUnknown
        }
        #expect(try await rig.client.nameHasOwner("org.nobody.Home") == false)
        #expect(try await rig.client.nameHasOwner(rig.name) == true)
    }

    @Test func theBusVanishingMidCallFailsTheCall() async throws {
        let rig = try await EchoRig(); defer { rig.close() }
        let call = Task { try await rig.client.call(destination: rig.name, path: "/echo", interface: "org.tsgateway.Echo", member: "Sleep", [.uint32(10_000)]) }
        try await Task.sleep(for: .milliseconds(100))
        rig.bus.stop()
        await #expect(throws: BusError.self) { _ = try await call.value }
        await #expect(throws: BusError.self) { _ = try await rig.client.call(destination: rig.name, path: "/echo", interface: nil, member: "Echo") }
    }

    /// A call waiting when its own connection is closed fails with Disconnected at once; no reply
    /// can reach it any more. (A watchdog cancels it after 5 s, so a regression fails, not hangs.)
    @Test func closingTheConnectionMidCallFailsTheCall() async throws {
        let rig = try await EchoRig(); defer { rig.close() }
        let call = Task { try await rig.client.call(destination: rig.name, path: "/echo", interface: "org.tsgateway.Echo", member: "Sleep", [.uint32(10_000)]) }
        let watchdog = Task { try await Task.sleep(for: .seconds(5)); call.cancel() }
        defer { watchdog.cancel() }
        try await Task.sleep(for: .milliseconds(100))
        rig.client.close()
        await #expect { _ = try await call.value } throws: { ($0 as? BusError)?.name == BusError.disconnected }
        await #expect { _ = try await rig.client.call(destination: rig.name, path: "/echo", interface: "org.tsgateway.Echo", member: "Sleep", [.uint32(0)]) } throws: {
            ($0 as? BusError)?.name == BusError.disconnected
        }
    }

    /// The daemon's shutdown makes BlueZ calls (StopNotify, Disconnect) from tasks that are
    /// already cancelled: such a call goes out and its reply resumes it. Before, the loop could
    /// cancel libdbus's side of the call after it had been sent, and the call waited forever
    /// (tsgateway serve hung on SIGTERM on the real stack). The watchdog closes the client,
    /// which fails a call that is still waiting with Disconnected.
    @Test func aCallFromAnAlreadyCancelledTaskGetsItsReply() async throws {
        let rig = try await EchoRig(); defer { rig.close() }
        // Only against a hang: on two busy cores (the whole suite in parallel) the 300 calls took over 20 s.
        let watchdog = Task { [client = rig.client] in try await Task.sleep(for: .seconds(120)); client.close() }
        defer { watchdog.cancel() }
        // In batches: the bus limits the replies one connection may wait for (128 here).
        let rounds = 300, batch = 50
        var answered = 0
        for first in stride(from: 0, to: rounds, by: batch) {
            answered += await withTaskGroup(of: Bool.self) { group in
                for round in first..<(first + batch) {
                    group.addTask {
                        withUnsafeCurrentTask { $0?.cancel() }
                        let reply = try? await rig.callEcho([.uint32(UInt32(round))])
                        return reply == [.uint32(UInt32(round))]
                    }
                }
                return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
        }
        #expect(answered == rounds, "\(rounds - answered) of \(rounds) calls from cancelled tasks got no reply")
    }

    @Test func noBusAtTheAddressIsATypedError() throws {
        #expect(throws: BusError.self) { _ = try BusConnection(.address("unix:path=/nonexistent/tsgateway.socket")) }
    }

    @Test func invalidValuesAreRefusedBeforeSending() async throws {
        let rig = try await EchoRig(); defer { rig.close() }
        await #expect { _ = try await rig.callEcho([.objectPath("not/a/path")]) } throws: { "\($0)".contains("not a valid object path") }
        await #expect { _ = try await rig.callEcho([.array(element: "s", [.int32(1)])]) } throws: { "\($0)".contains("array of s holds a i") }
    }
}
