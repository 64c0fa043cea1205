import FerryPluginAPI
import Foundation
import Testing
@testable import FerryCore

/// The change markers' names, contents and the reader's decisions: what a device lists
/// after another device wrote, and when it must list everything.
@Suite("change markers")
struct ChangeMarkerTests {
    static let a = "0123456789ab-00112233aabbccdd"
    static let b = "ba9876543210-ffeeddcc33221100"
    static let own = "aaaaaaaaaaaa-1111111111111111"

    static func listed(_ writer: String, _ seq: Int) -> ChangeMarkerReading.Listed {
        let path = try! RelativePath(".ferry-catalog/" + ChangeMarker.fileName(writer: writer, seq: seq))
        return ChangeMarkerReading.Listed(writer: writer, seq: seq, path: path)
    }

    static func seen(_ seq: Int) -> ChangeMarkerReading.Seen {
        ChangeMarkerReading.Seen(seq: seq, device: "nas", changedAt: 1)
    }

    static func marker(_ writer: String, _ entries: [(Int, [String]?)]) -> ChangeMarker {
        ChangeMarker(writer: writer, device: "nas",
                     entries: entries.map { ChangeMarker.Entry(seq: $0.0, at: Double($0.0), folders: $0.1) })
    }

    @Test("a marker's name carries its writer and sequence; other names are not markers")
    func names() {
        let name = ChangeMarker.fileName(writer: Self.a, seq: 42)
        #expect(ChangeMarker.parse(fileName: name)?.writer == Self.a)
        #expect(ChangeMarker.parse(fileName: name)?.seq == 42)
        for other in ["host-0011.json", "\(Self.a).0.changes", "\(Self.a).007.changes", "\(Self.a).1.2.changes",
                      "../x.1.changes", "\(Self.a).1.changes.ferry-part", ".\(Self.a).1.changes", "zz.1.changes",
                      "\(Self.a).-1.changes", "\(Self.a)..changes"] {
            #expect(ChangeMarker.parse(fileName: other) == nil, "\(other)")
        }
        #expect(ChangeMarker.writerName(deviceId: "0123456789ab", pairId: 1) == "0123456789ab-1")
        #expect(ChangeMarker.parse(fileName: ChangeMarker.fileName(writer: "0123456789ab-12", seq: 3))?.writer == "0123456789ab-12")
        #expect(ChangeMarker.folder(of: "a/b/c.jpg") == "a/b")
        #expect(ChangeMarker.folder(of: "c.jpg") == "")
    }

    @Test("a marker keeps its last entries, and a run into too many folders names none")
    func entries() {
        var marker = ChangeMarker(writer: Self.a, device: "nas", entries: [])
        for seq in 1...(ChangeMarker.keptEntries + 5) {
            marker = marker.adding(seq: seq, at: 0, folders: ["f\(seq)"])
        }
        #expect(marker.entries.count == ChangeMarker.keptEntries)
        #expect(marker.entries.first?.seq == 6)
        #expect(marker.seq == ChangeMarker.keptEntries + 5)
        let many = Set((0...ChangeMarker.maxFolders).map { "f\($0)" })
        #expect(marker.adding(seq: 100, at: 0, folders: many).entries.last?.folders == nil)
        #expect(marker.adding(seq: 100, at: 0, folders: nil).entries.last?.folders == nil)
        #expect(ChangeMarker.decode(marker.encoded()) == marker)
    }

    @Test("a marker that names a folder outside the remote folder, or is damaged, is refused")
    func hostileMarkers() {
        for folders in [["../up"], ["/etc"], ["a/../../b"]] {
            let marker = Self.marker(Self.a, [(1, folders)])
            #expect(ChangeMarker.decode(marker.encoded()) == nil, "\(folders)")
        }
        #expect(ChangeMarker.decode(Self.marker(Self.a, [(2, []), (1, [])]).encoded()) == nil)
        #expect(ChangeMarker.decode(Self.marker("not a writer/..", [(1, [])]).encoded()) == nil)
        #expect(ChangeMarker.decode(Data("{}".utf8)) == nil)
        #expect(ChangeMarker.decode(Self.marker(Self.a, [(1, ["", "a/b"])]).encoded()) != nil)
    }

    @Test("the newest marker of each writer counts; names that are not markers are left out")
    func newestPerWriter() throws {
        let folder = try RelativePath(".ferry-catalog")
        let entries = ["\(Self.a).3.changes", "\(Self.a).4.changes", "\(Self.b).1.changes", "host-1.json", "junk"].map {
            RemoteEntry(path: folder.appending(try! RelativePath($0)), kind: .file, size: 100, modifiedNanos: nil)
        }
        let newest = ChangeMarkerReading.newest(in: entries)
        #expect(newest.mapValues { $0.seq } == [Self.a: 4, Self.b: 1])
    }

