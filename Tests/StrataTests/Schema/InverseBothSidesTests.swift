import Foundation
import StrataTesting
import Testing

@testable import Strata

/// Relationships whose inverse is named on both sides, as Core Data models name it.
enum BothSides {
    @Entity final class Author: ManagedObject {
        var name: String = ""
        @Relationship(deleteRule: .cascade, inverse: "author") var books: Set<Book> = []
    }

    @Entity final class Book: ManagedObject {
        var title: String = ""
        @Relationship(inverse: "books") var author: Author?
        @Relationship(inverse: \Shelf.books) var shelf: Shelf?
    }

    @Entity final class Shelf: ManagedObject {
        var label: String = ""
        @Relationship(inverse: "shelf") var books: [Book] = []
    }

    /// Names an inverse that names another relationship.
    @Entity final class Editor: ManagedObject {
        @Relationship(inverse: "editor") var books: Set<Manuscript> = []
        var drafts: Set<Manuscript> = []
    }

    @Entity final class Manuscript: ManagedObject {
        @Relationship(inverse: "drafts") var editor: Editor?
    }
}

@Suite struct InverseBothSidesTests {
    @Test func bothSidesMayNameTheInverseWhenTheyAgree() throws {
        let container = try PersistentContainer(
            name: "Library", entities: [BothSides.Author.self, BothSides.Book.self, BothSides.Shelf.self],
            storeDescriptions: [.inMemory])
        let books = try #require(container.schema.entity(named: "Author")?.relationship(named: "books"))
        #expect(books.inverseName == "author")
        #expect(container.schema.entity(named: "Book")?.relationship(named: "author")?.inverseName == "books")
        #expect(container.schema.entity(named: "Shelf")?.relationship(named: "books")?.inverseName == "shelf")

        let context = container.newBackgroundContext()
        let author = BothSides.Author(context: context)
        let book = BothSides.Book(context: context)
        book.author = author
        let shelf = BothSides.Shelf(context: context)
        shelf.books = [book]
        #expect(author.books == [book])  // inverses in step from either side
        #expect(book.shelf === shelf)
        try context.save()
        context.delete(author)
        try context.save()
        #expect(try context.count(for: BothSides.Book.self) == 0)  // the cascade rule holds
    }

    @Test func sidesThatDisagreeAreAnInvalidSchema() {
        let error = #expect(throws: StrataError.self) {
            try Schema([BothSides.Editor.self, BothSides.Manuscript.self])
        }
        #expect(error?.code == .invalidSchema)
    }
}
