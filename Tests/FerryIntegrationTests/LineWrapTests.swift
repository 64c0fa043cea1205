@testable import ferry
import Testing

/// The run summary broken between its parts on a narrow terminal.
@Suite struct LineWrapTests {
    static let summary = "push media: 16 uploaded (768 KiB), 0 unchanged, 0 failed in 0.5 s"

    @Test func fitsWhenItFits() {
        #expect(LineWrap.lines(Self.summary, width: 79) == [Self.summary])
        #expect(LineWrap.lines(Self.summary, width: nil) == [Self.summary])
    }

    @Test(arguments: [59, 40, 36])
    func breaksBetweenParts(width: Int) {
        let lines = LineWrap.lines(Self.summary, width: width)
        #expect(lines.count > 1)
        #expect(lines.allSatisfy { $0.count <= width }, "\(lines)")
        #expect(lines.dropFirst().allSatisfy { $0.hasPrefix("  ") })
        // Nothing lost or reordered.
        #expect(lines.map { $0.trimmingPrefix("  ") }.joined(separator: " ") == Self.summary)
    }
}
