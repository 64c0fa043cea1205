#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <spawn.h>
#include <stdio.h>
#include <unistd.h>
#if defined(__aarch64__)
#include <sys/auxv.h>
#include <asm/hwcap.h>
#endif
#include "CFerrySystem.h"

int CFerrySystem_syncfs(int fd) {
    return syncfs(fd);
}

int CFerrySystem_flush_range(int fd, long long offset, long long length) {
    return sync_file_range(fd, offset, length,
                           SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
}

int CFerrySystem_start_writeback(int fd, long long offset, long long length) {
    return sync_file_range(fd, offset, length, SYNC_FILE_RANGE_WRITE);
}

int CFerrySystem_renameat_noreplace(int olddirfd, const char *oldpath, int newdirfd, const char *newpath) {
    return renameat2(olddirfd, oldpath, newdirfd, newpath, RENAME_NOREPLACE);
}

int CFerrySystem_open_unnamed(int dirfd, unsigned int mode) {
    return openat(dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, (mode_t)mode);
}

/* Whether `linkat(fd, "", AT_EMPTY_PATH)` may name a file: with CAP_DAC_READ_SEARCH, or
   since Linux 6.10 for a file opened with the caller's own credentials (an unprivileged
   process could on this VM's 6.18). It skips the walk through /proc/self/fd/N, half of
   the link's kernel time in a first push of small files. Cleared once /proc names a file
   the descriptor could not. */
static _Atomic int CFerrySystem_links_by_descriptor = 1;

int CFerrySystem_link_unnamed(int fd, int dirfd, const char *name, int through_proc) {
    int by_descriptor = !through_proc && CFerrySystem_links_by_descriptor;
    if (by_descriptor) {
        if (linkat(fd, "", dirfd, name, AT_EMPTY_PATH) == 0) return 0;
        if (errno != ENOENT && errno != EPERM) return -1;
    }
    char path[40];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    int named = linkat(AT_FDCWD, path, dirfd, name, AT_SYMLINK_FOLLOW);
    if (named == 0 && by_descriptor) CFerrySystem_links_by_descriptor = 0;
    return named;
}

long long CFerrySystem_copy_range(int infd, long long inoffset, int outfd, long long outoffset, long long length) {
    off64_t in = inoffset, out = outoffset;
    return copy_file_range(infd, &in, outfd, &out, (size_t)length, 0);
}

int CFerrySystem_spawn_closefrom(void *actions, int lowfd) {
    return posix_spawn_file_actions_addclosefrom_np((posix_spawn_file_actions_t *)actions, lowfd);
}

int CFerrySystem_limit_malloc_arenas(int count) {
    return mallopt(M_ARENA_MAX, count);
}

int CFerrySystem_keep_malloc_blocks(int mmap_threshold, int trim_threshold) {
    return mallopt(M_MMAP_THRESHOLD, mmap_threshold) && mallopt(M_TRIM_THRESHOLD, trim_threshold);
}

int CFerrySystem_cpu_has_aes_gcm(void) {
#if defined(__x86_64__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("aes") && __builtin_cpu_supports("pclmul");
#elif defined(__aarch64__)
    unsigned long features = getauxval(AT_HWCAP);
    return (features & HWCAP_AES) && (features & HWCAP_PMULL);
#else
    return 0;
#endif
}
