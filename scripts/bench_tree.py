"""The tree the scale benchmarks work on, and the check that a tool left it right.

N files of 1 to 64 bytes, 1,000 per folder (`d0000/IMG_0000000.jpg` …). A change appends
one byte to a file (new size, new modification time). `Manifest` is what a tree should
hold (every folder, every file and its size); `check` compares real trees with it, so a
benchmark never reports the time of a run that left the trees wrong.
"""
import os, sys, time

PER_FOLDER = 1000


def folder_name(index):
    return f"d{index // PER_FOLDER:04d}"


def file_name(index):
    return f"IMG_{index:07d}.jpg"


def file_path(root, index):
    return os.path.join(root, folder_name(index), file_name(index))


def make_tree(root, count):
    """Writes the tree of `count` files under `root`; returns its Manifest."""
    started = time.perf_counter()
    for index in range(count):
        folder = os.path.join(root, folder_name(index))
        if index % PER_FOLDER == 0:
            os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, file_name(index)), "wb") as f:
            f.write(b"x" * (1 + index % 64))
    print(f"bench: made {count:,} files in {root} in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return Manifest.of_tree(count)


def spread(count, how_many, offset=0.0):
    """`how_many` indices spread evenly over `count` files; `offset` (0 to 1) shifts them
    within their step, so two calls with offsets 0 and 0.5 pick files apart."""
    if how_many <= 0:
        return []
    step = max(1, count // how_many)
    return [index for index in range(int(step * offset), count, step)][:how_many]


def change_files(root, indices):
    """Appends a byte to each file (Manifest.changed says the same); returns how many."""
    for index in indices:
        with open(file_path(root, index), "ab") as f:
            f.write(b"y")
    return len(indices)


class Manifest:
    """What a tree must hold: folders and files (relative paths), with each file's size."""

    def __init__(self, folders, files):
        self.folders = set(folders)
        self.files = dict(files)

    @classmethod
    def of_tree(cls, count):
        files = {os.path.join(folder_name(i), file_name(i)): 1 + i % 64 for i in range(count)}
        return cls({folder_name(i) for i in range(0, count, PER_FOLDER)}, files)

    def copy(self):
        return Manifest(self.folders, self.files)

    def changed(self, indices):
        """The manifest after change_files(indices)."""
        result = self.copy()
        for index in indices:
            result.files[os.path.join(folder_name(index), file_name(index))] += 1
        return result

    def add(self, relative_path, size):
        self.files[relative_path] = size
        parent = os.path.dirname(relative_path)
        while parent:
            self.folders.add(parent)
            parent = os.path.dirname(parent)


# What a tool keeps inside a tree, at its top, that is not part of it: ferry's remote
# catalog (the names it put there) and its trash, where a sync moves what it deletes or
# overwrites (on by default; unison and rclone bisync keep no backups by default).
# docs/two-way-sync.md.
BOOKKEEPING = {".ferry-catalog", ".ferry-trash"}


def read_tree(root):
    """(folders, {file: size}) of a tree on disk, without following symlinks, leaving out
    BOOKKEEPING at the top."""
    folders, files = set(), {}
    pending = [""]
    while pending:
        relative = pending.pop()
        with os.scandir(os.path.join(root, relative)) as entries:
            for entry in entries:
                if not relative and entry.name in BOOKKEEPING:
                    continue
                path = os.path.join(relative, entry.name)
                if entry.is_dir(follow_symlinks=False):
                    folders.add(path)
                    pending.append(path)
                else:
                    files[path] = entry.stat(follow_symlinks=False).st_size
    return folders, files


def check(what, manifest, *roots):
    """Ends the benchmark unless every root holds exactly the manifest's folders and files
    with their sizes; the message lists the first differences."""
    for root in roots:
        folders, files = read_tree(root)
        if folders == manifest.folders and files == manifest.files:
            continue
        problems = []
        missing = sorted(set(manifest.files) - set(files))
        extra = sorted(set(files) - set(manifest.files))
        sizes = sorted(p for p in set(files) & set(manifest.files) if files[p] != manifest.files[p])
        for label, paths in (("missing", missing), ("unexpected", extra), ("wrong size", sizes)):
            if paths:
                shown = ", ".join(f"{p} ({files.get(p, '-')} bytes, expected {manifest.files.get(p, '-')})"
                                  if label == "wrong size" else p for p in paths[:5])
                problems.append(f"{len(paths):,} {label}: {shown}{' …' if len(paths) > 5 else ''}")
        for label, paths in (("folders missing", manifest.folders - folders), ("folders unexpected", folders - manifest.folders)):
            if paths:
                problems.append(f"{len(paths):,} {label}: {', '.join(sorted(paths)[:5])}")
        sys.exit(f"bench: after {what}, {root} is not what it should be:\n  " + "\n  ".join(problems))
