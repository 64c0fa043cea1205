import FerryTestSupport
import Foundation
import Synchronization
import Testing

@testable import FerryCore

@Suite("opening a journal")
struct JournalOpeningTests {
    @Test("runs that open a new journal at the same moment all get it, with its tables made once")
    func concurrentFirstOpen() throws {
        for round in 0..<60 {
            let folder = TemporaryDirectory()
            let path = folder.child("state/journal.sqlite")
            let failures = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 8) { _ in
                do {
                    _ = try Journal.open(at: path)
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
            #expect(failures.withLock { $0 }.isEmpty, "round \(round): \(failures.withLock { $0 })")
        }
    }
}
