import ArgumentParser
import Logging

/// Options of the commands that keep running (`watch`, `daemon`).
struct LongRunningOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Log lines on stderr as text (default) or json.", valueName: "format"))
    var logFormat: LogFormat = .text

    @Option(name: .long, help: ArgumentHelp("Least severe log lines shown: debug, info, notice (default: each run's summary), warning.", valueName: "level"))
    var logLevel: LogLevel = .notice

    enum LogLevel: String, ExpressibleByArgument, CaseIterable, Sendable {
        case debug, info, notice, warning, error

        var level: Logger.Level { Logger.Level(rawValue: rawValue) ?? .notice }
    }
}
