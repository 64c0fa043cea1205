/// One inotify event as a Swift value: which watch, what happened, and to which name in
/// the watched folder. The flag values are the kernel's (`<sys/inotify.h>`), which are part
/// of the Linux ABI.
public struct InotifyEvent: Sendable, Equatable {
    public struct Mask: OptionSet, Sendable, Hashable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }

        public static let modify = Mask(rawValue: 0x0000_0002)
        public static let closeWrite = Mask(rawValue: 0x0000_0008)
        public static let movedFrom = Mask(rawValue: 0x0000_0040)
        public static let movedTo = Mask(rawValue: 0x0000_0080)
        public static let create = Mask(rawValue: 0x0000_0100)
        public static let delete = Mask(rawValue: 0x0000_0200)
        public static let deleteSelf = Mask(rawValue: 0x0000_0400)
        public static let moveSelf = Mask(rawValue: 0x0000_0800)
        /// Events were lost: the kernel queue overflowed (`IN_Q_OVERFLOW`).
        public static let queueOverflow = Mask(rawValue: 0x0000_4000)
        /// The watch is gone (its folder was deleted or unmounted).
        public static let ignored = Mask(rawValue: 0x0000_8000)
        public static let onlyDirectory = Mask(rawValue: 0x0100_0000)
        public static let isDirectory = Mask(rawValue: 0x4000_0000)

        /// What a watched folder of a media tree is watched for.
        public static let folderChanges: Mask = [
            .modify, .closeWrite, .movedFrom, .movedTo, .create, .delete, .deleteSelf, .moveSelf, .onlyDirectory,
        ]
    }

    /// The watch descriptor (-1 for a queue overflow).
    public var watch: Int32
    public var mask: Mask
    /// Pairs an `IN_MOVED_FROM` with its `IN_MOVED_TO`.
    public var cookie: UInt32
    /// The name inside the watched folder; empty for events on the folder itself.
    public var name: String

    public init(watch: Int32, mask: Mask, cookie: UInt32 = 0, name: String = "") {
        self.watch = watch
        self.mask = mask
        self.cookie = cookie
        self.name = name
    }
}

/// Reads the kernel's event records: a 16-byte header (wd, mask, cookie, len) followed by
/// `len` bytes of NUL-padded name. Works on bytes, so it is tested without a kernel.
public enum InotifyEventDecoder {
    public static let headerSize = 16

    public static func decode(_ bytes: [UInt8]) -> [InotifyEvent] {
        var events: [InotifyEvent] = []
        var offset = 0
        func word(_ at: Int) -> UInt32 {
            UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
        }
        while offset + headerSize <= bytes.count {
            let watch = Int32(bitPattern: word(offset))
            let mask = word(offset + 4)
            let cookie = word(offset + 8)
            let length = Int(word(offset + 12))
            let nameStart = offset + headerSize
            guard nameStart + length <= bytes.count else { break }
            let nameBytes = bytes[nameStart..<(nameStart + length)].prefix { $0 != 0 }
            let name = String(decoding: nameBytes, as: UTF8.self)
            events.append(InotifyEvent(watch: watch, mask: InotifyEvent.Mask(rawValue: mask), cookie: cookie, name: name))
            offset = nameStart + length
        }
        return events
    }

    /// The bytes the kernel would write for `events` (little-endian, names padded to 4):
    /// how tests make an overflow or a rename happen without a kernel.
    public static func encode(_ events: [InotifyEvent]) -> [UInt8] {
        var bytes: [UInt8] = []
        func append(_ value: UInt32) {
            for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
        }
        for event in events {
            var name = Array(event.name.utf8)
            if !name.isEmpty {
                name.append(0)
                while name.count % 4 != 0 { name.append(0) }
            }
            append(UInt32(bitPattern: event.watch))
            append(event.mask.rawValue)
            append(event.cookie)
            append(UInt32(name.count))
            bytes += name
        }
        return bytes
    }
}
