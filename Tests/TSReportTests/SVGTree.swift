import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// An element of a parsed SVG fragment, so tests read the charts' structure rather than match text.
final class SVGElement {
    let name: String
    let attributes: [String: String]
    var children: [SVGElement] = []
    var text = ""

    init(name: String, attributes: [String: String]) {
        self.name = name
        self.attributes = attributes
    }

    var classes: Set<String> { Set((attributes["class"] ?? "").split(separator: " ").map(String.init)) }

    func number(_ attribute: String) -> Double? { attributes[attribute].flatMap(Double.init) }

    /// This element and every descendant, in document order.
    var all: [SVGElement] { [self] + children.flatMap(\.all) }

    func elements(_ name: String, class wanted: String? = nil) -> [SVGElement] {
        all.filter { $0.name == name && (wanted == nil || $0.classes.contains(wanted!)) }
    }

    /// Parses one well-formed XML fragment; fails the test's expectation with the parser's reason otherwise.
    static func parse(_ text: String) throws -> SVGElement {
        let builder = Builder()
        let parser = XMLParser(data: Data(text.utf8))
        parser.delegate = builder
        guard parser.parse(), let root = builder.root else {
            throw ParseFailure(reason: parser.parserError.map { "\($0)" } ?? "no root element", text: String(text.prefix(200)))
        }
        return root
    }

    /// Every top-level `<svg>…</svg>` in an HTML page, each parsed on its own.
    static func charts(inPage page: String) throws -> [SVGElement] {
        var charts: [SVGElement] = []
        var rest = page[...]
        while let open = rest.range(of: "<svg"), let close = rest[open.lowerBound...].range(of: "</svg>") {
            charts.append(try parse(String(rest[open.lowerBound..<close.upperBound])))
            rest = rest[close.upperBound...]
        }
        return charts
    }

    struct ParseFailure: Error, CustomStringConvertible {
        var reason: String
        var text: String
        var description: String { "not well-formed XML (\(reason)): \(text)…" }
    }

    private final class Builder: NSObject, XMLParserDelegate {
        var root: SVGElement?
        var stack: [SVGElement] = []

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
            let element = SVGElement(name: name, attributes: attributes)
            if let parent = stack.last { parent.children.append(element) } else { root = element }
            stack.append(element)
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            stack.removeLast()
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            stack.last?.text += string
        }
    }
}
