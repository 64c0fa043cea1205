#ifndef CFERRYSYSTEM_H
#define CFERRYSYSTEM_H

/* System calls that Swift's Glibc module does not expose: they are declared by glibc only
 * under _GNU_SOURCE (syncfs, renameat2), which the module is not built with. One typed
 * wrapper each, with the module prefix; only FerrySystem imports this. */

int CFerrySystem_syncfs(int fd);

/* sync_file_range with WAIT_BEFORE | WRITE | WAIT_AFTER: writes one byte range's dirty
 * pages and waits for them, without flushing the rest of the file (other streams' ranges)
 * or its metadata; an fsync at the end makes the whole file durable. */
int CFerrySystem_flush_range(int fd, long long offset, long long length);

/* sync_file_range with WRITE alone: starts writing one byte range's dirty pages to disk
 * and returns without waiting for them. */
int CFerrySystem_start_writeback(int fd, long long offset, long long length);

/* renameat2 with RENAME_NOREPLACE: fails with EEXIST instead of replacing an existing
 * target, in one step (a check then a rename would race with another writer). */
int CFerrySystem_renameat_noreplace(int olddirfd, const char *oldpath, int newdirfd, const char *newpath);

/* openat(dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, mode): a new file in the folder with
 * no name yet, gone with its last descriptor unless `link_unnamed` names it. A name made
 * at the end, once, changes the folder once instead of three times (a temporary name
 * made, then renamed away), and a crash before it leaves nothing behind. Fails with
 * EOPNOTSUPP (or EISDIR before Linux 3.11) where the filesystem cannot. */
int CFerrySystem_open_unnamed(int dirfd, unsigned int mode);

/* Gives a file opened by `open_unnamed` its `name` in `dirfd`, failing with EEXIST when the
 * name is taken: linkat with AT_EMPTY_PATH where the kernel allows it (CAP_DAC_READ_SEARCH,
 * or Linux 6.10 and later), else, or with `through_proc`, linkat of /proc/self/fd/<fd>,
 * which needs /proc mounted. */
int CFerrySystem_link_unnamed(int fd, int dirfd, const char *name, int through_proc);

/* copy_file_range between two files at explicit offsets (neither descriptor's position
 * moves): up to `length` bytes copied inside the kernel, shared on filesystems that can
 * (btrfs, XFS: a reflink), page cache to page cache on others (ext4), instead of through a
 * buffer in user space. Returns the count copied, 0 at the source's end, -1 with errno
 * (EXDEV, EINVAL, EOPNOTSUPP or ENOSYS where the kernel or filesystem cannot). */
long long CFerrySystem_copy_range(int infd, long long inoffset, int outfd, long long outoffset, long long length);

/* posix_spawn_file_actions_addclosefrom_np (glibc 2.34): the child closes every descriptor
 * from `lowfd` up before it runs the program, so a plugin inherits only its pipes, never a
 * journal, a lock or a file another thread has open for writing. `actions` is a
 * posix_spawn_file_actions_t (void here, so that this header does not declare the type a
 * second time for Swift). */
int CFerrySystem_spawn_closefrom(void *actions, int lowfd);

/* mallopt(M_ARENA_MAX, count): at most `count` malloc arenas. glibc's default (8 per core)
 * lets each thread that allocates keep freed memory in an arena of its own. */
int CFerrySystem_limit_malloc_arenas(int count);
/* mallopt(M_MMAP_THRESHOLD) and mallopt(M_TRIM_THRESHOLD): blocks up to the first size come
 * from the heap, and the heap keeps up to the second size free; non-zero when both took. */
int CFerrySystem_keep_malloc_blocks(int mmap_threshold, int trim_threshold);

/* 1 when the processor has AES and carry-less multiply instructions (x86-64: AES-NI and
 * PCLMULQDQ; arm64: the AES and PMULL features), with which AES-GCM outruns
 * ChaCha20-Poly1305; 0 otherwise. */
int CFerrySystem_cpu_has_aes_gcm(void);

#endif
