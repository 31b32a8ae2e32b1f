import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

/// What a format (GPX, KML) does with the elements the hardened reader hands it. The format sees elements and their
/// text only; every defence lives in ``XMLImportReader``, once.
protocol XMLImportHandler: AnyObject {
    /// An element opens.
    func start(_ element: XMLImportReader.Element, attributes: [String: String], in reader: XMLImportReader)
    /// An element closes, with the text written directly inside it (CDATA included). `reader.parent` is the element
    /// that holds it.
    func end(_ element: XMLImportReader.Element, text: String, in reader: XMLImportReader)
}

/// The one XML reader behind the imports. Before a parser sees a byte, it refuses other encodings, any DOCTYPE or
/// entity declaration (no external entities, no expansion bombs) and processing instructions; while parsing, it
/// refuses any declaration the parser still reports, end tags that do not match (Linux's XMLParser lets some through),
/// and an element with more than ``maxText`` bytes of text. A format's handler only reads elements.
final class XMLImportReader: NSObject, XMLParserDelegate {
    struct Element {
        /// Without its namespace prefix (`gx:Track` → `Track`).
        let name: String
        /// As written (`gx:Track`).
        let qualified: String
    }

    /// Coordinates of a long line are big; every other text is capped where it is used.
    static let maxText = 8 << 20

    let format: ImportFormat
    private let handler: any XMLImportHandler
    private(set) var failure: String?
    /// The open elements, as written.
    private var open: [Element] = []
    private var text = ""
    private weak var parser: XMLParser?

    private init(format: ImportFormat, handler: any XMLImportHandler) {
        self.format = format
        self.handler = handler
    }

    /// Reads `data` into `handler`, or throws the refusal (an ``ImportRefused`` naming the line where it can).
    static func read(_ data: Data, format: ImportFormat, into handler: some XMLImportHandler) throws {
        try refuseUnsafeXML(data, format: format)
        let reader = XMLImportReader(format: format, handler: handler)
        let parser = XMLParser(data: data)
        parser.shouldResolveExternalEntities = false
        parser.delegate = reader
        reader.parser = parser
        // Linux's XMLParser recovers from some errors (a mismatched end tag) and still returns true, so any reported
        // error counts.
        if !parser.parse() || reader.failure != nil || parser.parserError != nil {
            throw ImportRefused(
                message: reader.failure
                    ?? "Line \(parser.lineNumber): the \(format) is not well-formed XML (\(parser.parserError.map { "\($0.localizedDescription)" } ?? "parse error"))."
            )
        }
    }

    /// The line the parser is on, for a handler's message.
    var lineNumber: Int { parser?.lineNumber ?? 0 }

    /// The name (without prefix) of the element holding the one being handled.
    var parent: String? { open.last?.name }

    /// Whether the element being handled sits (at any depth) inside an element of this name (without prefix).
    func isInside(_ name: String) -> Bool { open.contains { $0.name == name } }

    /// Ends the read with this message (the first failure wins).
    func fail(_ message: String) {
        if failure == nil { failure = message }
        parser?.abortParsing()
    }

    // MARK: XMLParserDelegate

    func parser(
        _ parser: XMLParser,
        didStartElement qualified: String,
        namespaceURI: String?,
        qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        let element = Element(name: qualified.split(separator: ":").last.map(String.init) ?? qualified, qualified: qualified)
        text = ""
        handler.start(element, attributes: attributes, in: self)
        open.append(element)
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { append(string) }

    func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) { append(String(decoding: CDATABlock, as: UTF8.self)) }

    private func append(_ string: String) {
        if text.utf8.count + string.utf8.count > Self.maxText {
            fail("Line \(lineNumber): an element holds more than \(Wording.megabytes(Self.maxText)) of text.")
            return
        }
        text += string
    }

    func parser(_ parser: XMLParser, didEndElement qualified: String, namespaceURI: String?, qualifiedName: String?) {
        guard let element = open.last, element.qualified == qualified else {
            fail("Line \(lineNumber): </\(qualified)> does not close <\(open.last?.qualified ?? "nothing")>.")
            return
        }
        open.removeLast()
        let value = text
        text = ""
        handler.end(element, text: value, in: self)
    }

    // Any declaration the parser reports ends the import, whatever spelling got it past the byte check.
    func parser(_ parser: XMLParser, foundInternalEntityDeclarationWithName name: String, value: String?) {
        fail("The \(format) file declares entities, which are not allowed.")
    }

    func parser(_ parser: XMLParser, foundExternalEntityDeclarationWithName name: String, publicID: String?, systemID: String?) {
        fail("The \(format) file declares entities, which are not allowed.")
    }

