import FerryPlanning
import FerryPluginAPI
import Foundation

/// One `schedule:` entry of config.yml: when to run, and what.
public struct ScheduleEntry: Sendable, Equatable {
    public enum Trigger: Sendable, Equatable {
        /// `every: 4h`: the interval between the starts of two runs.
        case every(Duration)
        /// `cron: "0 2 * * *"`: local time.
        case cron(CronExpression)
    }

    public var trigger: Trigger
    public var mode: SyncMode
    /// A configured folder's name; nil for every configured folder of `mode`.
    public var folder: String?
    /// Only these queues' files (e.g. `[archives]` at night); nil for all.
    public var queues: [String]?

    public init(trigger: Trigger, mode: SyncMode, folder: String?, queues: [String]?) {
        self.trigger = trigger
        self.mode = mode
        self.folder = folder
        self.queues = queues
    }

    /// Identifies the entry across restarts (its last run is remembered under this key), so
    /// editing one entry does not reset the others'.
    public var key: String {
        let when: String
        switch trigger {
        case let .every(interval): when = "every \(Int64(interval.inSeconds))s"
        case let .cron(expression): when = "cron \(expression.description)"
        }
        return "\(when) \(mode.rawValue) \(folder ?? "*")" + (queues.map { " queues " + $0.joined(separator: ",") } ?? "")
    }

    /// `push FOLDER`, as config.yml says it.
    public var action: String {
        mode.rawValue + (folder.map { " " + $0 } ?? "") + (queues.map { " (queues: \($0.joined(separator: ", ")))" } ?? "")
    }
}
