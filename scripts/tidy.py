#!/usr/bin/env python3
"""clang-tidy 22 over the given sources, in parallel, with a result cache.

Usage: scripts/tidy.py BUILD_DIR FILE...   (scripts/lint.sh runs it)

TIDY_JOBS: clang-tidy processes at once (default: the CPUs available).
HACOBOOT_TIDY_CACHE: a directory of stamps, one per file that passed clean,
named by the hash of everything its result depends on; a file whose stamp is
there is not linted again. No cache when unset or empty. Clones at different
paths may share it: nothing absolute goes into the hash.
"""
import concurrent.futures
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
import threading
import time
from pathlib import Path

TIDY = "clang-tidy-22"
# The preprocessor of the key: clang-tidy-22 parses as clang 22 (a dependency
# of the package) does, so headers' __clang__ branches are seen as it sees them.
CLANG = "clang++-22"
# Stamps not hit for this long go: the cache stays bounded.
CACHE_DAYS = 30

# clang 22 warns about std::get_temporary_buffer inside libstdc++ 12's own
# stl_tempbuf.h (std::stable_sort): not ours to fix. For clang-tidy only; the
# g++ build still warns on our own deprecated uses.
COMMON_ARGS = ["--quiet", "--warnings-as-errors=*", "--extra-arg=-Wno-deprecated-declarations"]
PER_FILE_ARGS = {
    # The analyzer follows tracer.cpp into the bpftool-generated skeleton and,
    # not knowing that libbpf's bpf_object__destroy_skeleton() frees it,
    # reports a leak on the skeleton's own error path: that one check is off
    # for this file.
    "src/capture/tracer.cpp": ["--checks=-clang-analyzer-unix.Malloc"],
}


def compiler_arguments(entry):
    """A compile command's arguments but the output (-o FILE), which differs per build dir."""
    args = (entry.get("arguments") or shlex.split(entry["command"]))[1:]
    if "-o" in args:
        at = args.index("-o")
        del args[at:at + 2]
    return args


def prune(cache):
    """Removes the stamps older than CACHE_DAYS."""
    limit = time.time() - CACHE_DAYS * 86400
    for stamp in cache.iterdir():
        try:
            if stamp.stat().st_mtime < limit:
                stamp.unlink()
        except FileNotFoundError:  # another lint pruned it first
            pass


class Linter:
    def __init__(self, build_dir, cache):
        self.root = Path.cwd().resolve()
        self.build_dir = build_dir.resolve()
        self.cache = cache
        with open(self.build_dir / "compile_commands.json", encoding="utf-8") as db:
            entries = json.load(db)
        # clang-tidy lints a file once per compile command of it: all count.
        self.commands = {}
        for entry in entries:
            path = os.path.relpath(Path(entry["directory"], entry["file"]), self.root)
            self.commands.setdefault(path, []).append(entry)
        version = subprocess.run([TIDY, "--version"], capture_output=True, check=True).stdout
        self.tool = version + b"\0" + (self.root / ".clang-tidy").read_bytes()
        # Absolute paths of the clone and its build dir, made relative in the
        # key: clones at different paths share stamps.
        self.prefixes = [(bytes(self.build_dir) + b"/", b"<build>/"), (bytes(self.root) + b"/", b"")]
        self.lock = threading.Lock()

    def relative(self, data):
        for old, new in self.prefixes:
            data = data.replace(old, new)
        return data

    def key(self, path, tidy_args):
        """The hash of the tool and its config, the flags and the preprocessed
        source; None when it does not preprocess (clang-tidy will say why)."""
        digest = hashlib.sha256(self.tool)
        digest.update(self.relative(json.dumps([path, tidy_args]).encode()))
        own = set()
        for entry in self.commands[path]:
            args = compiler_arguments(entry)
            preprocessed = subprocess.run([CLANG, *args, "-E", "-o", "-"], cwd=entry["directory"],
                                          capture_output=True, check=False)
            if preprocessed.returncode != 0:
                return None
            digest.update(self.relative(json.dumps(args).encode()))
            digest.update(self.relative(preprocessed.stdout))
            # The line markers name every file read: the clone's own are hashed
            # whole, for -E drops their comments (NOLINT) and unused macros.
            own |= {name for name in re.findall(rb'^# \d+ "([^"]+)"', preprocessed.stdout, re.M)
                    if name.startswith(tuple(old for old, _ in self.prefixes))}
        for name in sorted(own):
            digest.update(b"\0" + self.relative(name) + b"\0" + Path(os.fsdecode(name)).read_bytes())
        return digest.hexdigest()

    def lint(self, path):
        """Returns (passed, from the cache)."""
        tidy_args = COMMON_ARGS + PER_FILE_ARGS.get(path, [])
        key = self.key(path, tidy_args) if self.cache else None
        stamp = self.cache / key if key else None
        if stamp and stamp.exists():
            stamp.touch()  # recently used: not pruned
            return True, True
        result = subprocess.run([TIDY, "-p", str(self.build_dir), *tidy_args, path],
                                capture_output=True, text=True, check=False)
        if result.returncode != 0:
            output = result.stdout + result.stderr or f"{path}: {TIDY} exited with {result.returncode}\n"
            with self.lock:  # one file's findings together
                print(output, end="", flush=True)
            return False, False
        # Not edited while linted: the clean result is this key's.
        if stamp and self.key(path, tidy_args) == key:
            stamp.touch()
        return True, False


def main():
    build_dir = Path(sys.argv[1])
    files = sys.argv[2:]
    jobs = int(os.environ.get("TIDY_JOBS") or len(os.sched_getaffinity(0)))
    cache = Path(os.environ["HACOBOOT_TIDY_CACHE"]) if os.environ.get("HACOBOOT_TIDY_CACHE") else None
    if cache:
        cache.mkdir(parents=True, exist_ok=True)
        prune(cache)
    linter = Linter(build_dir, cache)
    missing = [path for path in files if path not in linter.commands]
    if missing:
        sys.exit(f"tidy: not in {build_dir}/compile_commands.json: {' '.join(missing)}")
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(linter.lint, files))
    cached = sum(1 for _, hit in results if hit)
    failed = sum(1 for passed, _ in results if not passed)
    print(f"clang-tidy: {len(files) - cached} files linted, {cached} from the cache"
          + (f", {failed} with findings" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