    @Test("the first look: unchanged, markers to read, or everything to list")
    func firstLook() {
        typealias Reading = ChangeMarkerReading
        // Alone on the remote: others may write without marking.
        #expect(Reading.firstLook(listed: [Self.own: Self.listed(Self.own, 3)], seen: [:], own: Self.own)
                == .listEverything("no other device marks its changes here"))
        #expect(Reading.firstLook(listed: [:], seen: [:], own: Self.own) == .listEverything("no other device marks its changes here"))
        // Nothing moved (its own marker moving does not count).
        #expect(Reading.firstLook(listed: [Self.a: Self.listed(Self.a, 3), Self.own: Self.listed(Self.own, 9)],
                                  seen: [Self.a: Self.seen(3)], own: Self.own) == .unchanged)
        // One writer wrote, one new writer appeared.
        #expect(Reading.firstLook(listed: [Self.a: Self.listed(Self.a, 4), Self.b: Self.listed(Self.b, 1)],
                                  seen: [Self.a: Self.seen(3)], own: Self.own)
                == .read([Self.listed(Self.a, 4), Self.listed(Self.b, 1)]))
        // A writer's marker went back (its journal started over) or went away.
        if case .listEverything = Reading.firstLook(listed: [Self.a: Self.listed(Self.a, 2)], seen: [Self.a: Self.seen(3)], own: Self.own) {
        } else {
            Issue.record("a marker that went back must mean a full listing")
        }
        if case .listEverything = Reading.firstLook(listed: [Self.b: Self.listed(Self.b, 1)],
                                                   seen: [Self.a: Self.seen(3), Self.b: Self.seen(1)], own: Self.own) {
        } else {
            Issue.record("a marker that went away must mean a full listing")
        }
    }

    @Test("the folders to list are those of every entry after what was seen")
    func answer() {
        typealias Reading = ChangeMarkerReading
        let a = Self.marker(Self.a, [(3, ["x"]), (4, ["a/b", ""]), (5, ["c"])])
        let b = Self.marker(Self.b, [(1, ["new"])])
        #expect(Reading.answer(read: [(Self.listed(Self.a, 5), a), (Self.listed(Self.b, 1), b)], seen: [Self.a: Self.seen(3)])
                == .folders(["a/b", "", "c", "new"]))
        // Trimmed past what the reader saw.
        let trimmed = Self.marker(Self.a, [(5, ["c"])])
        #expect(Reading.answer(read: [(Self.listed(Self.a, 5), trimmed)], seen: [Self.a: Self.seen(3)])
                == .listEverything("the change marker of \(Self.a) no longer goes back to what was seen"))
        // A new writer whose log starts after its first run: its first runs are not known.
        #expect(Reading.answer(read: [(Self.listed(Self.a, 5), a)], seen: [:])
                == .listEverything("the change marker of \(Self.a) no longer goes back to what was seen"))
        // Too many folders to name, unreadable, or not the marker the listing named.
        let everything = Self.marker(Self.a, [(3, ["x"]), (4, nil)])
        #expect(Reading.answer(read: [(Self.listed(Self.a, 4), everything)], seen: [Self.a: Self.seen(3)])
                == .listEverything("\(Self.a) wrote into too many folders to name"))
        #expect(Reading.answer(read: [(Self.listed(Self.a, 4), nil)], seen: [Self.a: Self.seen(3)])
                == .listEverything("the change marker of \(Self.a) could not be read"))
        #expect(Reading.answer(read: [(Self.listed(Self.a, 6), a)], seen: [Self.a: Self.seen(3)])
                == .listEverything("the change marker of \(Self.a) could not be read"))
    }

    @Test("folders this device wrote into and never announced (a run of its own stopped part-way) are listed too")
    func ownUnannouncedFolders() {
        typealias Reading = ChangeMarkerReading
        // No other writer moved: the folders of the stopped run are listed, nothing else.
        #expect(Reading.answer(.folders([]), listingAlso: ["photos"]) == .folders(["photos"]))
        #expect(Reading.answer(.folders(["a/b"]), listingAlso: ["photos", ""]) == .folders(["a/b", "photos", ""]))
        // Too many to name when it stopped: only a full listing can tell what it left.
        #expect(Reading.answer(.folders(["a/b"]), listingAlso: nil)
                == .listEverything("a run of this device stopped before it announced where it wrote"))
        let many = Set((0...ChangeMarker.maxFolders).map { "f\($0)" })
        #expect(Reading.answer(.folders(["a/b"]), listingAlso: many) == .listEverything("too many folders changed"))
        // A full listing already covers them.
        #expect(Reading.answer(.listEverything("why"), listingAlso: ["photos"]) == .listEverything("why"))
    }

    @Test("what is recorded as seen: every other writer's newest, with the device and time of markers read")
    func seenAfterReading() {
        let a = Self.marker(Self.a, [(4, ["x"])])
        let listed = [Self.a: Self.listed(Self.a, 4), Self.b: Self.listed(Self.b, 2), Self.own: Self.listed(Self.own, 7)]
        let seen = ChangeMarkerReading.seen(after: [(Self.listed(Self.a, 4), a)], listed: listed,
                                            before: [Self.b: Self.seen(1)], own: Self.own)
        #expect(seen[Self.a] == ChangeMarkerReading.Seen(seq: 4, device: "nas", changedAt: 4))
        #expect(seen[Self.b]?.seq == 2)
        #expect(seen[Self.own] == nil)
    }
}
