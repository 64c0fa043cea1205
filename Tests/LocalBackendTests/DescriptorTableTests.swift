import FerrySystem
import Foundation
import Testing

/// The process's descriptor table, grown once at start so that staged uploads holding
/// hundreds of files open never wait for it to grow (`DescriptorTable`).
@Suite("The descriptor table grown at start")
struct DescriptorTableTests {
    /// The table's size as the kernel reports it (`FDSize` in /proc/self/status).
    static func tableSize() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("FDSize:") })
        return try #require(Int(line.dropFirst("FDSize:".count).trimmingCharacters(in: .whitespaces)))
    }

    @Test("the table holds the count asked for, and no descriptor is left open")
    func growsAndLeavesNothingOpen() throws {
        let limit = DescriptorLimit.raise()
        let before = try Self.tableSize()
        let wanted = Int32(min(UInt64(before) * 4, limit))
        try #require(Int(wanted) > before, "the soft limit (\(limit)) leaves no room to grow the table past \(before)")
        DescriptorTable.reserve(wanted)
        #expect(try Self.tableSize() >= Int(wanted))
        #expect(fcntl(wanted - 1, F_GETFD) == -1)
    }
}
