import Foundation
import Strata

/// How `strata import` reads dates: as ISO 8601, exactly (what `strata export` writes), or with
/// a pattern such as `MM/dd/yyyy` (`--date-format`), for files that spreadsheets and other
/// programs write.
///
/// A pattern is a Unicode date pattern (`yyyy` year, `MM` month, `dd` day, `HH` hour, `mm`
/// minute, `ss` second, `SSS` fraction, `a` AM/PM, `Z`/`XXX` zone; text in single quotes). It is
/// read with the POSIX locale (English month names, whatever the user's settings), strictly
/// (no month 13, no February 30, nothing left over), in the proleptic Gregorian calendar, and in
/// UTC unless the pattern reads a zone.
///
/// ```swift
/// let dates = ImportedDateFormat(pattern: "MM/dd/yyyy")
/// dates.date(from: "09/21/1997")   // 1997-09-21T00:00:00Z
/// ```
struct ImportedDateFormat {
    /// The pattern, or `nil` for ISO 8601.
    let pattern: String?
    private let formatter: DateFormatter?

    /// Dates in ISO 8601 (``DateText/date(fromISO8601:)``).
    init() {
        pattern = nil
        formatter = nil
    }

    /// Dates in `pattern`.
    init(pattern: String) {
        self.pattern = pattern
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.calendar = Calendar(identifier: .gregorian)
        // ICU switches to the Julian calendar before 1582 unless told otherwise; ISO 8601 and
        // the rest of Strata count back in Gregorian.
        formatter.gregorianStartDate = .distantPast
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.isLenient = false
        formatter.dateFormat = pattern
        self.formatter = formatter
    }

    /// The date `text` names, or `nil` when it does not fit.
    func date(from text: String) -> Date? {
        guard let formatter else { return DateText.date(fromISO8601: text) }
        return formatter.date(from: text)
    }

    /// What a date field must look like, for messages.
    var expected: String {
        pattern.map { "a date in the form \($0) (--date-format)" } ?? "an ISO 8601 date such as 2026-11-27T10:00:00Z"
    }
}

@available(*, unavailable, message: "A DateFormatter is used from one thread at a time")
extension ImportedDateFormat: Sendable {}
