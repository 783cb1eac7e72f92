import Foundation

/// One command line as documentation shows it, split into words the way sh would: single and
/// double quotes, backslash escapes, a backslash-newline continuing the line, `#` comments. A
/// `|` ends the command; what follows is the program the output is piped into.
struct ShellCommandLine: Equatable, CustomStringConvertible {
    var words: [String]
    /// The words after `|`, if the line pipes the output into another program.
    var pipedInto: [String]?
    /// The line ends with `&`: it runs in the background while the next lines run.
    var inBackground = false

    var description: String { (words + (pipedInto.map { ["|"] + $0 } ?? []) + (inBackground ? ["&"] : [])).joined(separator: " ") }

    enum ParseError: Error, Equatable {
        case unterminatedQuote(String)
        case unsupported(character: Character, line: String)
    }

    init(words: [String], pipedInto: [String]? = nil) {
        self.words = words
        self.pipedInto = pipedInto
    }

    init(parsing text: String) throws {
        var inBackground = false
        var commands: [[String]] = [[]]
        var word = ""
        var hasWord = false
        var characters = Array(text)[...]
        func endWord() {
            if hasWord { commands[commands.count - 1].append(word) }
            word = ""
            hasWord = false
        }
        while let character = characters.popFirst() {
            switch character {
            case " ", "\t", "\n":
                endWord()
            case "\\":
                guard let next = characters.popFirst() else { break }
                if next != "\n" { word.append(next); hasWord = true }
            case "'":
                guard let end = characters.firstIndex(of: "'") else { throw ParseError.unterminatedQuote(text) }
                word += String(characters[..<end])
                characters = characters[(end + 1)...]
                hasWord = true
            case "\"":
                hasWord = true
                var closed = false
                while let inner = characters.popFirst() {
                    if inner == "\"" { closed = true; break }
                    if inner == "\\", let escaped = characters.first, "\"\\$`".contains(escaped) {
                        word.append(escaped)
                        characters = characters.dropFirst()
                    } else {
                        word.append(inner)
                    }
                }
                if !closed { throw ParseError.unterminatedQuote(text) }
            case "#" where !hasWord:
                characters = characters.drop { $0 != "\n" }
            case "|":
                endWord()
                commands.append([])
            case "&" where characters.allSatisfy(\.isWhitespace):
                endWord()
                inBackground = true
            case ";", "&", "<", ">", "$", "`", "(", ")":
                throw ParseError.unsupported(character: character, line: text)
            default:
                word.append(character)
                hasWord = true
            }
        }
        endWord()
        words = commands[0]
        pipedInto = commands.count > 1 ? commands[1...].joined(separator: ["|"]).map { $0 } : nil
        self.inBackground = inBackground
    }

    /// The command lines of a block of documentation that run `program`: lines starting with
    /// it (after indentation), with their backslash continuations; other lines are skipped.
    static func lines(running program: String, in text: String) throws -> [ShellCommandLine] {
        var result: [ShellCommandLine] = []
        var pending: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if var command = pending {
                command += "\n" + trimmed
                pending = command
            } else if trimmed.hasPrefix(program + " ") || trimmed == program {
                pending = trimmed
            } else {
                continue
            }
            if let command = pending, !command.hasSuffix("\\") {
                result.append(try ShellCommandLine(parsing: command))
                pending = nil
            }
        }
        if let pending { result.append(try ShellCommandLine(parsing: pending)) }
        return result
    }
}
