import FerryPluginAPI
import Foundation

/// Folder indexes captured from real servers (nginx 1.22.1, Apache 2.4.71, Python 3.11.7
/// `http.server`), all listing the same folder `Alps 2024`: files with spaces, `%`, `#`,
/// `?`, `+`, `&`, `:`, quotes and non-ASCII names, one subfolder, one hidden file (which
/// only Python shows), every date 2024-03-01 10:00:00 UTC.
enum ServerSamples {
    /// The names every sample lists (Python adds `.hidden.xmp`).
    static let fileNames: Set<String> = [
        "#hash?.jpg", "100% done.gpx", "IMG 0001.jpg", "a+b&c.jpg", "a:b.jpg", "it's \"quoted\".jpg", "été 日本.jpg",
    ]
    static let folderNames: Set<String> = ["raw files"]
    /// Fri, 01 Mar 2024 10:00:00 GMT.
    static let modified: Int64 = 1_709_287_200_000_000_000

    /// `GET /files/Alps%202024/` from nginx with `autoindex_format json`.
    static let nginxJSON = #"""
[
{ "name":"raw files", "type":"directory", "mtime":"Fri, 01 Mar 2024 10:00:00 GMT" },
{ "name":"#hash?.jpg", "type":"file", "mtime":"Fri, 01 Mar 2024 10:00:00 GMT", "size":3 },
{ "name":"100% done.gpx", "type":"file", "mtime":"Fri, 01 Mar 2024 10:00:00 GMT", "size":0 },
{ "name":"IMG 0001.jpg", "type":"file", "mtime":"Fri, 01 Mar 2024 10:00:00 GMT", "size":1234 },
{ "name":"a+b&c.jpg", "type":"file", "mtime":"Fri, 01 Mar 2024 10:00:00 GMT", "size":4 },
{ "name":"a:b.jpg", "type":"file", "mtime":"Fri, 01 Mar 2024 10:00:00 GMT", "size":1 },
{ "name":"it's \"quoted\".jpg", "type":"file", "mtime":"Fri, 01 Mar 2024 10:00:00 GMT", "size":1 },
{ "name":"été 日本.jpg", "type":"file", "mtime":"Fri, 01 Mar 2024 10:00:00 GMT", "size":2 }
]
"""#

    /// `GET /html/Alps%202024/` from nginx with `autoindex on` (HTML).
    static let nginxHTML = #"""
<html>
<head><title>Index of /html/Alps 2024/</title></head>
<body>
<h1>Index of /html/Alps 2024/</h1><hr><pre><a href="../">../</a>
<a href="raw%20files/">raw files/</a>                                         01-Mar-2024 10:00                   -
<a href="%23hash%3F.jpg">#hash?.jpg</a>                                         01-Mar-2024 10:00                   3
<a href="100%25%20done.gpx">100% done.gpx</a>                                      01-Mar-2024 10:00                   0
<a href="IMG%200001.jpg">IMG 0001.jpg</a>                                       01-Mar-2024 10:00                1234
<a href="a%2Bb%26c.jpg">a+b&amp;c.jpg</a>                                          01-Mar-2024 10:00                   4
<a href="a%3Ab.jpg">a:b.jpg</a>                                            01-Mar-2024 10:00                   1
<a href="it%27s%20%22quoted%22.jpg">it's &quot;quoted&quot;.jpg</a>                                  01-Mar-2024 10:00                   1
<a href="%C3%A9t%C3%A9%20%E6%97%A5%E6%9C%AC.jpg">été 日本.jpg</a>                                   01-Mar-2024 10:00                   2
</pre><hr></body>
</html>
"""#

    /// `GET /files/Alps%202024/` from Apache `mod_autoindex` (Debian's FancyIndexing
    /// HTMLTable defaults): sort links, an absolute parent link, `./a:b.jpg`, `&amp;`.
    static let apacheHTML = #"""
<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01//EN" "http://www.w3.org/TR/html4/strict.dtd">
<html>
 <head>
  <title>Index of /files/Alps 2024</title>
 </head>
 <body>
<h1>Index of /files/Alps 2024</h1>
  <table>
   <tr><th valign="top"><img src="/icons/blank.gif" alt="[ICO]"></th><th><a href="?C=N;O=D">Name</a></th><th><a href="?C=M;O=A">Last modified</a></th><th><a href="?C=S;O=A">Size</a></th><th><a href="?C=D;O=A">Description</a></th></tr>
   <tr><th colspan="5"><hr></th></tr>
<tr><td valign="top"><img src="/icons/back.gif" alt="[PARENTDIR]"></td><td><a href="/files/">Parent Directory</a></td><td>&nbsp;</td><td align="right">  - </td><td>&nbsp;</td></tr>
<tr><td valign="top"><img src="/icons/image2.gif" alt="[IMG]"></td><td><a href="%c3%a9t%c3%a9%20%e6%97%a5%e6%9c%ac.jpg">été 日本.jpg</a></td><td align="right">2024-03-01 10:00  </td><td align="right">  2 </td><td>&nbsp;</td></tr>
<tr><td valign="top"><img src="/icons/image2.gif" alt="[IMG]"></td><td><a href="%23hash%3f.jpg">#hash?.jpg</a></td><td align="right">2024-03-01 10:00  </td><td align="right">  3 </td><td>&nbsp;</td></tr>
<tr><td valign="top"><img src="/icons/unknown.gif" alt="[   ]"></td><td><a href="100%25%20done.gpx">100% done.gpx</a></td><td align="right">2024-03-01 10:00  </td><td align="right">  0 </td><td>&nbsp;</td></tr>
<tr><td valign="top"><img src="/icons/image2.gif" alt="[IMG]"></td><td><a href="IMG%200001.jpg">IMG 0001.jpg</a></td><td align="right">2024-03-01 10:00  </td><td align="right">1.2K</td><td>&nbsp;</td></tr>
<tr><td valign="top"><img src="/icons/image2.gif" alt="[IMG]"></td><td><a href="a+b&amp;c.jpg">a+b&amp;c.jpg</a></td><td align="right">2024-03-01 10:00  </td><td align="right">  4 </td><td>&nbsp;</td></tr>
<tr><td valign="top"><img src="/icons/image2.gif" alt="[IMG]"></td><td><a href="./a:b.jpg">a:b.jpg</a></td><td align="right">2024-03-01 10:00  </td><td align="right">  1 </td><td>&nbsp;</td></tr>
<tr><td valign="top"><img src="/icons/image2.gif" alt="[IMG]"></td><td><a href="it's%20%22quoted%22.jpg">it's &quot;quoted&quot;.jpg</a></td><td align="right">2024-03-01 10:00  </td><td align="right">  1 </td><td>&nbsp;</td></tr>
<tr><td valign="top"><img src="/icons/folder.gif" alt="[DIR]"></td><td><a href="raw%20files/">raw files/</a></td><td align="right">2024-03-01 10:00  </td><td align="right">  - </td><td>&nbsp;</td></tr>
   <tr><th colspan="5"><hr></th></tr>
</table>
</body></html>
"""#

    /// `GET /Alps%202024/` from `python3 -m http.server`.
    static let pythonHTML = #"""
<!DOCTYPE HTML>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Directory listing for /Alps 2024/</title>
</head>
<body>
<h1>Directory listing for /Alps 2024/</h1>
<hr>
<ul>
<li><a href="%23hash%3F.jpg">#hash?.jpg</a></li>
<li><a href=".hidden.xmp">.hidden.xmp</a></li>
<li><a href="100%25%20done.gpx">100% done.gpx</a></li>
<li><a href="a%2Bb%26c.jpg">a+b&amp;c.jpg</a></li>
<li><a href="a%3Ab.jpg">a:b.jpg</a></li>
<li><a href="IMG%200001.jpg">IMG 0001.jpg</a></li>
<li><a href="it%27s%20%22quoted%22.jpg">it's "quoted".jpg</a></li>
<li><a href="raw%20files/">raw files/</a></li>
<li><a href="%C3%A9t%C3%A9%20%E6%97%A5%E6%9C%AC.jpg">été 日本.jpg</a></li>
</ul>
<hr>
</body>
</html>
"""#
}
