/// Introspection XML for exported objects, including child nodes.
enum Introspection {
    static func xml(for path: String, in exported: ExportedObjects) -> String {
        var xml = #"<!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">"#
        xml += "\n<node>\n"
        xml += "  <interface name=\"\(StandardBusNames.introspectable)\"><method name=\"Introspect\"><arg name=\"xml\" type=\"s\" direction=\"out\"/></method></interface>\n"
        xml += "  <interface name=\"\(StandardBusNames.peer)\"><method name=\"Ping\"/></interface>\n"
        if let interfaces = exported.objects[path] {
            xml += "  <interface name=\"\(StandardBusNames.properties)\">"
            xml += "<method name=\"Get\"><arg type=\"s\" direction=\"in\"/><arg type=\"s\" direction=\"in\"/><arg type=\"v\" direction=\"out\"/></method>"
            xml += "<method name=\"GetAll\"><arg type=\"s\" direction=\"in\"/><arg type=\"a{sv}\" direction=\"out\"/></method>"
            xml += "<method name=\"Set\"><arg type=\"s\" direction=\"in\"/><arg type=\"s\" direction=\"in\"/><arg type=\"v\" direction=\"in\"/></method>"
            xml += "<signal name=\"PropertiesChanged\"><arg type=\"s\"/><arg type=\"a{sv}\"/><arg type=\"as\"/></signal></interface>\n"
            for interface in interfaces {
                xml += "  <interface name=\"\(escape(interface.name))\">\n"
                for method in interface.methods {
                    xml += "    <method name=\"\(escape(method.name))\">"
                    for (index, type) in SignatureSplitter.split(method.inSignature).enumerated() {
                        xml += "<arg\(nameAttribute(method.inNames, index)) type=\"\(escape(type))\" direction=\"in\"/>"
                    }
                    for (index, type) in SignatureSplitter.split(method.outSignature).enumerated() {
                        xml += "<arg\(nameAttribute(method.outNames, index)) type=\"\(escape(type))\" direction=\"out\"/>"
                    }
                    xml += "</method>\n"
                }
                for property in interface.properties {
                    xml += "    <property name=\"\(escape(property.name))\" type=\"\(escape(property.signature))\" access=\"\(property.set == nil ? "read" : "readwrite")\"/>\n"
                }
                for signal in interface.signals {
                    xml += "    <signal name=\"\(escape(signal.name))\">"
                    for (index, type) in SignatureSplitter.split(signal.signature).enumerated() {
                        xml += "<arg\(nameAttribute(interface.signalArgumentNames[signal.name] ?? [], index)) type=\"\(escape(type))\"/>"
                    }
                    xml += "</signal>\n"
                }
                xml += "  </interface>\n"
            }
        }
        if exported.managers.contains(path) {
            xml += "  <interface name=\"\(StandardBusNames.objectManager)\"><method name=\"GetManagedObjects\"><arg type=\"a{oa{sa{sv}}}\" direction=\"out\"/></method>"
            xml += "<signal name=\"InterfacesAdded\"><arg type=\"o\"/><arg type=\"a{sa{sv}}\"/></signal><signal name=\"InterfacesRemoved\"><arg type=\"o\"/><arg type=\"as\"/></signal></interface>\n"
        }
        let prefix = path == "/" ? "/" : path + "/"
        let children = Set(exported.objects.keys.filter { $0.hasPrefix(prefix) && $0 != path }.compactMap {
            $0.dropFirst(prefix.count).split(separator: "/").first.map(String.init)
        })
        for child in children.sorted() { xml += "  <node name=\"\(escape(child))\"/>\n" }
        return xml + "</node>\n"
    }

    private static func nameAttribute(_ names: [String], _ index: Int) -> String {
        index < names.count ? " name=\"\(escape(names[index]))\"" : ""
    }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}

/// Splits a signature into its complete types: "sa{sv}(ii)" → ["s", "a{sv}", "(ii)"].
enum SignatureSplitter {
    static func split(_ signature: String) -> [String] {
        var types: [String] = []
        var current = ""
        var depth = 0
        for character in signature {
            current.append(character)
            switch character {
            case "(", "{": depth += 1
            case ")", "}": depth -= 1
            default: break
            }
            if depth == 0 && character != "a" {
                types.append(current)
                current = ""
            }
        }
        return types
    }
}
