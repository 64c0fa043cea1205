#define _GNU_SOURCE
#include <fcntl.h>
#include <malloc.h>
#include <spawn.h>
#include <stdio.h>
#include <unistd.h>
#include "CFerrySystem.h"

int CFerrySystem_syncfs(int fd) {
    return syncfs(fd);
}

int CFerrySystem_flush_range(int fd, long long offset, long long length) {
    return sync_file_range(fd, offset, length,
                           SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
}

int CFerrySystem_renameat_noreplace(int olddirfd, const char *oldpath, int newdirfd, const char *newpath) {
    return renameat2(olddirfd, oldpath, newdirfd, newpath, RENAME_NOREPLACE);
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
