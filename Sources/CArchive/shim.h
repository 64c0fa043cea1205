#ifndef FERRY_CARCHIVE_SHIM_H
#define FERRY_CARCHIVE_SHIM_H

#include <archive.h>
#include <archive_entry.h>

// AE_IFREG and AE_IFDIR are cast macros and do not import into Swift.
static inline unsigned int CArchive_filetype_regular(void) { return AE_IFREG; }
static inline unsigned int CArchive_filetype_directory(void) { return AE_IFDIR; }

#endif
