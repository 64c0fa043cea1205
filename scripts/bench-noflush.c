/* For `bench-local.py` only: loaded into ferry with LD_PRELOAD, it turns the flushes
 * (syncfs, fdatasync, fsync) into calls that do nothing, so one row of the benchmark
 * shows what leaving every file on disk before naming it costs ferry. Never use it
 * for real work: a crash could then leave named files without their bytes. */
int syncfs(int fd) { (void)fd; return 0; }
int fdatasync(int fd) { (void)fd; return 0; }
int fsync(int fd) { (void)fd; return 0; }
