#ifndef FERRY_CARCHIVE_SHIM_H
#define FERRY_CARCHIVE_SHIM_H

#include <archive.h>
#include <archive_entry.h>
#include <locale.h>

// AE_IFREG, AE_IFDIR and AE_IFLNK are cast macros and do not import into Swift.
static inline unsigned int CArchive_filetype_regular(void) { return AE_IFREG; }
static inline unsigned int CArchive_filetype_directory(void) { return AE_IFDIR; }
static inline unsigned int CArchive_filetype_symbolic_link(void) { return AE_IFLNK; }

// libarchive converts names between UTF-8 and the current locale's charset. A Swift
// program runs in the "C" locale, where that conversion fails for any non-ASCII name, and
// libarchive 3.6.2's pax writer then passes the failed (NULL) name to strlen. These switch
// the calling thread (only) to C.UTF-8 around each libarchive call and back.
static inline locale_t CArchive_enter_utf8_locale(void) {
    locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
    if (utf8 == (locale_t)0) return (locale_t)0;
    locale_t previous = uselocale(utf8);
    return previous;
}

static inline void CArchive_leave_utf8_locale(locale_t previous) {
    if (previous == (locale_t)0) return;
    locale_t utf8 = uselocale(previous);
    if (utf8 != (locale_t)0 && utf8 != LC_GLOBAL_LOCALE) freelocale(utf8);
}

#endif
