import FerrySystem
import Foundation

// Before any thread starts.
MallocSettings.apply(arenaCount: 2)
DescriptorTable.reserve(1_024)

// Entry point: parsing and exit codes are handled by `CommandLineEntry` so that usage and
// configuration errors exit 2 (argument-parser's default would be 64).
let status = await CommandLineEntry.run(Array(CommandLine.arguments.dropFirst()))
exit(status)
