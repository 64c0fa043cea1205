@testable import ferry
import Testing

/// Log lines on a narrow terminal: a watch run's summary names its remote now
/// ("media: push → store: …"), which took it past 60 columns under a slow run's "in 32.9 s".
@Suite struct LogLineWrapTests {
    static let line = "08:49:30 media: push → store: 16 uploaded (768 KiB) in 32.9 s"

    @Test func fitsWhenItFits() {
        #expect(LineWrap.words(Self.line, width: 79) == [Self.line])
        #expect(LineWrap.words(Self.line, width: nil) == [Self.line])
    }

    @Test(arguments: [59, 40, 24])
    func breaksBetweenWords(width: Int) {
        let lines = LineWrap.words(Self.line, width: width)
        #expect(lines.count > 1)
        #expect(lines.allSatisfy { $0.count <= width }, "\(lines)")
        #expect(lines.dropFirst().allSatisfy { $0.hasPrefix("  ") })
        #expect(lines.map { $0.trimmingPrefix("  ") }.joined(separator: " ") == Self.line)
    }
}
