import Foundation
import Testing

extension Trait where Self == ConditionTrait {
    /// A suite or test that needs real servers, child processes, inotify or the ferry
    /// binary. `make test-unit` sets FERRY_TEST_UNIT_ONLY=1 and these are reported as
    /// skipped, so that the rest runs in well under a minute with no server; `make test`
    /// runs everything.
    public static var integration: Self {
        .enabled(if: ProcessInfo.processInfo.environment["FERRY_TEST_UNIT_ONLY"] == nil,
                 "needs real servers or processes: run by make test, skipped by make test-unit")
    }
}
