import ArgumentParser
import Foundation
import Strata

/// Writes rows of named values in one format.
protocol RecordWriter {
    /// Starts the output with the names of the columns.
    mutating func begin(columns: [String]) throws
    /// Writes one row, a value per column (`nil` leaves a column out of that row's JSON).
    mutating func write(_ values: [AttributeValue?]) throws
    /// Ends the output.
    mutating func finish() throws
}
