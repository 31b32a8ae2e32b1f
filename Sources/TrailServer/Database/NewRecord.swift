import Foundation
import GRDB

/// A row about to be inserted: only the columns its creator sets, and no id. SQLite assigns the id and the schema's
/// defaults fill the other columns; ``inserted(_:)`` hands back the stored record (`INSERT … RETURNING *`), whose id
/// is not optional.
///
/// This is GRDB's partial-record pattern. It splits a table's one record type in two: code past an insert works with a
/// value the database has, so it never unwraps an id, and a record that was never stored cannot be passed where a
/// stored one is meant.
protocol NewRecord: PersistableRecord, Encodable {
    associatedtype Stored: FetchableRecord & TableRecord
}

extension NewRecord {
    static var databaseTableName: String { Stored.databaseTableName }
    /// Timestamps are seconds since 1970, as ``UnixTimeRecord`` stores them.
    static func databaseDateEncodingStrategy(for column: String) -> DatabaseDateEncodingStrategy { .timeIntervalSince1970 }

    /// Inserts the row and returns it as the database holds it, id and defaults included.
    func inserted(_ db: Database) throws -> Stored {
        try insertAndFetch(db, as: Stored.self)
    }
}
