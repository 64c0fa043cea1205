import CurlTransport
import Testing

@Suite("HTTP dates")
struct HTTPDateTests {
    static let rfcExample: Int64 = 784_111_777_000_000_000  // Sun, 06 Nov 1994 08:49:37 GMT

    @Test("the three forms of RFC 9110", arguments: [
        "Sun, 06 Nov 1994 08:49:37 GMT",   // IMF-fixdate (RFC 1123)
        "Sunday, 06-Nov-94 08:49:37 GMT",  // RFC 850
        "Sun Nov  6 08:49:37 1994",        // asctime
    ])
    func forms(text: String) {
        #expect(HTTPDate.parse(text) == Self.rfcExample)
    }

    @Test("what servers send in the wild", arguments: [
        ("sun, 06 nov 1994 08:49:37 gmt", rfcExample),
        ("Sun, 6 Nov 1994 08:49:37 GMT", rfcExample),
        ("06 Nov 1994 08:49:37 GMT", rfcExample),
        ("Sun, 06 Nov 1994 08:49:37 UTC", rfcExample),
        ("Sun, 06 Nov 1994 09:49:37 +0100", rfcExample),
        ("Sun, 06 Nov 1994 03:19:37 -0530", rfcExample),
        ("Sunday, 06-Nov-1994 08:49:37 GMT", rfcExample),
        ("Sun Nov 6 08:49:37 1994", rfcExample),
        ("Mon, 06 Nov 1994 08:49:37 GMT", rfcExample),  // the wrong day name is not checked
        ("Thu, 01 Jan 1970 00:00:00 GMT", 0),
        ("Wed, 31 Dec 1969 23:59:59 GMT", -1_000_000_000),
        ("Thursday, 29-Feb-24 23:59:59 GMT", 1_709_251_199_000_000_000),
        ("Thursday, 01-Jan-70 00:00:00 GMT", 0),
        ("Tuesday, 31-Dec-69 00:00:00 GMT", 3_155_673_600_000_000_000),  // two-digit years below 70 are 20xx
        ("Sun, 09 Sep 2001 01:46:40 GMT", 1_000_000_000_000_000_000),
        ("Fri, 11 Apr 2262 23:47:16 GMT", 9_223_372_036_000_000_000),
    ] as [(String, Int64)])
    func lenient(text: String, nanos: Int64) {
        #expect(HTTPDate.parse(text) == nanos)
    }

    @Test("garbage is nil, never a guess", arguments: [
        "", " ", "yesterday", "0", "784111777",
        "2024-03-05T10:11:12Z",
        "Sun, 06 Nov 1994 08:49:37",            // no zone
        "Sun, 06 Nov 1994 08:49:37 CET",        // a named zone other than GMT/UTC
        "Sun, 06 Nov 94 08:49:37 GMT",          // two-digit year in the RFC 1123 form
        "Sun, 06 Nov 994 08:49:37 GMT",
        "Sunday, 06-Nov-994 08:49:37 GMT",
        "Sun, 06 Foo 1994 08:49:37 GMT",
        "Sun, 31 Nov 1994 08:49:37 GMT",
        "Sun, 29 Feb 2023 08:49:37 GMT",
        "Sun, 00 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 24:00:00 GMT",
        "Sun, 06 Nov 1994 08:60:00 GMT",
        "Sun, 06 Nov 1994 08:49:61 GMT",
        "Sun, 06 Nov 1994 8:4:37 GMT",
        "Sun, 06 Nov 1994 08:49 GMT",
        "Sun, 06 Nov 1994 08:49:37.5 GMT",
        "Sun, 06 Nov 1994 08:49:37 +01",
        "Sun, 06 Nov 1994 08:49:37 +2400",
        "Sun, 06 Nov +994 08:49:37 GMT",
        "Foo, 06 Nov 1994 08:49:37 GMT",
        "Sun 06 Nov 1994 08:49:37 GMT",
        "Sun, 06-Nov-94 08:49:37 GMT extra",
        "Sun Nov  6 08:49:37 1994 GMT",
        "Sun, ０６ Nov 1994 08:49:37 GMT",        // full-width digits
        "Sat, 01 Jan 9999 00:00:00 GMT",         // beyond what Int64 nanoseconds hold
        "Fri, 01 Jan 1600 00:00:00 GMT",
    ])
    func garbage(text: String) {
        #expect(HTTPDate.parse(text) == nil)
    }

    @Test("formatting writes IMF-fixdate", arguments: [
        (rfcExample, "Sun, 06 Nov 1994 08:49:37 GMT"),
        (rfcExample + 999_999_999, "Sun, 06 Nov 1994 08:49:37 GMT"),
        (0, "Thu, 01 Jan 1970 00:00:00 GMT"),
        (-1, "Wed, 31 Dec 1969 23:59:59 GMT"),
        (1_709_251_199_000_000_000, "Thu, 29 Feb 2024 23:59:59 GMT"),
        (Int64.max, "Fri, 11 Apr 2262 23:47:16 GMT"),
        (Int64.min, "Tue, 21 Sep 1677 00:12:43 GMT"),
    ] as [(Int64, String)])
    func format(nanos: Int64, text: String) {
        #expect(HTTPDate.format(nanos: nanos) == text)
    }

    @Test("format and parse agree", arguments: [
        Int64(0), 86_399_000_000_000, 951_782_400_000_000_000, 4_102_444_800_000_000_000, -2_208_988_800_000_000_000,
    ])
    func roundTrip(nanos: Int64) {
        #expect(HTTPDate.parse(HTTPDate.format(nanos: nanos)) == nanos)
    }
}
