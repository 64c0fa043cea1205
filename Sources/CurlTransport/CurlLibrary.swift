internal import CCurl

/// Process-wide facts about the linked libcurl.
public enum CurlLibrary {
    /// libcurl's version line, e.g. `libcurl/7.88.1 OpenSSL/3.0.x zlib/1.2.13 …`.
    public static var versionDescription: String {
        String(cString: curl_version())
    }
}
