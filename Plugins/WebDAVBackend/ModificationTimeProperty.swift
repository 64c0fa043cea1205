import CurlTransport
import Foundation

/// Ferry's own WebDAV properties, which keep a file's modification time on servers that
/// store dead properties (Apache mod_dav, lighttpd) but do not let a client set
/// `getlastmodified`, a live property.
///
/// - `<f:mtime xmlns:f="urn:ferry:">1650000000.250000000</f:mtime>`: the source file's
///   modification time, seconds and nanoseconds since 1970.
/// - `<f:mtime-version>`: the server's version stamp of the content that mtime was set
///   for (the ETag without `W/`, or, without an ETag, the size and the last-modified
///   second). Dead properties outlive a `PUT` by another client on Apache: an mtime is
///   believed only while the file's stamp still equals it, so a file overwritten since
///   falls back to the server's own time instead of wearing a stale one. A `COPY` also
///   gives the copy a new stamp, so the copy shows the server's time.
enum ModificationTimeProperty {
    static let namespace = "urn:ferry:"
    static let mtimeName = "mtime"
    static let versionName = "mtime-version"

    /// The two properties for a `PROPFIND` body that declares `f` as Ferry's namespace.
    static let propfindElements = "<f:\(mtimeName)/><f:\(versionName)/>"

    /// `1650000000.250000000` for 1_650_000_000_250_000_000 ns; times before 1970 count
    /// whole seconds down and the fraction up (`-6.750000000` is -5.25 s).
    static func format(nanos: Int64) -> String {
        let seconds = nanos >= 0 ? nanos / 1_000_000_000 : -((-nanos - 1) / 1_000_000_000) - 1
        let fraction = nanos - seconds * 1_000_000_000
        let digits = String(fraction)
        return String(seconds) + "." + String(repeating: "0", count: 9 - digits.count) + digits
    }

    /// The nanoseconds of a value written by `format` (also `1650000000`, and fewer than
    /// nine fraction digits); nil for anything else.
    static func parse(_ text: some StringProtocol) -> Int64? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let parts = trimmed.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let wholeText = parts[0]
        let unsigned = wholeText.hasPrefix("-") ? wholeText.dropFirst() : wholeText[...]
        guard !unsigned.isEmpty, unsigned.count <= 11, unsigned.allSatisfy({ $0.isASCII && $0.isNumber }),
              let whole = Int64(wholeText) else { return nil }
        var fraction: Int64 = 0
        if parts.count == 2 {
            let digits = parts[1]
            guard (1...9).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }),
                  let value = Int64(digits) else { return nil }
            fraction = value
            for _ in digits.count..<9 { fraction *= 10 }
        }
        // 11 digits of seconds keep this far inside Int64's nanosecond range.
        return whole * 1_000_000_000 + fraction
    }

    /// The stamp a file's properties give: its ETag (without the weakness marker), else its
    /// size and last-modified second; nil when the server reports neither.
    static func versionStamp(size: Int64, lastModifiedNanos: Int64?, etag: String?) -> String? {
        if let etag, !etag.isEmpty {
            return etag.hasPrefix("W/") ? String(etag.dropFirst(2)) : etag
        }
        guard let lastModifiedNanos else { return nil }
        let seconds = lastModifiedNanos >= 0 ? lastModifiedNanos / 1_000_000_000 : (lastModifiedNanos + 1) / 1_000_000_000 - 1
        return "\(size) \(seconds)"
    }

    /// The `PROPPATCH` body that sets both properties.
    static func propertyUpdate(nanos: Int64, versionStamp: String) -> String {
        """
        <?xml version="1.0" encoding="utf-8"?>
        <D:propertyupdate xmlns:D="DAV:" xmlns:f="\(namespace)"><D:set><D:prop>\
        <f:\(mtimeName)>\(format(nanos: nanos))</f:\(mtimeName)>\
        <f:\(versionName)>\(XMLText.escaped(versionStamp))</f:\(versionName)>\
        </D:prop></D:set></D:propertyupdate>
        """
    }
}
