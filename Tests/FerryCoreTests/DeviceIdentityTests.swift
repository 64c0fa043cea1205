import FerryTestSupport
import Foundation
import Testing
@testable import FerryCore

/// A state folder's device id names its temporary upload files on a shared remote: it must
/// stay the same across runs (so uploads are continued) and differ between state folders
/// (so two devices never write one temporary file), even on one machine.
@Suite("device identity of a state folder")
struct DeviceIdentityTests {
    @Test("made once, kept across calls, different for another state folder")
    func stableAndDistinct() throws {
        let folder = TemporaryDirectory("ferry-device")
        let first = try DeviceIdentity.id(stateDirectory: folder.child("a"))
        #expect(first.count == 12 && first.allSatisfy(\.isHexDigit))
        #expect(try DeviceIdentity.id(stateDirectory: folder.child("a")) == first)
        #expect(try DeviceIdentity.id(stateDirectory: folder.child("b")) != first)
        let kept = try String(contentsOfFile: folder.child("a/device-id"), encoding: .utf8)
        #expect(kept == first + "\n")
        // No scratch file is left beside it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.child("a")) == ["device-id"])
    }

    @Test("an edited file gives only its letters and digits to file names")
    func editedFileIsFiltered() throws {
        let folder = TemporaryDirectory("ferry-device")
        try FileManager.default.createDirectory(atPath: folder.child("s"), withIntermediateDirectories: true)
        try Data("  my/device\n".utf8).write(to: URL(fileURLWithPath: folder.child("s/device-id")))
        #expect(try DeviceIdentity.id(stateDirectory: folder.child("s")) == "mydevice")
    }

    @Test("processes that make it at once agree on one id")
    func concurrentCallsAgree() async throws {
        let folder = TemporaryDirectory("ferry-device")
        let state = folder.child("s")
        let ids = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<8 { group.addTask { try DeviceIdentity.id(stateDirectory: state) } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(ids.count == 1)
    }
}
