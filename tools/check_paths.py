#!/usr/bin/env python3
"""Fails when the README, the docs, the .proto files or the sources name a
file of this tree that does not exist (a pointer left behind when a file
moves), so that the pointers readers and other-language clients follow stay
true.

A path counts when it starts with one of the tree's top-level folders and
ends in a source or document extension; generated files (*.pb.h, *.pb.cc,
*.grpc.pb.h) and paths under a folder git ignores are not checked. Prints
each missing path with the files naming it; exits 1 if there is one.

Usage (from the repository root): tools/check_paths.py
"""

import os
import re
import subprocess
import sys

CHECKED_SUFFIXES = (".md", ".proto", ".h", ".cc", ".sh", ".py", ".bazel", ".bzl", ".yaml", "run")
NAMED_EXTENSIONS = r"(?:h|cc|proto|md|sh|py|bzl|yaml|csv|txt|json|supp)"
GENERATED = (".pb.h", ".pb.cc", ".grpc.pb.h", ".grpc.pb.cc")


def main():
    files = subprocess.check_output(["git", "ls-files"], text=True).split()
    tops = sorted({f.split("/", 1)[0] for f in files if "/" in f and not f.startswith(".")})
    pattern = re.compile(r"(?<![\w./-])((?:%s)/[\w./-]*\.%s)(?![\w/])" %
                         ("|".join(map(re.escape, tops)), NAMED_EXTENSIONS))
    tracked = set(files)
    missing = {}
    for name in files:
        if not name.endswith(CHECKED_SUFFIXES):
            continue
        with open(name, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for match in pattern.finditer(text):
            path = match.group(1)
            if path.endswith(GENERATED) or path in tracked or os.path.exists(path):
                continue
            ignored = subprocess.run(["git", "check-ignore", "-q", path]).returncode == 0
            if not ignored:
                missing.setdefault(path, set()).add(name)
    for path, names in sorted(missing.items()):
        print("%s: no such file (named in %s)" % (path, ", ".join(sorted(names))))
    if missing:
        return 1
    print("every file path named in the tree exists")
    return 0


if __name__ == "__main__":
    sys.exit(main())
