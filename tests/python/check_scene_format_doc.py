"""docs/scene-format.md must be exactly what `talus keys` prints (the scene schema's rows).

Usage: check_scene_format_doc.py TALUS DOC
On a difference, prints a unified diff and how to regenerate the file; exit 1.
"""
import difflib
import subprocess
import sys


def main() -> int:
    talus, doc = sys.argv[1], sys.argv[2]
    generated = subprocess.run([talus, "keys"], check=True, capture_output=True, text=True).stdout
    with open(doc, encoding="utf-8") as f:
        written = f.read()
    if generated == written:
        print(f"{doc} matches `talus keys` ({generated.count(chr(10))} lines)")
        return 0
    sys.stdout.writelines(difflib.unified_diff(written.splitlines(True), generated.splitlines(True),
                                               fromfile=doc, tofile="talus keys"))
    print(f"\n{doc} is out of date: regenerate it with `build/bin/talus keys > {doc}`")
    return 1


if __name__ == "__main__":
    sys.exit(main())
