import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataCLI

/// `strata import` of CSV that a spreadsheet wrote, as a process: columns mapped to attributes
/// of other names (`--map`), dates in a pattern (`--date-format`), Booleans in their common
/// spellings; and one-line errors that name the row and column of a value that does not fit.
@Suite(.timeLimit(.minutes(10))) struct ImportMappingTests {
    static let model = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" sourceLanguage="Swift">
            <entity name="Person" representedClassName="Person" syncable="YES">
                <attribute name="id" attributeType="Integer 64" usesScalarValueType="YES"/>
                <attribute name="name" attributeType="String"/>
                <attribute name="height" optional="YES" attributeType="Double" usesScalarValueType="YES"/>
                <attribute name="birthDate" optional="YES" attributeType="Date" usesScalarValueType="NO"/>
                <attribute name="member" optional="YES" attributeType="Boolean" usesScalarValueType="YES"/>
            </entity>
        </model>
        """

    /// What a spreadsheet writes: its own column names, US dates, Booleans as it likes them.
    static let spreadsheet = """
        ID,Name,height(m),DOB,Member,Notes\r
        1,Ada Lovelace,1.65,12/10/1815,yes,first program\r
        2,"Hopper, Grace",1.6,09/21/1997,TRUE,\r
        3,Alan Turing,1.78,06/23/1912,0,"said ""hi"" once"\r
        4,Katherine Johnson,,08/26/1918,No,\r
        5,Edsger Dijkstra,1.9,05/11/1930,tRuE,\r
        6,Barbara Liskov,,11/07/1939,1,\r
        7,Donald Knuth,,01/10/1938,FALSE,\r

        """

    /// The options that read the spreadsheet into Person.
    static let mapping = [
        "--map", "ID=id", "--map", "Name=name", "--map", "height(m)=height", "--map", "DOB=birthDate",
        "--map", "Member=member", "--map", "Notes=", "--date-format", "MM/dd/yyyy",
    ]

    let directory: TemporaryDirectory
    var store: URL { directory.file("People.sqlite") }

    init() throws {
        directory = try TemporaryDirectory()
        let schema = try XcodeModel.parse(Data(Self.model.utf8), name: "People").schema
        let container = try PersistentContainer(name: "People", schema: schema, storeDescriptions: [.sqlite(store)])
        try container.close()
    }

    private func strata(_ arguments: [String]) async throws -> (status: Int32, output: String, errorOutput: String) {
        try await offThePool { try runStrata(arguments) }
    }

    private func write(_ text: String, to name: String) throws -> URL {
        let file = directory.file(name)
        try text.write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    /// The people in the store, sorted by id, as `strata query` writes them.
    private func people() async throws -> [[String: Any]] {
        let result = try await strata(["query", store.path, "Person", "--sort", "id", "--format", "ndjson"])
        #expect(result.status == 0, "\(result.errorOutput)")
        return try result.output.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
    }

    @Test func aSpreadsheetsCSVImportsAsItIs() async throws {
        let file = try write(Self.spreadsheet, to: "people.csv")
        let result = try await strata(["import", store.path, file.path, "--entity", "Person"] + Self.mapping)
        #expect(result.status == 0, "\(result.errorOutput)")
        #expect(result.errorOutput.contains("Imported 7 records into Person."), "\(result.errorOutput)")
        let people = try await people()
        #expect(people.map { $0["id"] as? Int } == [1, 2, 3, 4, 5, 6, 7])
        #expect(people.map { $0["name"] as? String }.first == "Ada Lovelace")
        #expect(people[1]["name"] as? String == "Hopper, Grace")
        #expect(people.map { $0["birthDate"] as? String } == [
            "1815-12-10T00:00:00Z", "1997-09-21T00:00:00Z", "1912-06-23T00:00:00Z", "1918-08-26T00:00:00Z",
            "1930-05-11T00:00:00Z", "1939-11-07T00:00:00Z", "1938-01-10T00:00:00Z",
        ])
        #expect(people.map { $0["member"] as? Bool } == [true, true, false, false, true, true, false])
        #expect(people.map { $0["height"] as? Double } == [1.65, 1.6, 1.78, nil, 1.9, nil, nil])
    }

    @Test func aPatternWithAZoneReadsTheZoneAndOneWithoutReadsUTC() async throws {
        let fixed = try write("ID,Name,Seen\n1,A,1997-09-21 10:00 +02:00\n2,B,1997-09-21 10:00 -01:30\n", to: "zoned.csv")
        let imported = try await strata([
            "import", store.path, fixed.path, "--entity", "Person", "--map", "ID=id", "--map", "Name=name",
            "--map", "Seen=birthDate", "--date-format", "yyyy-MM-dd HH:mm xxx",
        ])
        #expect(imported.status == 0, "\(imported.errorOutput)")
        let local = try write("ID,Name,Seen\n3,C,21.09.1997 10:00\n", to: "local.csv")
        let utc = try await strata([
            "import", store.path, local.path, "--entity", "Person", "--map", "ID=id", "--map", "Name=name",
            "--map", "Seen=birthDate", "--date-format", "dd.MM.yyyy HH:mm",
        ])
        #expect(utc.status == 0, "\(utc.errorOutput)")
        #expect(try await people().map { $0["birthDate"] as? String } == [
            "1997-09-21T08:00:00Z", "1997-09-21T11:30:00Z", "1997-09-21T10:00:00Z",
        ])
    }

    /// Each bad value stops the import with one line naming the file, the line, the row and the
    /// column, and writes nothing.
    @Test func aValueThatDoesNotFitNamesItsRowAndColumn() async throws {
        let cases: [(replace: String, with: String, message: String)] = [
            (
                "06/23/1912", "23/06/1912",
                #"people.csv:4: row 3, column "DOB": attribute "birthDate" (Date): expected a date in the form MM/dd/yyyy (--date-format), found "23/06/1912""#
            ),
            ("08/26/1918", "02/30/1918", #"people.csv:5: row 4, column "DOB""#),
            ("11/07/1939", "1939-11-07", #"people.csv:7: row 6, column "DOB""#),
            (
                "tRuE", "maybe",
                #"people.csv:6: row 5, column "Member": attribute "member" (Boolean): expected true or false (or yes, no, 1, 0), found "maybe""#
            ),
            ("FALSE", "2", #"people.csv:8: row 7, column "Member""#),
            ("1.65", "tall", #"people.csv:2: row 1, column "height(m)": attribute "height" (Double)"#),
            ("Alan Turing", "", #"people.csv:4: row 3, column "Name": Person.name is required, but the record has null."#),
        ]
        for (original, replacement, message) in cases {
            let file = try write(Self.spreadsheet.replacingOccurrences(of: original, with: replacement), to: "people.csv")
            let result = try await strata(["import", store.path, file.path, "--entity", "Person"] + Self.mapping)
            #expect(result.status == 1, "\(replacement)")
            #expect(result.errorOutput.split(separator: "\n").count == 1, "\(result.errorOutput)")
            #expect(result.errorOutput.hasPrefix("strata: error: \(file.path):"), "\(result.errorOutput)")
            #expect(result.errorOutput.contains(message.replacingOccurrences(of: "people.csv", with: file.path)), "\(result.errorOutput)")
            #expect(try await people().isEmpty)
        }
    }

    @Test func unknownNamesInTheMappingAreRefusedBeforeAnythingIsRead() async throws {
        let file = try write(Self.spreadsheet, to: "people.csv")
        func run(_ mapping: [String]) async throws -> (status: Int32, output: String, errorOutput: String) {
            try await strata(["import", store.path, file.path, "--entity", "Person"] + mapping)
        }
        var mapping = Self.mapping
        mapping[5] = "height(m)=heigth"
        let attribute = try await run(mapping)
        #expect(attribute.status == 1)
        #expect(
            attribute.errorOutput
                == "strata: error: --map 'height(m)=heigth': Person has no attribute named 'heigth'. Did you mean 'height'?\n")

        mapping = Self.mapping
        mapping[5] = "Height=height"
        let column = try await run(mapping)
        #expect(column.status == 1)
        #expect(column.errorOutput.split(separator: "\n").count == 1, "\(column.errorOutput)")
        #expect(
            column.errorOutput.hasPrefix(
                "strata: error: \(file.path):1: the header has no column \"Height\" (named by --map 'Height=height')."),
            "\(column.errorOutput)")
        #expect(column.errorOutput.contains("Its columns: ID, Name, height(m), DOB, Member, Notes."), "\(column.errorOutput)")

        let unmapped = try await run(Array(Self.mapping.dropFirst(2)))
        #expect(unmapped.status == 1)
        #expect(unmapped.errorOutput.contains(#"the column "ID" is not an attribute of Person. Did you mean 'id'?"#), "\(unmapped.errorOutput)")
        #expect(unmapped.errorOutput.contains("--map 'ID=ATTRIBUTE'"), "\(unmapped.errorOutput)")

        let malformed = try await run(["--map", "ID"])
        #expect(malformed.status == 64)
        #expect(malformed.errorOutput.contains("expected COLUMN=ATTRIBUTE"), "\(malformed.errorOutput)")
        let twice = try await run(["--map", "ID=id", "--map", "Name=id"])
        #expect(twice.status == 64)
        #expect(twice.errorOutput.contains("reads both 'ID' and 'Name' into 'id'"), "\(twice.errorOutput)")
        #expect(try await people().isEmpty)
    }

    /// Without `--date-format`, dates are ISO 8601 and Booleans still take every spelling, in
    /// JSON too; `--map` renames and skips JSON fields as it does CSV columns.
    @Test func booleansAndMappingsWorkInJSONToo() async throws {
        let file = try write(
            """
            {"ID": 1, "name": "A", "Member": "YES", "birthDate": "1997-09-21", "height": "tall"}
            {"ID": 2, "name": "B", "Member": "no"}
            {"ID": 3, "name": "C", "Member": 1}
            {"ID": 4, "name": "D", "Member": "False"}
            {"ID": 5, "name": "E", "Member": true}

            """, to: "people.ndjson")
        let result = try await strata([
            "import", store.path, file.path, "--entity", "Person", "--map", "ID=id", "--map", "Member=member",
            // Skipped, though an attribute has its name.
            "--map", "height=",
        ])
        #expect(result.status == 0, "\(result.errorOutput)")
        let people = try await people()
        #expect(people.map { $0["member"] as? Bool } == [true, false, true, false, true])
        #expect(people.first?["birthDate"] as? String == "1997-09-21T00:00:00Z")
        #expect(people.allSatisfy { $0["height"] as? Double == nil })

        let bad = try write(#"{"ID": 6, "name": "F", "Member": "sometimes"}"# + "\n", to: "bad.ndjson")
        let refused = try await strata(["import", store.path, bad.path, "--entity", "Person", "--map", "ID=id", "--map", "Member=member"])
        #expect(refused.status == 1)
        #expect(
            refused.errorOutput.contains(#"bad.ndjson:1: field "Member" → attribute "member" (Boolean): expected true or false"#),
            "\(refused.errorOutput)")
    }
}
