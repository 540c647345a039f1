import Foundation
import NIOPosix
import PostgresNIO
import Strata
import StrataTesting
import Testing

@testable import StrataPostgres

/// Bad configuration, bad credentials, a database made by something else and a lost
/// connection each give a clear typed error; credentials never show.
@Suite struct PostgresFaultTests {
    @Test func urlsParseAndNeverShowTheirPassword() async throws {
        try await offThePool {
            let configuration = try PostgresConfiguration(
                url: "postgresql://app%40x:s3cr%2Ft@db.example:6543/movies?sslmode=verify-full&schema=catalog&pool_size=16&connect_timeout=3")
            #expect(configuration.username == "app@x")
            #expect(configuration.password == "s3cr/t")
            #expect(configuration.host == "db.example")
            #expect(configuration.port == 6543)
            #expect(configuration.database == "movies")
            #expect(configuration.schemaName == "catalog")
            #expect(configuration.tlsMode == .verifyFull)
            #expect(configuration.pool.maximumConnections == 16)
            #expect(configuration.pool.connectTimeout == .seconds(3))
            #expect(!configuration.description.contains("s3cr"))
            #expect(!StoreDescription.postgres(configuration).provider.description.contains("s3cr"))
            for bad in ["mysql://a@b/c", "postgres://a:secret@/c", "postgres://a:secret@h", "postgres://a:secret@h/d?sslmode=sometimes",
                "postgres://a:secret@h/d?colour=blue", "postgres://a:secret@h/d?schema=bad-name"]
            {
                #expect {
                    _ = try PostgresConfiguration(url: bad)
                } throws: { error in
                    guard let error = error as? StrataError else { return false }
                    return error.code == .invalidConfiguration && !error.description.contains("secret")
                }
            }
        }
    }

    @Test func wrongCredentialsAreAnAuthenticationFailure() async throws {
        try await offThePool {
            var configuration = try PostgresTestServer.configuration(schemaName: "t_wrong_password")
            configuration.password = "definitely-not-the-password"
            #expect {
                _ = try PostgresStore(configuration: configuration, schema: try Schema([Note.self]))
            } throws: { error in
                guard let error = error as? StrataError else { return false }
                return error.code == .authenticationFailed && !error.description.contains("definitely-not-the-password")
            }
        }
    }

    @Test func anUnreachableServerIsAConnectionFailure() async throws {
        try await offThePool {
            var configuration = try PostgresTestServer.configuration(schemaName: "t_unreachable")
            configuration.port = 1
            configuration.pool.connectTimeout = .seconds(2)
            #expect {
                _ = try PostgresStore(configuration: configuration, schema: try Schema([Note.self]))
            } throws: { ($0 as? StrataError)?.code == .connectionFailed }
        }
    }

    @Test func aSchemaMadeBySomethingElseIsNotAStoreAndStaysUntouched() async throws {
        try await offThePool {
            let database = try PostgresTestDatabase()
            try database.execute("CREATE SCHEMA \(quoted(database.schemaName))")
            try database.execute("CREATE TABLE \(quoted(database.schemaName)).invoices (id int)")
            #expect {
                _ = try PersistentContainer(name: "X", entities: [Note.self], storeDescriptions: [database.description()])
            } throws: { ($0 as? StrataError)?.code == .notAStore }
            let tables = try database.execute(
                "SELECT count(*)::bigint FROM pg_tables WHERE schemaname = '\(database.schemaName)'")
            #expect(tables.rows.first.flatMap { $0.makeRandomAccess().first.flatMap(PostgresValueCoding.integer) } == 1)
        }
    }

    @Test func anotherSchemaIsAnIncompatibleSchemaError() async throws {
        try await offThePool {
            let database = try PostgresTestDatabase()
            try PersistentContainer(name: "X", entities: [Note.self], storeDescriptions: [database.description()]).close()
            let other = try Schema([EntityDescription(name: "Note", attributes: [AttributeDescription(name: "title", type: .string)])])
            #expect {
                _ = try PersistentContainer(name: "X", schema: other, storeDescriptions: [database.description()])
            } throws: { ($0 as? StrataError)?.code == .incompatibleSchema }
        }
    }

    @Test func aKilledBackendLosesItsOperationAndTheNextOneReconnects() async throws {
        try await offThePool {
            let database = try PostgresTestDatabase()
            var configuration = database.configuration
            configuration.applicationName = database.schemaName
            let container = try PersistentContainer(name: "X", entities: [Note.self], storeDescriptions: [.postgres(configuration)])
            defer { try? container.close() }
            let context = container.newBackgroundContext()
            let note = Note(context: context)
            note.slug = "kept"
            try context.save()
            // Every connection of this store goes, as in a restart or at an operator's hand.
            try database.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '\(database.schemaName)' AND pid <> pg_backend_pid()")
            Thread.sleep(forTimeInterval: 0.2)
            var failures = 0
            var fetched: [String] = []
            // The first operation on a killed connection fails with a typed error (or finds a
            // fresh connection); the next ones work.
            for _ in 0..<3 {
                do {
                    fetched = try context.fetch(FetchRequest<Note>()).map(\.slug)
                    break
                } catch let error as StrataError {
                    #expect(error.code == .connectionLost || error.code == .storeError, "\(error)")
                    failures += 1
                }
            }
            #expect(fetched == ["kept"])
            #expect(failures <= 1)
        }
    }

    @Test func callingFromAnEventLoopIsRefusedNotBlocked() async throws {
        try await offThePool {
            let database = try PostgresTestDatabase()
            let container = try PersistentContainer(name: "X", entities: [Note.self], storeDescriptions: [database.description()])
            defer { try? container.close() }
            let result = try MultiThreadedEventLoopGroup.singleton.next().submit { () -> StrataError.Code? in
                do {
                    _ = try container.newBackgroundContext().fetch(FetchRequest<Note>())
                    return nil
                } catch {
                    return (error as? StrataError)?.code
                }
            }.wait()
            #expect(result == .storeError)
        }
    }
}
