#!/usr/bin/python3
"""docs/output-format.md describes every dataset Talus writes, with the unit it writes.

    check_output_format_doc.py DOC.md FILE.h5 [FILE.h5 ...]

Walks every dataset of the given trajectories (between them: bodies, frames, diagnostics,
flow, walls, wall contacts and contacts) and looks for its row in the doc's table for its group
(the section whose heading names the group, e.g. "### `/bodies` ..."): a row
"| `name` | type | shape | unit | ... |". The row's unit must be the dataset's `unit`
attribute ("–" for "1"), and its type must name the dataset's type. Exit 0 if every dataset
has such a row.
"""
import re
import sys

import h5py

TYPES = {("u", 1): "uint8", ("u", 4): "uint32", ("u", 8): "uint64", ("i", 4): "int32",
         ("f", 4): "float32", ("f", 8): "float64"}


def doc_tables(path):
    """{group: {name: (type, unit)}} from the doc's dataset tables."""
    tables, group = {}, None
    for line in open(path, encoding="utf-8"):
        heading = re.match(r"^#+ `(/[a-z_/]+)`", line)
        if heading:
            group = heading.group(1)
            tables.setdefault(group, {})
            continue
        if line.startswith("## "):
            group = None
        row = re.match(r"^\| `([a-z_]+)` \| ([^|]+) \| [^|]+ \| ([^|]+) \|", line)
        if group and row:
            tables[group][row.group(1)] = (row.group(2).strip(), row.group(3).strip())
    return tables


def main(argv):
    tables = doc_tables(argv[1])
    problems, seen = [], set()

    def visit(name, obj):
        if not isinstance(obj, h5py.Dataset):
            return
        path = "/" + name
        group, _, leaf = path.rpartition("/")
        seen.add(path)
        row = tables.get(group, {}).get(leaf)
        if row is None:
            problems.append(f"{path}: no row for `{leaf}` in the table of `{group}`")
            return
        doc_type, doc_unit = row
        unit = obj.attrs.get("unit")
        if unit is not None:
            unit = unit.decode() if isinstance(unit, bytes) else str(unit)
            if (unit if unit != "1" else "–") != doc_unit:
                problems.append(f"{path}: unit '{unit}' in the file, '{doc_unit}' in the doc")
        kind = TYPES.get((obj.dtype.kind, obj.dtype.itemsize))
        if kind and kind not in doc_type:
            problems.append(f"{path}: type {kind} in the file, '{doc_type}' in the doc")

    for f in argv[2:]:
        with h5py.File(f, "r", swmr=True) as h:
            h.visititems(visit)
    for p in problems:
        print(p, file=sys.stderr)
    print(f"{len(seen)} datasets checked against {argv[1]}: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
