import Foundation
import Testing

@testable import Strata

@Suite struct XcodeModelTests {
    // MARK: Helpers

    private func fixture(_ path: String) throws -> URL {
        let root = try #require(Bundle.module.url(forResource: "Fixtures", withExtension: nil))
        return root.appendingPathComponent(path)
    }

    private func library() throws -> XcodeModel {
        try XcodeModel.load(contentsOf: fixture("Library.xcdatamodel"))
    }

    /// A model with one entity `Thing`; `body` goes on line 3 onwards.
    private func xml(_ body: String) -> Data {
        Data(
            """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0"><entity name="Thing">
            \(body)
            </entity></model>
            """.utf8)
    }

    /// Runs `body` with a fresh temporary directory that is removed afterwards.
    private func withTemporaryDirectory(_ body: (URL) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("XcodeModelTests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try body(directory)
    }

    private func writeVersion(_ name: String, in bundle: URL, entity: String = "Note") throws {
        let folder = bundle.appendingPathComponent(name + ".xcdatamodel", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let contents = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model><entity name="\(entity)"><attribute name="text" attributeType="String"/></entity></model>
            """
        try Data(contents.utf8).write(to: folder.appendingPathComponent("contents"))
    }

    private func writeCurrentVersion(_ fileName: String, in bundle: URL) throws {
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>\(fileName)</string></dict></plist>
            """
        try Data(plist.utf8).write(to: bundle.appendingPathComponent(".xccurrentversion"))
    }

    // MARK: Attributes

    @Test func mapsEveryAttributeType() throws {
        let schema = try library().schema
        let book = try #require(schema.entity(named: "Book"))
        let reader = try #require(schema.entity(named: "Reader"))
        let expected: [String: AttributeType] = [
            "id": .uuid, "title": .string, "isbn": .string, "price": .decimal, "pages": .integer16,
            "rating": .double, "weight": .float, "available": .boolean, "cover": .binaryData, "link": .uri,
            "tags": .codable, "publishedAt": .date, "note": .string, "archivedTitle": .string, "copies": .integer64,
        ]
        #expect(Dictionary(uniqueKeysWithValues: book.attributes.map { ($0.name, $0.type) }) == expected)
        #expect(reader.attribute(named: "cardNumber")?.type == .integer32)
        let used = Set(schema.entities.flatMap { $0.attributes.map(\.type) })
        #expect(used == Set(AttributeType.allCases))
        // File order is kept.
        #expect(
            book.attributes.map(\.name) == [
                "id", "title", "isbn", "price", "pages", "rating", "weight", "available", "cover", "link", "tags",
                "publishedAt", "note", "archivedTitle", "copies",
            ])
        #expect(schema.entities.map(\.name) == ["Author", "Book", "Person", "Reader"])
    }

    @Test func mapsAttributeOptions() throws {
        let schema = try library().schema
        let book = try #require(schema.entity(named: "Book"))
        func attribute(_ name: String) throws -> AttributeDescription {
            try #require(book.attribute(named: name))
        }

        let id = try attribute("id")
        #expect(!id.isOptional && !id.isTransient && !id.isIndexed && !id.allowsExternalBinaryDataStorage)
        #expect(id.defaultValue == .null && id.validation.isEmpty && id.renamingIdentifier == nil)

        let title = try attribute("title")
        #expect(title.defaultValue == .string("Untitled"))
        #expect(title.validation.minimumLength == 1 && title.validation.maximumLength == 200)
        #expect(title.validation.minimumValue == nil && title.validation.maximumValue == nil)

        #expect(try attribute("isbn").validation.pattern == "97[89][0-9]{10}")
        #expect(try attribute("price").defaultValue == .decimal(0))

        let pages = try attribute("pages")
        #expect(pages.defaultValue == .integer(100))
        #expect(pages.validation.minimumValue == .integer(1) && pages.validation.maximumValue == .integer(5000))

        let rating = try attribute("rating")
        #expect(rating.isOptional)
        #expect(rating.defaultValue == .double(2.5))
        #expect(rating.validation.minimumValue == .double(0) && rating.validation.maximumValue == .double(5))

        #expect(try attribute("weight").defaultValue == .float(0.25))
        #expect(try attribute("available").defaultValue == .boolean(true))

        let cover = try attribute("cover")
        #expect(cover.allowsExternalBinaryDataStorage && cover.isOptional)
        #expect(cover.validation.maximumLength == 1_048_576 && cover.validation.minimumLength == nil)

        #expect(try attribute("link").defaultValue == .url(try #require(URL(string: "https://example.com/books"))))

        let tags = try attribute("tags")
        #expect(tags.valueTypeName == "[String]" && tags.isOptional)
        #expect(try attribute("title").valueTypeName == nil)

        let publishedAt = try attribute("publishedAt")
        #expect(publishedAt.defaultValue == .date(Date(timeIntervalSinceReferenceDate: 725_760_000)))
        #expect(publishedAt.validation.minimumValue == .date(Date(timeIntervalSinceReferenceDate: 0)))
        #expect(!publishedAt.isOptional)

        let note = try attribute("note")
        #expect(note.isTransient && note.isOptional)

        let archived = try attribute("archivedTitle")
        #expect(archived.preservesValueOnDeletion && !archived.isOptional)
        #expect(archived.renamingIdentifier == "formerTitle")
        #expect(!title.preservesValueOnDeletion)

        #expect(try attribute("copies").defaultValue == .integer(1))

        let cardNumber = try #require(schema.entity(named: "Reader")?.attribute(named: "cardNumber"))
        #expect(cardNumber.isIndexed && cardNumber.defaultValue == .integer(0))
        #expect(schema.entity(named: "Reader")?.indexes.map(\.name) == ["by_cardNumber"])
    }

    @Test func mapsModelAndEntityOptions() throws {
        let schema = try library().schema
        #expect(schema.versionIdentifier == "library-1")
        let book = try #require(schema.entity(named: "Book")).declaration
        #expect(book.managedObjectClassName == "BookObject")
        #expect(book.versionHashModifier == "v2")
        #expect(book.renamingIdentifier == nil)
        #expect(schema.entity(named: "Person")?.declaration.renamingIdentifier == "Human")

        let unnamed = try XcodeModel.parse(xml(#"<attribute name="a" attributeType="String"/>"#))
        #expect(unnamed.name == "Model")
        #expect(unnamed.schema.versionIdentifier == nil)
        let empty = try XcodeModel.parse(
            Data(#"<model userDefinedModelVersionIdentifier=""><entity name="A"/></model>"#.utf8), name: "Empty")
        #expect(empty.name == "Empty" && empty.schema.versionIdentifier == nil)
    }

    @Test(arguments: [
        ("Integer 16", "-32768", AttributeValue.integer(-32768)),
        ("Integer 32", "2147483647", .integer(2_147_483_647)),
        ("Integer 64", "-9000000000", .integer(-9_000_000_000)),
        ("Double", "-1.5e3", .double(-1500)),
        ("Float", "3.25", .float(3.25)),
        ("Decimal", "12.345", .decimal(Decimal(string: "12.345", locale: Locale(identifier: "en_US_POSIX")) ?? 0)),
        ("String", " spaced ", .string(" spaced ")),
        ("Boolean", "NO", .boolean(false)),
        ("Boolean", "1", .boolean(true)),
        ("Boolean", "true", .boolean(true)),
        ("Boolean", "0", .boolean(false)),
        ("Date", "86400.5", .date(Date(timeIntervalSinceReferenceDate: 86400.5))),
        ("UUID", "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F") ?? UUID())),
        ("URI", "https://example.com/a?b=c", .url(URL(string: "https://example.com/a?b=c") ?? URL(fileURLWithPath: "/"))),
    ])
    func parsesDefaultValues(typeName: String, text: String, expected: AttributeValue) throws {
        let model = try XcodeModel.parse(
            xml(#"<attribute name="value" attributeType="\#(typeName)" defaultValueString="\#(text)"/>"#))
        let attribute = try #require(model.schema.entity(named: "Thing")?.attribute(named: "value"))
        #expect(attribute.type == AttributeType(xcodeName: typeName))
        #expect(attribute.defaultValue == expected)
        #expect(!attribute.isOptional, "a missing optional attribute means non-optional")
    }

    @Test func readsExplicitFlagValues() throws {
        let model = try XcodeModel.parse(
            xml(
                #"""
                <attribute name="a" optional="NO" transient="no" indexed="false" attributeType="String"/>
                <attribute name="b" optional="true" indexed="yes" attributeType="String"/>
                <attribute name="c" optional="YES" transient="1" attributeType="String"/>
                """#))
        let thing = try #require(model.schema.entity(named: "Thing"))
        let a = try #require(thing.attribute(named: "a"))
        let b = try #require(thing.attribute(named: "b"))
        #expect(!a.isOptional && !a.isTransient && !a.isIndexed)
        #expect(b.isOptional && !b.isTransient && b.isIndexed)
        #expect(thing.attribute(named: "c")?.isTransient == true)
    }

    @Test func readsXcodeDateIntervalSpelling() throws {
        let model = try XcodeModel.parse(
            xml(#"<attribute name="due" attributeType="Date" defaultDateTimeInterval="60" minDateTimeInterval="0" maxDateTimeInterval="120"/>"#))
        let due = try #require(model.schema.entity(named: "Thing")?.attribute(named: "due"))
        #expect(due.defaultValue == .date(Date(timeIntervalSinceReferenceDate: 60)))
        #expect(due.validation.minimumValue == .date(Date(timeIntervalSinceReferenceDate: 0)))
        #expect(due.validation.maximumValue == .date(Date(timeIntervalSinceReferenceDate: 120)))
    }

    @Test(arguments: [
        ("Integer 16", "40000"),
        ("Integer 32", "twelve"),
        ("Double", "1,5"),
        ("Decimal", "12abc"),
        ("Boolean", "maybe"),
        ("Date", "yesterday"),
        ("UUID", "not-a-uuid"),
    ])
    func rejectsUnparseableDefaults(typeName: String, text: String) throws {
        let error = try #require(throws: StrataError.self) {
            try XcodeModel.parse(
                xml(#"<attribute name="value" attributeType="\#(typeName)" defaultValueString="\#(text)"/>"#))
        }
        #expect(error.code == .malformedModelFile)
        #expect(error.line == 3)
        #expect(error.entityName == "Thing" && error.propertyName == "value")
        #expect(error.message.contains("'\(text)'"))
    }

    @Test func rejectsUnparseableBounds() throws {
        let length = try #require(throws: StrataError.self) {
            try XcodeModel.parse(xml(#"<attribute name="s" attributeType="String" maxValueString="-4"/>"#))
        }
        #expect(length.code == .malformedModelFile && length.line == 3 && length.propertyName == "s")
        let number = try #require(throws: StrataError.self) {
            try XcodeModel.parse(xml(#"<attribute name="n" attributeType="Integer 16" minValueString="1.5"/>"#))
        }
        #expect(number.code == .malformedModelFile && number.line == 3 && number.propertyName == "n")
    }

    // MARK: Relationships, inheritance, constraints, indexes, configurations

    @Test func mapsRelationships() throws {
        let schema = try library().schema
        let authors = try #require(schema.entity(named: "Book")?.relationship(named: "authors"))
        #expect(authors.destinationEntityName == "Author" && authors.inverseName == "books")
        #expect(authors.isToMany && authors.isOrdered && authors.isOptional)
        #expect(authors.deleteRule == .nullify, "a missing deletionRule means Nullify")

        let books = try #require(schema.entity(named: "Author")?.relationship(named: "books"))
        #expect(books.isToMany && !books.isOrdered)
        #expect(books.deleteRule == .noAction && books.inverseName == "authors")

        let reader = try #require(schema.entity(named: "Book")?.relationship(named: "reader"))
        #expect(!reader.isToMany && !reader.isOrdered && reader.isOptional)
        #expect(reader.deleteRule == .cascade && reader.inverseName == "borrowed")
        #expect(reader.minimumCount == 0 && reader.maximumCount == 0, "to-one ignores minCount/maxCount")

        let borrowed = try #require(schema.entity(named: "Reader")?.relationship(named: "borrowed"))
        #expect(borrowed.isToMany && borrowed.destinationEntityName == "Book")
        #expect(borrowed.deleteRule == .deny && borrowed.inverseName == "reader")
        #expect(borrowed.minimumCount == 1 && borrowed.maximumCount == 5)

        let movies = try XcodeModelBundle.load(contentsOf: fixture("Movies.xcdatamodeld")).currentVersion.schema
        #expect(movies.entity(named: "Movie")?.relationship(named: "reviews")?.deleteRule == .cascade)
        #expect(movies.entity(named: "Review")?.relationship(named: "movie")?.deleteRule == .nullify)

        let required = try XcodeModel.parse(
            Data(
                """
                <model><entity name="A"><relationship name="b" maxCount="1" destinationEntity="B" inverseName="a" inverseEntity="B"/></entity>
                <entity name="B"><relationship name="a" optional="YES" toMany="YES" ordered="YES" deletionRule="Deny" destinationEntity="A"/></entity></model>
                """.utf8))
        #expect(required.schema.entity(named: "A")?.relationship(named: "b")?.isOptional == false)
        #expect(required.schema.entity(named: "B")?.relationship(named: "a")?.inverseName == "b")
    }

    @Test func rejectsUnknownDeletionRule() throws {
        let error = try #require(throws: StrataError.self) {
            try XcodeModel.parse(
                xml(#"<relationship name="r" deletionRule="Explode" destinationEntity="Thing"/>"#))
        }
        #expect(error.code == .malformedModelFile && error.line == 3 && error.propertyName == "r")
        #expect(error.message.contains("Explode"))
    }

    @Test func resolvesInheritance() throws {
        let schema = try library().schema
        let person = try #require(schema.entity(named: "Person"))
        let author = try #require(schema.entity(named: "Author"))
        let reader = try #require(schema.entity(named: "Reader"))
        #expect(person.isAbstract && !author.isAbstract && !reader.isAbstract)
        #expect(Set(person.subentityNames) == ["Author", "Reader"])
        #expect(author.superentity?.name == "Person" && reader.superentity?.name == "Person")
        #expect(author.attributes.map(\.name) == ["name", "birthDate", "penName"])
        #expect(reader.attributes.map(\.name) == ["name", "birthDate", "cardNumber"])
        #expect(author.attribute(named: "birthDate")?.isOptional == true)
        #expect(author.attribute(named: "name")?.isOptional == false)
        #expect(schema.entity(named: "Book")?.superentity == nil)
    }

    @Test func mapsUniquenessConstraints() throws {
        let book = try #require(try library().schema.entity(named: "Book"))
        #expect(book.uniquenessConstraints == [["title", "isbn"], ["id"]])
        #expect(try library().schema.entity(named: "Author")?.uniquenessConstraints == [])
    }

    @Test func mapsFetchIndexes() throws {
        let book = try #require(try library().schema.entity(named: "Book"))
        #expect(
            book.declaration.indexes == [
                IndexDescription(
                    name: "byTitleAndDate", elements: [.init("title", ascending: true), .init("publishedAt", ascending: false)]),
                // The expression element is skipped; the property element stays.
                IndexDescription(name: "byPrice", elements: [.init("price")]),
            ])
    }

    @Test func readsCompoundIndexesOfOldXcode() throws {
        let model = try XcodeModel.parse(
            xml(
                #"""
                <attribute name="a" attributeType="String"/><attribute name="b" attributeType="String"/>
                <compoundIndexes><compoundIndex><index value="a"/><index value="b"/></compoundIndex></compoundIndexes>
                """#))
        #expect(model.schema.entity(named: "Thing")?.declaration.indexes == [IndexDescription(["a", "b"])])
        #expect(model.warnings.isEmpty)
    }

    @Test func mapsConfigurations() throws {
        let schema = try library().schema
        #expect(schema.configurations.mapValues(Set.init) == ["Catalog": ["Book", "Author"]])
        #expect(schema.entities(inConfiguration: "Catalog").map(\.name) == ["Author", "Book"])
    }

    // MARK: Warnings

    @Test func warnsAboutUnsupportedElementsWithLines() throws {
        let warnings = try library().warnings
        #expect(warnings.count == 3, "\(warnings)")
        #expect(warnings.contains { $0.contains("line 25") && $0.contains("<fetchedProperty>") && $0.contains("Book") })
        #expect(warnings.contains { $0.contains("line 43") && $0.contains("byPrice") && $0.contains("expression") })
        #expect(warnings.contains { $0.contains("line 57") && $0.contains("<fetchRequest>") })
        // Layout, user info and the fetch request nested in the fetched property stay quiet.
        #expect(!warnings.contains { $0.contains("<elements>") || $0.contains("<element>") || $0.contains("userInfo") })
        #expect(!warnings.contains { $0.contains("line 26") })
    }

    @Test func skipsIndexWithOnlyExpressions() throws {
        let model = try XcodeModel.parse(
            xml(
                #"""
                <attribute name="a" attributeType="String"/>
                <fetchIndex name="byLength"><fetchIndexElement expression="a.length" expressionType="Integer 64" order="ascending"/></fetchIndex>
                """#), name: "Lengths")
        #expect(model.schema.entity(named: "Thing")?.declaration.indexes == [])
        #expect(model.warnings.count == 2)
        #expect(model.warnings.allSatisfy { $0.hasPrefix("Lengths, line 4:") })
    }

    // MARK: Versioned bundles

    @Test func loadsVersionedBundle() throws {
        let bundle = try XcodeModelBundle.load(contentsOf: fixture("Movies.xcdatamodeld"))
        #expect(bundle.versions.map(\.name) == ["Movies", "Movies 2", "Movies 3"])
        #expect(bundle.versions.map(\.schema.versionIdentifier) == ["1", "2", "3"])
        #expect(bundle.currentVersionName == "Movies 3")
        #expect(bundle.currentVersion.name == "Movies 3")
        let movie = try #require(bundle.currentVersion.schema.entity(named: "Movie"))
        #expect(movie.attributes.map(\.name) == ["title", "year", "score", "runtime"])
        #expect(movie.attribute(named: "score")?.renamingIdentifier == "rating")

        #expect(bundle.version(named: "Movies 2")?.schema.versionIdentifier == "2")
        #expect(bundle.version(named: "Movies.xcdatamodel")?.schema.versionIdentifier == "1")
        #expect(bundle.version(named: "Movies 4") == nil)
    }

    @Test func bundleVersionsDiffer() throws {
        let bundle = try XcodeModelBundle.load(contentsOf: fixture("Movies.xcdatamodeld"))
        let v1 = try #require(bundle.version(named: "Movies"))
        let v2 = try #require(bundle.version(named: "Movies 2"))
        let v3 = try #require(bundle.version(named: "Movies 3"))
        #expect(v2.schema.difference(from: v1.schema).changes == [.propertyAdded(entity: "Movie", property: "runtime")])
        #expect(
            v3.schema.difference(from: v2.schema).changes == [.propertyRenamed(entity: "Movie", from: "rating", to: "score")])
        #expect(v3.schema.versionHash != v2.schema.versionHash)
    }

    @Test func ordersVersionNamesNumerically() throws {
        try withTemporaryDirectory { directory in
            let bundleURL = directory.appendingPathComponent("M.xcdatamodeld")
            for name in ["M 10", "M", "M 2", "m 3"] { try writeVersion(name, in: bundleURL) }
            try writeCurrentVersion("M 10.xcdatamodel", in: bundleURL)
            let bundle = try XcodeModelBundle.load(contentsOf: bundleURL)
            #expect(bundle.versions.map(\.name) == ["M", "M 2", "m 3", "M 10"])
            #expect(bundle.currentVersion.name == "M 10")
        }
        #expect(XcodeModelBundle.precedes("Model 2", "Model 10"))
        #expect(!XcodeModelBundle.precedes("Model 10", "Model 2"))
    }

    @Test func currentVersionRules() throws {
        try withTemporaryDirectory { directory in
            // One version and no .xccurrentversion: that version is current.
            let single = directory.appendingPathComponent("Single.xcdatamodeld")
            try writeVersion("Single", in: single)
            let bundle = try XcodeModelBundle.load(contentsOf: single)
            #expect(bundle.currentVersionName == "Single" && bundle.versions.count == 1)

            // Two versions and no .xccurrentversion: ambiguous.
            let two = directory.appendingPathComponent("Two.xcdatamodeld")
            try writeVersion("Two", in: two)
            try writeVersion("Two 2", in: two)
            let ambiguous = try #require(throws: StrataError.self) { try XcodeModelBundle.load(contentsOf: two) }
            #expect(ambiguous.code == .malformedModelFile && ambiguous.message.contains(".xccurrentversion"))

            // .xccurrentversion naming a version the bundle lacks.
            try writeCurrentVersion("Two 7.xcdatamodel", in: two)
            let missing = try #require(throws: StrataError.self) { try XcodeModelBundle.load(contentsOf: two) }
            #expect(missing.code == .malformedModelFile && missing.message.contains("Two 7"))

            // An empty bundle.
            let empty = directory.appendingPathComponent("Empty.xcdatamodeld")
            try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
            let none = try #require(throws: StrataError.self) { try XcodeModelBundle.load(contentsOf: empty) }
            #expect(none.code == .malformedModelFile)

            // A plain .xcdatamodel loads as a bundle of one.
            let plain = try XcodeModelBundle.load(contentsOf: single.appendingPathComponent("Single.xcdatamodel"))
            #expect(plain.versions.map(\.name) == ["Single"] && plain.currentVersionName == "Single")
        }
    }

    // MARK: Loading and errors

    @Test func loadsFromContentsFile() throws {
        let viaFile = try XcodeModel.load(contentsOf: fixture("Library.xcdatamodel/contents"))
        let viaFolder = try library()
        #expect(viaFile.name == "Library" && viaFolder.name == "Library")
        #expect(viaFile.schema.versionHash == viaFolder.schema.versionHash)
        #expect(viaFile.warnings == viaFolder.warnings)
    }

    @Test func malformedXMLReportsLine() throws {
        let url = try fixture("Broken.xcdatamodel")
        let error = try #require(throws: StrataError.self) { try XcodeModel.load(contentsOf: url) }
        #expect(error.code == .malformedModelFile)
        // Line 4 leaves <attribute> open; the parser finds the mismatch at `</entity>` on line 6.
        #expect(error.line == 6)
        #expect(error.message.contains("line 6"))
        #expect(error.fileURL?.lastPathComponent == "contents")
        #expect(error.fileURL?.deletingLastPathComponent().lastPathComponent == "Broken.xcdatamodel")

        let unquoted = try #require(throws: StrataError.self) {
            try XcodeModel.parse(xml(#"<attribute name="a" attributeType=String/>"#))
        }
        #expect(unquoted.code == .malformedModelFile && unquoted.line == 3 && unquoted.fileURL == nil)
    }

    @Test func rejectsDocumentsThatAreNotModels() throws {
        let plist = try #require(throws: StrataError.self) {
            try XcodeModel.parse(Data("<?xml version=\"1.0\"?>\n<plist version=\"1.0\"><dict/></plist>".utf8))
        }
        #expect(plist.code == .malformedModelFile && plist.line == 2 && plist.message.contains("<plist>"))
        let empty = try #require(throws: StrataError.self) { try XcodeModel.parse(Data()) }
        #expect(empty.code == .malformedModelFile)
        let nameless = try #require(throws: StrataError.self) {
            try XcodeModel.parse(Data("<model>\n<entity/>\n</model>".utf8))
        }
        #expect(nameless.code == .malformedModelFile && nameless.line == 2)
    }

    @Test func unknownAttributeTypeNamesEntityAndProperty() throws {
        let url = try fixture("BadType.xcdatamodel")
        let error = try #require(throws: StrataError.self) { try XcodeModel.load(contentsOf: url) }
        #expect(error.code == .malformedModelFile)
        #expect(error.entityName == "Photo" && error.propertyName == "image")
        #expect(error.line == 5)
        #expect(error.message.contains("Photo.image") && error.message.contains("'Picture'"))

        let untyped = try #require(throws: StrataError.self) {
            try XcodeModel.parse(xml(#"<attribute name="blob" optional="YES"/>"#))
        }
        #expect(untyped.code == .malformedModelFile && untyped.propertyName == "blob" && untyped.line == 3)
    }

    @Test func missingPathsAreNotFound() throws {
        let nowhere = try fixture("Nowhere.xcdatamodel")
        let model = try #require(throws: StrataError.self) { try XcodeModel.load(contentsOf: nowhere) }
        #expect(model.code == .modelFileNotFound && model.fileURL == nowhere)
        let bundle = try #require(throws: StrataError.self) {
            try XcodeModelBundle.load(contentsOf: fixture("Nowhere.xcdatamodeld"))
        }
        #expect(bundle.code == .modelFileNotFound)
        // A versioned bundle has no contents file of its own.
        let versioned = try #require(throws: StrataError.self) {
            try XcodeModel.load(contentsOf: fixture("Movies.xcdatamodeld"))
        }
        #expect(versioned.code == .modelFileNotFound && versioned.message.contains("XcodeModelBundle"))
    }

    @Test func schemaProblemsPropagate() throws {
        let error = try #require(throws: StrataError.self) {
            try XcodeModel.parse(xml(#"<relationship name="owner" optional="YES" maxCount="1" destinationEntity="Ghost"/>"#))
        }
        #expect(error.code == .invalidSchema)
        #expect(error.details.contains { $0.code == .unknownDestination && $0.propertyName == "owner" })
    }

    // MARK: Large and hostile files (issue 12, item 9)

    /// A valid model of `entities` entities with `attributes` string attributes each, whose
    /// default values are `valueLength` characters long.
    private func largeModel(entities: Int, attributes: Int, valueLength: Int) -> Data {
        var xml = #"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>"# + "\n"
        xml += #"<model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">"# + "\n"
        let value = String(repeating: "v", count: valueLength)
        for entity in 0..<entities {
            xml += #"<entity name="Entity\#(entity)" representedClassName="Entity\#(entity)" syncable="YES">"# + "\n"
            for attribute in 0..<attributes {
                xml += #"    <attribute name="attribute\#(attribute)" attributeType="String" "#
                xml += #"defaultValueString="\#(value)"/>"#
                xml += "\n"
            }
            xml += "</entity>\n"
        }
        return Data((xml + "</model>\n").utf8)
    }

    @Test func loadsModelsOverTenMegabytes() throws {
        // libxml2 refuses a document over 10 MB given at once; the parser now reads it in chunks.
        let data = largeModel(entities: 150, attributes: 20, valueLength: 5_000)
        #expect(data.count > 15_000_000)
        try withTemporaryDirectory { directory in
            let folder = directory.appendingPathComponent("Large.xcdatamodel", isDirectory: true)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try data.write(to: folder.appendingPathComponent("contents"))
            let model = try XcodeModel.load(contentsOf: folder)
            #expect(model.schema.entities.count == 150)
            let attribute = try #require(model.schema.entity(named: "Entity149")?.attribute(named: "attribute19"))
            #expect(attribute.defaultValue == .string(String(repeating: "v", count: 5_000)))
        }
        #expect(try XcodeModel.parse(data).schema.entities.count == 150)
    }

    @Test func aSingleValueOverTheParsersLimitIsRefusedWithTheLimit() throws {
        let value = String(repeating: "x", count: 11_000_000)
        let error = try #require(throws: StrataError.self) {
            try XcodeModel.parse(xml(#"<attribute name="a" attributeType="String" defaultValueString="\#(value)"/>"#))
        }
        #expect(error.code == .malformedModelFile && error.line == 3)
        #expect(error.message.contains("longer than the XML parser's limit of 10,000,000 bytes"), "\(error.message)")
        #expect(error.message.hasPrefix("The model 'Model' cannot be read:"))
    }

    @Test(arguments: [
        // XXE: an external entity reads another file into a value.
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE model [ <!ENTITY xxe SYSTEM "file:///etc/passwd"> ]>
        <model><entity name="Thing"><attribute name="a" attributeType="String" defaultValueString="&xxe;"/></entity></model>
        """,
        // "Billion laughs": entities that expand to gigabytes.
        """
        <?xml version="1.0"?>
        <!DOCTYPE model [
         <!ENTITY lol "lol">
         <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
         <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
         <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
         <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
         <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
         <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
         <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
         <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
         <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
        ]>
        <model><entity name="Thing"><attribute name="a" attributeType="String" defaultValueString="&lol9;"/></entity></model>
        """,
        // A document type after a comment, even one with no entities.
        """
        <?xml version="1.0"?>
        <!-- made by hand -->
        <!DOCTYPE model SYSTEM "http://example.com/model.dtd">
        <model><entity name="Thing"/></model>
        """,
        // After a byte order mark.
        "\u{FEFF}<?xml version=\"1.0\"?>\n<!DOCTYPE model [ <!ENTITY e \"x\"> ]>\n<model><entity name=\"Thing\"/></model>",
    ])
    func documentTypesAreRefusedWithAClearMessage(_ document: String) throws {
        let error = try #require(throws: StrataError.self) {
            try XcodeModel.parse(Data(document.utf8), name: "Hostile")
        }
        #expect(error.code == .malformedModelFile)
        #expect(error.line == (document.contains("<!--") ? 3 : 2))
        #expect(
            error.message.hasPrefix("The model 'Hostile' declares a document type (<!DOCTYPE …> at line"),
            "\(error.message)")
        #expect(error.message.contains("XXE") && error.message.contains("billion laughs"))
        #expect(error.message.contains("Remove the DOCTYPE"))
    }

    @Test func entityErrorsOfTheParserHaveMessagesToo() throws {
        // In UTF-16 the document type reaches libxml2, which refuses the external entity.
        let document = """
            <?xml version="1.0" encoding="UTF-16"?>
            <!DOCTYPE model [ <!ENTITY xxe SYSTEM "file:///etc/passwd"> ]>
            <model><entity name="Thing"><attribute name="a" attributeType="String" defaultValueString="&xxe;"/></entity></model>
            """
        var utf16 = Data([0xFF, 0xFE])
        for unit in document.utf16 { utf16.append(contentsOf: [UInt8(unit & 0xFF), UInt8(unit >> 8)]) }
        let error = try #require(throws: StrataError.self) { try XcodeModel.parse(utf16) }
        #expect(error.code == .malformedModelFile)
        #expect(error.message.contains("external entity"), "\(error.message)")
        for code in [1, 26, 29, 89] {
            #expect(ModelFileTreeBuilder.describe(code: code).count > "(XML parser error \(code))".count)
        }
    }

    @Test func messagesNameTheModelInMidSentenceInLowerCase() throws {
        // Was "Thing.blob in The model 'Model' has no attributeType".
        let untyped = try #require(throws: StrataError.self) {
            try XcodeModel.parse(xml(#"<attribute name="blob" optional="YES"/>"#))
        }
        #expect(untyped.message.hasPrefix("Thing.blob in the model 'Model' has no attributeType"), "\(untyped.message)")
        let fromFile = try #require(throws: StrataError.self) {
            try XcodeModel.load(contentsOf: fixture("BadType.xcdatamodel"))
        }
        #expect(fromFile.message.hasPrefix("Photo.image in the model file /"), "\(fromFile.message)")
        let nameless = try #require(throws: StrataError.self) {
            try XcodeModel.parse(Data("<model>\n<entity/>\n</model>".utf8), name: "Notes")
        }
        #expect(nameless.message.hasPrefix("An entity in the model 'Notes' has no 'name'"), "\(nameless.message)")
        // At the start of a sentence the model keeps its capital.
        let broken = try #require(throws: StrataError.self) {
            try XcodeModel.load(contentsOf: fixture("Broken.xcdatamodel"))
        }
        #expect(broken.message.hasPrefix("The model file /"), "\(broken.message)")
    }

    // MARK: Equivalence with declarations

    /// The Library model declared in code.
    private func handBuiltLibrary(personIsAbstract: Bool = true) throws -> Schema {
        let person = EntityDescription(
            name: "Person", isAbstract: personIsAbstract,
            attributes: [
                AttributeDescription(name: "name", type: .string),
                AttributeDescription(name: "birthDate", type: .date, isOptional: true),
            ],
            renamingIdentifier: "Human", managedObjectClassName: "Person")
        let author = EntityDescription(
            name: "Author", superentity: "Person",
            attributes: [AttributeDescription(name: "penName", type: .string, isOptional: true)],
            relationships: [
                RelationshipDescription(
                    name: "books", destination: "Book", inverse: "authors", isToMany: true, deleteRule: .noAction)
            ],
            managedObjectClassName: "Author")
        let reader = EntityDescription(
            name: "Reader", superentity: "Person",
            attributes: [AttributeDescription(name: "cardNumber", type: .integer32, defaultValue: 0, isIndexed: true)],
            relationships: [
                RelationshipDescription(
                    name: "borrowed", destination: "Book", inverse: "reader", isToMany: true, minimumCount: 1,
                    maximumCount: 5, deleteRule: .deny)
            ],
            managedObjectClassName: "Reader")
        let book = EntityDescription(
            name: "Book",
            attributes: [
                AttributeDescription(name: "id", type: .uuid),
                AttributeDescription(
                    name: "title", type: .string, defaultValue: "Untitled",
                    validation: ValidationRules(minimumLength: 1, maximumLength: 200)),
                AttributeDescription(name: "isbn", type: .string, validation: ValidationRules(pattern: "97[89][0-9]{10}")),
                AttributeDescription(name: "price", type: .decimal, defaultValue: .decimal(0)),
                AttributeDescription(
                    name: "pages", type: .integer16, defaultValue: 100,
                    validation: ValidationRules(minimumValue: 1, maximumValue: 5000)),
                AttributeDescription(
                    name: "rating", type: .double, isOptional: true, defaultValue: 2.5,
                    validation: ValidationRules(minimumValue: 0.0, maximumValue: 5.0)),
                AttributeDescription(name: "weight", type: .float, isOptional: true, defaultValue: .float(0.25)),
                AttributeDescription(name: "available", type: .boolean, defaultValue: true),
                AttributeDescription(
                    name: "cover", type: .binaryData, isOptional: true, allowsExternalBinaryDataStorage: true,
                    validation: ValidationRules(maximumLength: 1_048_576)),
                AttributeDescription(
                    name: "link", type: .uri, isOptional: true,
                    defaultValue: URL(string: "https://example.com/books").map { .url($0) } ?? .null),
                AttributeDescription(name: "tags", type: .codable, isOptional: true, valueTypeName: "[String]"),
                AttributeDescription(
                    name: "publishedAt", type: .date, defaultValue: .date(Date(timeIntervalSinceReferenceDate: 725_760_000)),
                    validation: ValidationRules(minimumValue: .date(Date(timeIntervalSinceReferenceDate: 0)))),
                AttributeDescription(name: "note", type: .string, isOptional: true, isTransient: true),
                AttributeDescription(
                    name: "archivedTitle", type: .string, preservesValueOnDeletion: true, renamingIdentifier: "formerTitle"),
                AttributeDescription(name: "copies", type: .integer64, defaultValue: 1),
            ],
            relationships: [
                RelationshipDescription(name: "authors", destination: "Author", inverse: "books", isToMany: true, isOrdered: true),
                RelationshipDescription(name: "reader", destination: "Reader", inverse: "borrowed", deleteRule: .cascade),
            ],
            uniquenessConstraints: [["title", "isbn"], ["id"]],
            indexes: [
                IndexDescription(name: "byTitleAndDate", elements: [.init("title"), .init("publishedAt", ascending: false)]),
                IndexDescription(name: "byPrice", elements: [.init("price")]),
            ],
            versionHashModifier: "v2",
            managedObjectClassName: "BookObject")
        return try Schema(
            [author, book, person, reader], configurations: ["Catalog": ["Book", "Author"]], versionIdentifier: "library-1")
    }

    @Test func matchesHandBuiltSchema() throws {
        let loaded = try library().schema
        let declared = try handBuiltLibrary()
        #expect(loaded.versionHash == declared.versionHash)
        #expect(loaded.entityDescriptions == declared.entityDescriptions)
        #expect(loaded.configurations == declared.configurations)
        // The hash notices a difference the file does not have.
        #expect(try handBuiltLibrary(personIsAbstract: false).versionHash != loaded.versionHash)
    }
}