    func parser(
        _ parser: XMLParser,
        foundUnparsedEntityDeclarationWithName name: String,
        publicID: String?,
        systemID: String?,
        notationName: String?
    ) {
        fail("The \(format) file declares entities, which are not allowed.")
    }

    func parser(_ parser: XMLParser, foundNotationDeclarationWithName name: String, publicID: String?, systemID: String?) {
        fail("The \(format) file declares a DOCTYPE, which is not allowed.")
    }

    func parser(_ parser: XMLParser, foundElementDeclarationWithName elementName: String, model: String) {
        fail("The \(format) file declares a DOCTYPE, which is not allowed.")
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        let code = (parseError as NSError).code
        fail(
            "Line \(parser.lineNumber): the \(format) is not well-formed XML (\(code == 76 ? "an end tag does not match its start tag" : "XML error \(code)"))."
        )
    }

    // MARK: Before parsing

    /// The checks every XML import passes before a parser sees it.
    static func refuseUnsafeXML(_ data: Data, format: ImportFormat) throws {
        // The DOCTYPE check below reads UTF-8 bytes: a file that declares another encoding (UTF-7 can spell `<!DOCTYPE`
        // as `+ADw-!DOCTYPE`) would be decoded by the parser into something the check never saw.
        if let encoding = declaredEncoding(data), !["utf-8", "utf8"].contains(encoding.lowercased()) {
            throw ImportRefused(message: "The \(format) file declares the encoding “\(encoding.prefix(40))”; only UTF-8 is accepted.")
        }
        // Neither GPX nor KML needs a DTD: refusing one outright rules out external entities and entity expansion bombs.
        // The parser's own reports of any declaration (the delegate above) are a second line.
        if data.range(of: Data("<!DOCTYPE".utf8)) != nil || data.range(of: Data("<!ENTITY".utf8)) != nil {
            throw ImportRefused(message: "The \(format) file declares a DOCTYPE or entities, which are not allowed.")
        }
        // Nor processing instructions (`<?target data?>`), but the XML declaration at the start: Foundation's XMLParser
        // on Linux passes an instruction without data to strlen as a null pointer and the whole server crashes
        // (swift-corelibs-foundation, `_NSXMLParserProcessingInstruction`; found by scripts/fuzz.sh importer).
        if hasProcessingInstruction(data) {
            throw ImportRefused(message: "The \(format) file contains processing instructions (<?…?>), which \(format) does not use.")
        }
    }

    /// Whether `<?` appears anywhere but as the XML declaration at the very start (after a BOM and blanks). `<` cannot
    /// stand raw in text, so outside comments and CDATA (where refusing it costs nothing) this is an instruction.
    static func hasProcessingInstruction(_ data: Data) -> Bool {
        let marker = Data("<?".utf8)
        var start = data.startIndex
        let leading = data.prefix { [0xEF, 0xBB, 0xBF, 0x20, 0x09, 0x0A, 0x0D].contains($0) }.count
        let afterLeading = data.index(data.startIndex, offsetBy: leading)
        while let found = data.range(of: marker, in: start..<data.endIndex) {
            let declaration =
                found.lowerBound == afterLeading && data[found.lowerBound...].starts(with: Data("<?xml".utf8))
                && data.count > found.lowerBound - data.startIndex + 5
                && [0x20, 0x09, 0x0A, 0x0D].contains(data[data.index(found.lowerBound, offsetBy: 5)])
            if !declaration { return true }
            start = found.upperBound
        }
        return false
    }

    /// The `encoding` of the XML declaration (`<?xml version="1.0" encoding="…"?>`), if the file starts with one.
    /// A declaration closed wrongly (`…encoding="UTF-7">`) is read up to its first `>`: libxml2 still switches to the
    /// encoding it names (and crashes on UTF-7, found by scripts/fuzz.sh importer), so the check must see it too.
    /// (UTF-16 and UTF-32 by byte order mark are refused earlier, in `TourImport.parse`.)
    static func declaredEncoding(_ data: Data) -> String? {
        let head = String(decoding: data.prefix(300), as: UTF8.self).trimmingCharacters(
            in: CharacterSet(charactersIn: "\u{FEFF}").union(.whitespacesAndNewlines)
        )
        guard head.hasPrefix("<?xml") else { return nil }
        let end = head.range(of: ">")?.lowerBound ?? head.endIndex
        let declaration = head[..<end]
        guard let key = declaration.range(of: "encoding") else { return nil }
        let rest = declaration[key.upperBound...].drop { $0 == " " || $0 == "=" || $0 == "\t" }
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return String(rest) }
        return String(rest.dropFirst().prefix { $0 != quote })
    }
}
