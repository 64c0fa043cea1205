import Foundation

/// What the first bytes of a changed file say about it, against the type its name gives.
///
/// Ransomware rewrites files in place with ciphertext: the name still says `.jpg` but the
/// bytes no longer start as a JPEG does, and they are as random as bytes get. Media files
/// are already compressed, so randomness alone says nothing about them: a file looks
/// encrypted only when it lacks its type's signature *and* its bytes are near-random.
/// Text types (GPX tracks, XML sidecars, CSV) have no signature but are far from random.
///
/// Pure: the caller reads the bytes (`ContentSampler`).
public enum ContentLook: Sendable, Equatable {
    /// The bytes fit the type the name gives.
    case fitsType
    /// Neither the type's signature nor anything but near-random bytes.
    case looksEncrypted
    /// A type Ferry knows no signature for, or too few bytes to tell: no opinion.
    case unknown

    /// How many bytes of a file's start are looked at.
    public static let sampleSize = 64 * 1024

    /// Bytes below this count say too little about their randomness.
    static let minimumSample = 1024

    /// Bits per byte above which `count` bytes count as random. Uniform random bytes
    /// measure just under 8 bits, short of it by about 255 / (2 n ln 2) for a sample of n
    /// (7.82 for 1 KiB, 7.997 for 64 KiB); ciphertext measures the same. Text measures 4–5.5.
    static func randomEntropy(count: Int) -> Double {
        8 - 255 / (2 * Double(count) * 0.693_147) - 0.1
    }

    public static func of(name: String, prefix: [UInt8]) -> ContentLook {
        guard let kind = ExpectedContent.forName(name) else { return .unknown }
        if kind.accepts(prefix) { return .fitsType }
        guard prefix.count >= minimumSample else { return .unknown }
        return entropy(of: prefix) >= randomEntropy(count: prefix.count) ? .looksEncrypted : .unknown
    }

    /// A replacement's look, from the look of the version it replaces and of the new one:
    /// it looks encrypted only when the old version fitted its type and the new one looks
    /// encrypted. A file that never fitted its name (random test data named `.jpg`, a
    /// camera's odd format) says nothing when it changes.
    public static func change(from previous: ContentLook, to current: ContentLook) -> ContentLook {
        guard current == .looksEncrypted else { return current }
        return previous == .fitsType ? .looksEncrypted : .unknown
    }

    /// Bytes of the replaced (remote) version read to tell whether it fitted its type: a
    /// signature needs a few, text a little more.
    public static let previousSampleSize = 4096

    /// Shannon entropy of the bytes, in bits per byte.
    static func entropy(of bytes: [UInt8]) -> Double {
        guard !bytes.isEmpty else { return 0 }
        var counts = [Int](repeating: 0, count: 256)
        for byte in bytes { counts[Int(byte)] += 1 }
        let total = Double(bytes.count)
        var bits = 0.0
        for count in counts where count > 0 {
            let share = Double(count) / total
            bits -= share * log2(share)
        }
        return bits
    }
}

/// The content a file name promises: a binary signature at a fixed offset, or text.
enum ExpectedContent: Sendable {
    case signature([(offset: Int, bytes: [UInt8])])
    case text

    /// Any one signature matching is enough (TIFF-based raw files come in both byte orders).
    func accepts(_ prefix: [UInt8]) -> Bool {
        switch self {
        case let .signature(options):
            return options.contains { option in
                prefix.count >= option.offset + option.bytes.count
                    && Array(prefix[option.offset ..< option.offset + option.bytes.count]) == option.bytes
            }
        case .text:
            // Text is far from random; an empty or short file is text enough.
            return prefix.count < ContentLook.minimumSample || ContentLook.entropy(of: prefix) < 6.5
        }
    }

    static func forName(_ name: String) -> ExpectedContent? {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        let fileExtension = name[name.index(after: dot)...].lowercased()
        return table[fileExtension]
    }

    private static let jpeg: ExpectedContent = .signature([(0, [0xFF, 0xD8, 0xFF])])
    private static let tiff: ExpectedContent = .signature([(0, [0x49, 0x49, 0x2A, 0x00]), (0, [0x4D, 0x4D, 0x00, 0x2A])])
    /// ISO base media (MP4, MOV, HEIC, CR3): a box size, then `ftyp`; QuickTime files may
    /// start with other atoms.
    private static let isoMedia: ExpectedContent = .signature([
        (4, Array("ftyp".utf8)), (4, Array("moov".utf8)), (4, Array("wide".utf8)), (4, Array("mdat".utf8)),
        (4, Array("free".utf8)), (4, Array("skip".utf8)), (4, Array("pnot".utf8)),
    ])
    private static let riff: ExpectedContent = .signature([(0, Array("RIFF".utf8))])
    private static let zip: ExpectedContent = .signature([(0, [0x50, 0x4B, 0x03, 0x04]), (0, [0x50, 0x4B, 0x05, 0x06])])

    private static let table: [String: ExpectedContent] = [
        "jpg": jpeg, "jpeg": jpeg, "jpe": jpeg,
        "png": .signature([(0, [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])]),
        "gif": .signature([(0, Array("GIF87a".utf8)), (0, Array("GIF89a".utf8))]),
        "webp": riff, "avi": riff, "wav": riff,
        "tif": tiff, "tiff": tiff, "dng": tiff, "nef": tiff, "cr2": tiff, "arw": tiff, "pef": tiff, "srw": tiff,
        "orf": .signature([(0, Array("IIRO".utf8)), (0, Array("IIRS".utf8)), (0, [0x49, 0x49, 0x2A, 0x00])]),
        "rw2": .signature([(0, [0x49, 0x49, 0x55, 0x00])]),
        "raf": .signature([(0, Array("FUJIFILMCCD-RAW".utf8))]),
        "mp4": isoMedia, "m4v": isoMedia, "mov": isoMedia, "heic": isoMedia, "heif": isoMedia, "avif": isoMedia,
        "3gp": isoMedia, "cr3": isoMedia, "m4a": isoMedia,
        "mkv": .signature([(0, [0x1A, 0x45, 0xDF, 0xA3])]), "webm": .signature([(0, [0x1A, 0x45, 0xDF, 0xA3])]),
        "mp3": .signature([(0, Array("ID3".utf8)), (0, [0xFF, 0xFB]), (0, [0xFF, 0xF3]), (0, [0xFF, 0xF2])]),
        "flac": .signature([(0, Array("fLaC".utf8))]),
        "pdf": .signature([(0, Array("%PDF".utf8))]),
        "zip": zip, "docx": zip, "xlsx": zip, "pptx": zip, "odt": zip, "epub": zip,
        "gpx": .text, "kml": .text, "xml": .text, "xmp": .text, "txt": .text, "csv": .text, "json": .text,
        "md": .text, "html": .text, "svg": .text, "tcx": .text, "nmea": .text,
    ]
}
