import Foundation
import Testing

/// The article "Porting from Core Data" shows exactly the samples these tests run: every Strata
/// code block of the article is a sample of a test, and every sample is in the article.
@Suite struct ArticleTests {
    static let testsFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    static let article = testsFolder.deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/Strata/Documentation.docc/PortingFromCoreData.md")

    /// Lines with their common indentation removed and trailing spaces trimmed.
    static func normalized(_ lines: [Substring]) -> String {
        let indent = lines.filter { !$0.allSatisfy(\.isWhitespace) }.map { $0.prefix { $0 == " " }.count }.min() ?? 0
        return lines.map { line in
            String(line.dropFirst(min(indent, line.prefix { $0 == " " }.count)))
                .replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
        }.joined(separator: "\n").trimmingCharacters(in: .newlines)
    }

    /// The code between `// sample:` and `// end sample` lines of every test file.
    static func samples() throws -> [String: String] {
        var samples: [String: String] = [:]
        let files = try FileManager.default.contentsOfDirectory(at: testsFolder, includingPropertiesForKeys: nil)
        for file in files where file.pathExtension == "swift" {
            let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            var index = 0
            while index < lines.count {
                let line = lines[index].trimmingCharacters(in: .whitespaces)
                if line.hasPrefix("// sample: ") {
                    let title = String(line.dropFirst("// sample: ".count))
                    var end = index + 1
                    while end < lines.count, lines[end].trimmingCharacters(in: .whitespaces) != "// end sample" { end += 1 }
                    samples[title] = normalized(Array(lines[(index + 1)..<end]))
                    index = end
                }
                index += 1
            }
        }
        return samples
    }

    /// The code blocks the article introduces with a line "Strata:".
    static func articleBlocks() throws -> [String] {
        let lines = try String(contentsOf: article, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        var blocks: [String] = []
        var index = 0
        while index < lines.count {
            if lines[index] == "Strata:" {
                var start = index + 1
                while start < lines.count, lines[start].isEmpty { start += 1 }
                if start < lines.count, lines[start] == "```swift" {
                    var end = start + 1
                    while end < lines.count, lines[end] != "```" { end += 1 }
                    blocks.append(normalized(Array(lines[(start + 1)..<end])))
                    index = end
                }
            }
            index += 1
        }
        return blocks
    }

    @Test func everyStrataSampleOfTheArticleIsATestAndEveryTestIsInTheArticle() throws {
        let samples = try Self.samples()
        let blocks = try Self.articleBlocks()
        #expect(samples.count >= 40)
        let sampleBodies = Set(samples.values)
        for block in blocks where !sampleBodies.contains(block) {
            Issue.record("The article shows code that no test runs:\n\(block)")
        }
        let blockSet = Set(blocks)
        for (title, body) in samples.sorted(by: { $0.key < $1.key }) where !blockSet.contains(body) {
            Issue.record("The sample '\(title)' is not in the article (or differs from it).")
        }
    }

    @Test func theArticleCoversEverySeed() throws {
        let text = try String(contentsOf: Self.article, encoding: .utf8)
        for heading in [
            "## The Rx kit", "## The repository kit", "## SwiftUI with Core Data", "## The data-stack kit",
            "## The stack kit", "## Deliberate differences",
        ] {
            #expect(text.contains(heading), "missing section \(heading)")
        }
    }
}
