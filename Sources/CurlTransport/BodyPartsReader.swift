import FerryPluginAPI
import FerrySystem
import Foundation

/// Reads a `.parts` request body for libcurl's read callback: the pieces in order, each
/// file read in place as libcurl asks for more, and rewindable to any position (libcurl
/// sends a body again after a redirect or an authentication challenge). Used by one
/// blocking thread at a time, like the `CurlTransferContext` that owns it.
final class BodyPartsReader {
    private enum Source {
        case data(Data)
        case file(OpenFile, offset: Int64)
    }

    private struct Piece {
        let source: Source
        /// Where the piece starts in the whole body.
        let start: Int64
        let length: Int64
        var end: Int64 { start + length }
    }

    private let pieces: [Piece]
    let length: Int64
    private var position: Int64 = 0
    /// The piece that holds `position` (or `pieces.count` at the end).
    private var current = 0

    init(_ parts: [HTTPRequest.BodyPart]) throws(BackendError) {
        var pieces: [Piece] = []
        var start: Int64 = 0
        for part in parts {
            let source: Source
            let length: Int64
            switch part {
            case let .data(data):
                source = .data(data)
                length = Int64(data.count)
            case let .file(path, offset, count):
                source = .file(try BackendError.catching { try OpenFile(path, mode: .read) }, offset: offset)
                length = count
            }
            if length > 0 { pieces.append(Piece(source: source, start: start, length: length)) }
            start += length
        }
        self.pieces = pieces
        self.length = start
    }

    /// Fills as much of `buffer` as the body has left; returns the count (0 at the end).
    func fill(_ buffer: UnsafeMutableRawBufferPointer) throws(BackendError) -> Int {
        var filled = 0
        while filled < buffer.count, current < pieces.count {
            let piece = pieces[current]
            let within = position - piece.start
            let count = Int(min(Int64(buffer.count - filled), piece.length - within))
            let target = UnsafeMutableRawBufferPointer(rebasing: buffer[filled..<(filled + count)])
            let got: Int
            switch piece.source {
            case let .data(data):
                data.withUnsafeBytes { source in
                    target.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[Int(within)..<(Int(within) + count)]))
                }
                got = count
            case let .file(file, offset):
                got = try BackendError.catching { try file.read(into: target, at: offset + within) }
                if got == 0 {
                    throw BackendError(.changedDuringTransfer, "the file became shorter while being sent", path: file.path)
                }
            }
            filled += got
            position += Int64(got)
            if position == piece.end { current += 1 }
        }
        return filled
    }

    /// Moves back (or forward) to `target`; false when it lies outside the body.
    func rewind(to target: Int64) -> Bool {
        guard target >= 0, target <= length else { return false }
        position = target
        current = pieces.firstIndex { $0.end > target } ?? pieces.count
        return true
    }
}
