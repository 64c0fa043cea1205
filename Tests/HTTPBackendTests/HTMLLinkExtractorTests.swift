import Foundation
import Testing

@testable import HTTPBackend

@Suite("link extraction from HTML")
struct HTMLLinkExtractorTests {
    static func hrefs(_ html: String) throws(HTMLLinkExtractor.Refusal) -> [String] {
        try HTMLLinkExtractor.hrefs(in: Data(html.utf8))
    }

    @Test("quoted, single-quoted and unquoted values; any letter case; other attributes around")
    func attributeForms() throws {
        let html = #"""
            <a href="double.jpg">1</a> <A HREF='single.jpg'>2</A> <a href=bare.jpg>3</a>
            <a class="x" href = "spaced.jpg" title='a > b'>4</a> <a
              href="multi-line.jpg">5</a> <a name="anchor">no href</a> <a href>empty</a>
            <a href="first.jpg" href="second.jpg">6</a> <a/href="slash.jpg">7</a>
            """#
        #expect(try Self.hrefs(html) == ["double.jpg", "single.jpg", "bare.jpg", "spaced.jpg", "multi-line.jpg", "",
                                         "first.jpg", "slash.jpg"])
    }

    @Test("character references in values are decoded")
    func references() throws {
        #expect(try Self.hrefs(#"<a href="a&amp;b&lt;c&gt;d&quot;e&apos;f&#39;g&#x2F;h">x</a>"#) == ["a&b<c>d\"e'f'g/h"])
        #expect(try Self.hrefs(#"<a href="&unknown;&amp&#xZZ;">x</a>"#) == ["&unknown;&amp&#xZZ;"])
        #expect(try HTMLCharacterReferences.decode("&#233;t&#xE9;") == "été")
    }

    @Test("comments, raw text and markup that only looks like a link are skipped")
    func skipped() throws {
        let html = #"""
            <!DOCTYPE html><?xml-stylesheet href="s.css"?>
            <!-- <a href="commented.jpg"> --> <!---->
            <script type="text/javascript">var s = "<a href='script.jpg'>";</script>
            <STYLE>a[href="style.jpg"] {}</style > <title><a href="title.jpg"></title>
            <textarea><a href="textarea.jpg"></textarea>
            <img alt="<a href='alt.jpg'>"> <p data-x='<a href="data.jpg">'>1 < 2 and 3 <4</p>
            <abbr href="abbr.jpg">not an a</abbr> <area href="area.jpg">
            <a href="real.jpg">real</a>
            """#
        #expect(try Self.hrefs(html) == ["real.jpg"])
    }

    @Test("an unterminated comment or script runs to the end of the page")
    func unterminated() throws {
        #expect(try Self.hrefs(#"<a href="a.jpg">a</a><!-- <a href="b.jpg">"#) == ["a.jpg"])
        #expect(try Self.hrefs(#"<a href="a.jpg">a</a><script><a href="b.jpg">"#) == ["a.jpg"])
    }

    @Test("a <base> element is refused")
    func base() {
        #expect(throws: HTMLLinkExtractor.Refusal.self) { try Self.hrefs(#"<head><BASE href="/other/"></head>"#) }
    }

    @Test("a character reference that is no character is refused")
    func badReference() {
        #expect(throws: HTMLCharacterReferences.Refusal.self) { try HTMLCharacterReferences.decode("&#x110000;") }
        #expect(throws: HTMLCharacterReferences.Refusal.self) { try HTMLCharacterReferences.decode("&#55296;") }
    }
}
