import ArgumentParser
import FerryCore
import FerryEngine
import FerryPluginAPI
import Foundation

extension Ferry {
    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify",
            abstract: "Check both sides of a folder against the journal.",
            discussion: """
                Reports files whose size, ETag or modification time differ from what the journal \
                recorded, files missing from a side, files the journal does not know (orphans), \
                and journal rows that point at nothing.

                --hash also reads both sides of every file in sync and compares SHA-256 hashes \
                (the remote copy is downloaded).

                --repair corrects the journal: rows on neither side are dropped, each row's view \
                of the sides is refreshed, and a file whose bytes differ loses its last-sync \
                record (the next sync treats it as a conflict).

                Exit 1 when differences were found.
                """)

        @Argument(help: "A configured folder's name, or a local path (with --to). Default: every configured folder.")
        var folder: String?

        @Option(name: .long, help: ArgumentHelp("The remote of an ad-hoc folder.", valueName: "remote"))
        var to: String?

        @Flag(name: .long, help: "Also compare content hashes (reads every file on both sides).")
        var hash = false

        @Flag(name: .long, help: "Correct the journal to match what was found.")
        var repair = false

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let context = try CommandContext.load(global)
            let selection = FolderSelection(config: context.config, registry: context.registry,
                                            currentDirectory: context.currentDirectory)
            let pairs: [FolderPair]
            do {
                pairs = try selection.resolveAnyMode(folder: folder, remote: to)
            } catch {
                throw CommandFailure.usage(error.message)
            }
            var anyFindings = false
            for pair in pairs {
                let report: VerifyRun.Report
                do {
                    report = try await VerifyRun(pair: pair, config: context.config, state: context.state,
                                                 hashes: hash, repair: repair, clock: context.clock).run()
                } catch {
                    throw CommandFailure.runtime(error.message)
                }
                if !report.findings.isEmpty { anyFindings = true }
                if global.json { printJSON(report) } else { printText(report) }
            }
            if anyFindings && !repair { throw ExitCodeFailure.someFilesFailed }
        }

        private func printJSON(_ report: VerifyRun.Report) {
            for finding in report.findings {
                var object = JSONObject()
                object.add("event", "finding")
                object.add("folder", report.folder)
                object.add("path", finding.path)
                object.add("kind", finding.kind.rawValue)
                object.add("detail", finding.detail)
                StandardStreams.output(object.text)
            }
            var summary = JSONObject()
            summary.add("event", "verified")
            summary.add("folder", report.folder)
            summary.add("files", report.checkedFiles)
            summary.add("hashed", report.hashedFiles)
            summary.add("findings", report.findings.count)
            summary.add("repaired_rows", report.repairedRows)
            summary.add("removed_rows", report.removedRows)
            StandardStreams.output(summary.text)
        }

        private func printText(_ report: VerifyRun.Report) {
            for finding in report.findings {
                StandardStreams.output("\(finding.kind.rawValue): \(finding.path): \(finding.detail)")
            }
            // An ad-hoc pair by the path and remote as typed, never "ad-hoc".
            let label = report.folder == "ad-hoc" && to != nil ? "\(folder ?? "") – \(SecretRedaction.redactingPassword(to ?? ""))"
                : report.folder
            var line = "verify \(label): \(Plural.count(report.checkedFiles, "file")), "
                + Plural.count(report.findings.count, "difference")
            if hash { line += ", \(report.hashedFiles) hashed" }
            if repair {
                line += "; journal repaired (\(Plural.count(report.repairedRows, "row")) updated, \(report.removedRows) removed)"
            }
            StandardStreams.output(line)
        }
    }
}
