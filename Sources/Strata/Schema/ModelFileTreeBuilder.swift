import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

/// Builds a ``ModelFileElement`` tree from XML, stopping at the first error.
final class ModelFileTreeBuilder: NSObject, XMLParserDelegate {
    struct Failure: Error {
        enum Reason {
            /// libxml2's error number (an `NSXMLParserErrorDomain` code).
            case parser(code: Int)
            /// The document declares a document type (`<!DOCTYPE`), which no model file has.
            case documentType
        }

        var line: Int
        var reason: Reason
    }

    private var stack: [ModelFileElement] = []
    private(set) var root: ModelFileElement?
    private(set) var failure: Failure?

    /// Parses `data`; returns the root element or the first error with its line.
    static func parse(_ data: Data) -> Result<ModelFileElement?, Failure> {
        if let line = documentTypeLine(in: data) {
            return .failure(Failure(line: line, reason: .documentType))
        }
        // Given all of its input at once, libxml2 refuses any document over 10 MB ("huge input
        // lookup", error 1). Reading from a stream, XMLParser hands it the document in chunks of
        // 128 KB, so only a single value over 10,000,000 bytes is refused. (libxml2's "huge"
        // option would lift that limit too, with others that guard against hostile documents;
        // XMLParser does not offer it.)
        let parser = XMLParser(stream: InputStream(data: data))
        parser.shouldResolveExternalEntities = false
        parser.shouldProcessNamespaces = false
        let builder = ModelFileTreeBuilder()
        parser.delegate = builder
        _ = parser.parse()
        // libxml2 recovers from some errors and XMLParser on Linux can report success after one,
        // so the delegate's record is what counts.
        if let failure = builder.failure {
            return .failure(failure)
        }
        if let error = parser.parserError as NSError? {
            return .failure(Failure(line: max(parser.lineNumber, 1), reason: .parser(code: error.code)))
        }
        return .success(builder.root)
    }

    /// The line of a document type declaration (`<!DOCTYPE`) before the root element, if any.
    ///
    /// Xcode never writes one in a model file, and a document type is what both XML attacks on
    /// a parser need: an external entity (XXE) reads another file or URL into the document, and
    /// entities defined in terms of each other ("billion laughs") expand a small file into
    /// gigabytes. Refusing the declaration up front keeps the message clear and does not depend
    /// on the protections of the libxml2 version at hand. Only the prolog is read: the XML
    /// declaration, processing instructions, comments and white space before the first tag. (A
    /// document in UTF-16 is left to libxml2, whose errors for entities are described as well.)
    static func documentTypeLine(in data: Data) -> Int? {
        let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]
        let documentType = Array("<!DOCTYPE".utf8)
        let (instructionStart, instructionEnd) = (Array("<?".utf8), Array("?>".utf8))
        let (commentStart, commentEnd) = (Array("<!--".utf8), Array("-->".utf8))
        return data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Int? in
            var index = 0
            var line = 1
            func hasPrefix(_ pattern: [UInt8]) -> Bool {
                guard bytes.count - index >= pattern.count else { return false }
                return pattern.indices.allSatisfy { bytes[index + $0] == pattern[$0] }
            }
            /// Moves past `terminator`, counting lines; false when the document ends first.
            func skip(past terminator: [UInt8]) -> Bool {
                while index < bytes.count {
                    if hasPrefix(terminator) {
                        index += terminator.count
                        return true
                    }
                    if bytes[index] == UInt8(ascii: "\n") { line += 1 }
                    index += 1
                }
                return false
            }
            if hasPrefix(byteOrderMark) { index += byteOrderMark.count }
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\n"):
                    line += 1
                    index += 1
                case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"):
                    index += 1
                default:
                    if hasPrefix(documentType) { return line }
                    if hasPrefix(instructionStart) {
                        guard skip(past: instructionEnd) else { return nil }
                    } else if hasPrefix(commentStart) {
                        guard skip(past: commentEnd) else { return nil }
                    } else {
                        return nil
                    }
                }
            }
            return nil
        }
    }

    func parser(
        _ parser: XMLParser,
        didStartElement elementName: String,
        namespaceURI: String?,
        qualifiedName qName: String?,
        attributes attributeDict: [String: String] = [:]
    ) {
        guard failure == nil else { return }
        stack.append(ModelFileElement(name: elementName, attributes: attributeDict, line: parser.lineNumber))
    }

    func parser(
        _ parser: XMLParser,
        didEndElement elementName: String,
        namespaceURI: String?,
        qualifiedName qName: String?
    ) {
        guard failure == nil, let element = stack.popLast() else { return }
        if stack.isEmpty {
            root = element
        } else {
            stack[stack.count - 1].children.append(element)
        }
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        guard failure == nil else { return }
        failure = Failure(line: max(parser.lineNumber, 1), reason: .parser(code: (parseError as NSError).code))
        parser.abortParsing()
    }

    func parser(_ parser: XMLParser, validationErrorOccurred validationError: any Error) {
        self.parser(parser, parseErrorOccurred: validationError)
    }

    /// A readable description of an `NSXMLParserErrorDomain` code (libxml2's error numbers;
    /// on Linux the error's own description only repeats the number).
    static func describe(code: Int) -> String {
        let text: String? =
            switch code {
            case 1:
                "a single value (an attribute value, a text or a comment) is longer than the XML parser's limit of "
                    + "10,000,000 bytes"
            case 2: "the XML parser ran out of memory"
            case 4: "the document is empty"
            case 5: "the document ends too early, or has content after the root element"
            case 9: "the document contains a character that XML does not allow"
            case 23: "an entity reference (&name;) lacks its closing ';'"
            case 26, 27:
                "the document refers to an entity (&name;) that it does not declare; model files use only &amp;, "
                    + "&lt;, &gt;, &quot; and &apos;"
            case 29:
                "the document refers to an external entity (a file or URL named in its DOCTYPE), which Strata never "
                    + "loads"
            case 38: "an attribute value contains '<'"
            case 39: "an attribute value does not start with a quote"
            case 40: "an attribute value is not closed"
            case 41: "an attribute has no value"
            case 42: "an attribute appears twice in one element"
            case 61: "the document type declaration (DOCTYPE) is not finished"
            case 65: "a space is missing between attributes"
            case 72: "'<' expected"
            case 73: "'>' expected"
            case 74: "'</' expected"
            case 75: "'=' expected after an attribute name"
            case 76: "a closing tag does not match the open element (is a tag above left unclosed?)"
            case 77: "a tag is not finished"
            case 89:
                "the document's entities refer to each other in a loop or expand beyond the parser's limits (an "
                    + "entity-expansion or \"billion laughs\" document)"
            case 104: "an entity in the document could not be expanded"
            default: nil
            }
        return (text.map { $0 + " " } ?? "") + "(XML parser error \(code))"
    }

    /// Whether a parser error means the text is not well-formed XML (rather than well-formed
    /// XML that the parser refuses to read: too large, or using entities).
    static func isSyntaxError(code: Int) -> Bool {
        ![1, 2, 26, 27, 29, 89, 104].contains(code)
    }
}
