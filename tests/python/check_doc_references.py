#!/usr/bin/python3
"""Documentation references that must resolve inside the repository.

    check_doc_references.py [REPO_ROOT]

Fails (exit 1, one line per problem) when a file of the repository
  1. cites the design reference by its old name (the word DESIGN followed by "§" or
     "section"), which pointed at a document outside the repository; cite
     "docs/design.md §N" instead;
  2. names a path under docs/ (as plain text, in a comment, a string or a link) that does
     not exist;
  3. is a Markdown file with a relative link [text](target) whose target does not exist.

The files are those git tracks; without git (a tree from `git archive`, as
tools/clean_machine_check uses) every file below REPO_ROOT except build*/ and .git/.
REPO_ROOT defaults to the directory two levels above this script.
"""
import fnmatch
import os
import re
import subprocess
import sys

# Built from parts so that this file does not match its own pattern.
OLD_NAME = re.compile("DESIGN" + r"\s*(§|section\b)")
# A path under docs/ that is not itself part of a longer relative path (../docs/ is left
# to the Markdown link check, which resolves it from the file's own folder).
DOCS_PATH = re.compile(r"(?<![\w./-])docs/[\w./-]*")
# Inline Markdown links and images: [text](target) or ![alt](target "title").
MD_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")

# Files that other changes in progress will add; named here so that pointing at them now
# is not an error. Remove an entry once its file is in the repository.
PENDING = []  # paths a change in progress may cite before it lands

SKIP_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".pdf", ".h5", ".hdf5", ".stl", ".gz",
                 ".zip", ".npz", ".npy", ".bin")


def tracked_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], check=True,
                             capture_output=True).stdout
        if out:
            return [p for p in out.decode("utf-8").split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        if rel == ".":
            dirnames[:] = [d for d in dirnames if d != ".git" and not d.startswith("build")]
        for name in filenames:
            files.append(os.path.normpath(os.path.join(rel, name)))
    return sorted(files)


def pending(path):
    return any(fnmatch.fnmatch(path, pattern) for pattern in PENDING)


def exists(root, rel):
    return os.path.exists(os.path.join(root, rel))


def check(root):
    problems = []
    this = os.path.relpath(os.path.abspath(__file__), root)
    for rel in tracked_files(root):
        if rel.lower().endswith(SKIP_SUFFIXES) or os.path.normpath(rel) == this:
            continue
        full = os.path.join(root, rel)
        if not os.path.isfile(full):
            continue
        try:
            with open(full, encoding="utf-8") as f:
                lines = f.read().split("\n")
        except (UnicodeDecodeError, OSError):
            continue  # binary or unreadable: nothing to cite from
        markdown = rel.endswith(".md")
        for number, line in enumerate(lines, 1):
            where = f"{rel}:{number}"
            if OLD_NAME.search(line):
                problems.append(f"{where}: cites the design reference outside the repository; "
                                "write docs/design.md §N")
            for m in DOCS_PATH.finditer(line):
                target = m.group(0).rstrip(".,;:/")
                if target in ("docs", "docs/") or pending(target):
                    continue
                if not exists(root, target):
                    problems.append(f"{where}: names {target}, which does not exist")
            if markdown:
                for m in MD_LINK.finditer(line):
                    target = m.group(1)
                    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("#"):
                        continue  # a URL, mailto:, or an anchor in the same page
                    target = target.split("#", 1)[0]
                    resolved = os.path.normpath(os.path.join(os.path.dirname(rel), target))
                    if resolved.startswith(".."):
                        problems.append(f"{where}: link {m.group(1)} leaves the repository")
                    elif not pending(resolved) and not exists(root, resolved):
                        problems.append(f"{where}: link {m.group(1)} does not resolve "
                                        f"({resolved} does not exist)")
    for pattern in PENDING:
        if "*" not in pattern and exists(root, pattern):
            print(f"note: {pattern} exists now; remove it from PENDING in {this}")
    return problems


def main():
    default = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else default)
    problems = check(root)
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} documentation reference(s) to fix")
        return 1
    print("documentation references: all resolve")
    return 0


if __name__ == "__main__":
    sys.exit(main())
