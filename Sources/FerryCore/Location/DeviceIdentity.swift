import FerrySystem
import Foundation

/// Which device a state folder is, among the devices that sync one remote folder.
///
/// Host names do not tell devices apart: two state folders on one machine are two devices,
/// and two machines may share a name (every new Raspberry Pi is `raspberrypi`). So a state
/// folder gets a random id the first time it is used, kept in `STATE/device-id`. It names
/// this device's temporary upload files on a two-way remote (`UploadRequest.temporaryTag`),
/// so that two devices uploading one name at the same moment never write one temporary
/// file, and stays the same across runs, so that an interrupted upload is continued.
public enum DeviceIdentity {
    static let fileName = "device-id"

    /// The state folder's id (12 hex digits), made and kept on first use. Two processes
    /// that make it at once agree: the id is written under a name of its own and renamed
    /// into place only if no id is there yet.
    public static func id(stateDirectory: String) throws(SystemError) -> String {
        let folder = try AnchoredFolder(stateDirectory, create: true)
        if let existing = try read(in: folder) { return existing }
        var generator = SystemRandomNumberGenerator()
        let made = String((0..<12).map { _ in "0123456789abcdef".randomElement(using: &generator)! })
        let scratch = "." + fileName + "." + made
        let file = try folder.open(scratch, .createNew, permissions: 0o600)
        let bytes = Array((made + "\n").utf8)
        try file.write(bytes, count: bytes.count, at: 0)
        try file.sync()
        do {
            try folder.rename(scratch, to: fileName, replacing: false)
        } catch where error.isAlreadyExists {
            try? folder.removeFile(scratch)
            if let existing = try read(in: folder) { return existing }
            throw error
        }
        return made
    }

    static let nameFileName = "device-name"

    /// The device's name, shown to the other devices (`status`: "last change from nas")
    /// and in conflict copies' names: the first line of `STATE/device-name` when there is
    /// one, else the host name.
    public static func name(stateDirectory: String) -> String {
        if let data = FileManager.default.contents(atPath: LocalFileSystem.join(stateDirectory, nameFileName)),
           let line = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first {
            let name = line.trimmingCharacters(in: .whitespaces)
            if !name.isEmpty { return String(name.prefix(64)) }
        }
        return ProcessInfo.processInfo.hostName
    }

    private static func read(in folder: AnchoredFolder) throws(SystemError) -> String? {
        let file: OpenFile
        do {
            file = try folder.open(fileName, .read)
        } catch where error.isNotFound {
            return nil
        }
        // Only the id's own characters: a stray newline or a hand-edited file cannot put
        // anything else into a remote file name.
        let id = String(decoding: try file.readAll(), as: UTF8.self).filter { $0.isASCII && ($0.isLetter || $0.isNumber) }
        return id.isEmpty ? nil : String(id.prefix(32))
    }
}
