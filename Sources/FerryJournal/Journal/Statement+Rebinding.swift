import GRDB
import GRDBSQLite

extension Statement {
    /// Binds `values` by position for the statement's next `execute()`, in place of the
    /// arguments set last, without building a `StatementArguments`: converting each row's
    /// values into one (an array of existentials, converted back one by one) was about 40%
    /// of the Swift side of the journal's bulk writes.
    ///
    /// Only for a statement whose arguments were set with `setUncheckedArguments` earlier in
    /// the same database access: GRDB then only resets it before `execute()`, keeping what
    /// is bound.
    func rebind(_ values: [DatabaseValue]) {
        let handle = sqliteStatement
        // The last step ended in SQLITE_DONE or has thrown its error already; either way
        // the statement takes new bindings only once reset.
        sqlite3_reset(handle)
        precondition(values.count == Int(sqlite3_bind_parameter_count(handle)), "a rebinding must give every argument")
        for (index, value) in zip(CInt(1)..., values) {
            // As in GRDB: binding touches no file, so a failure is a programming error.
            let code = value.bind(to: handle, at: index)
            precondition(code == SQLITE_OK, "binding argument \(index) failed with code \(code)")
        }
    }
}
