import ArchiveCodec
import FerryPluginAPI
import Foundation

/// Where bundles live on a remote and what they are called: `.ferry-bundles/` in the
/// folder pair's remote root, `bundle-<UTC time>-<random>.<format>` beside
/// `<same>.manifest.json`. The hidden folder keeps them apart from the user's files (no
/// user file can collide with it: the scanner skips it), and the time in the name sorts
/// bundles by age.
public enum BundleNaming {
    public static let folderName = ".ferry-bundles"
    package static let prefix = "bundle-"
    static let manifestSuffix = ".manifest.json"

    public static func folder(in remoteRoot: RelativePath) -> RelativePath {
        // A constant, valid component.
        (try? remoteRoot.appending(folderName)) ?? remoteRoot
    }

    /// A new bundle's file name.
    public static func newName(format: ArchiveFormat, at time: Double, random: UInt32 = .random(in: .min ... .max)) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        let stamp = formatter.string(from: Date(timeIntervalSince1970: time))
        let hex = String(random, radix: 16)
        return prefix + stamp + "-" + String(repeating: "0", count: 8 - hex.count) + hex + "." + format.fileExtension
    }

    public static func manifestName(for bundleName: String) -> String {
        bundleName + manifestSuffix
    }

    /// Whether a name is a bundle file's name Ferry could have made.
    public static func isBundleName(_ name: String) -> Bool {
        guard name.hasPrefix(prefix), !name.contains("/") else { return false }
        return ArchiveFormat.allCases.contains { name.hasSuffix("." + $0.fileExtension) }
    }

    /// The bundle a manifest name belongs to, or nil when it is not a manifest's name.
    public static func bundleName(ofManifest name: String) -> String? {
        guard name.hasSuffix(manifestSuffix) else { return nil }
        let bundle = String(name.dropLast(manifestSuffix.count))
        return isBundleName(bundle) ? bundle : nil
    }

    /// The format of a bundle from its name.
    public static func format(of name: String) -> ArchiveFormat? {
        ArchiveFormat.allCases.first { name.hasSuffix("." + $0.fileExtension) }
    }
}
