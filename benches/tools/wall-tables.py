#!/usr/bin/env python3
"""Pivots the wall-clock bench's full table (stdout of `cargo bench -p pbwire-bench --bench wall`)
into the README's per-kernel tables: one table per (benchmark, n), a row per contender, a column
per distribution, each cell `ns/unit (speed vs baseline)`.

Usage: benches/tools/wall-tables.py FULL.md BENCHMARK N [BENCHMARK N ...]
  e.g. benches/tools/wall-tables.py benches/results/wall-zen4.md decode_u64_fresh 10000 skip_varints 1000000
Python 3 standard library only.
"""
import sys

DISTS = ["one-byte", "u32-mixed", "u64-mixed", "realistic"]


def rows(path):
    for line in open(path):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 8 and cells[2].isdigit():
            yield cells


def table(all_rows, bench, n, gbps):
    cells, order = {}, []
    for b, data, size, who, ns, _iqr, gb, speed in all_rows:
        if b != bench or size != n or data not in DISTS:
            continue
        if who not in order:
            order.append(who)
        value = gb + " GB/s" if gbps else ns.split()[0]
        cells[(who, data)] = f"{value} ({speed})"
    # Only the distributions the benchmark has (the 32-bit ones have one or two).
    dists = [d for d in DISTS if any(k[1] == d for k in cells)]
    out = [f"| contender | {' | '.join(dists)} |", "|---|" + "---:|" * len(dists)]
    for who in order:
        out.append(f"| {who} | " + " | ".join(cells.get((who, d), "") for d in dists) + " |")
    return "\n".join(out)


def main(argv):
    if len(argv) < 4 or len(argv) % 2:
        print(__doc__, file=sys.stderr)
        return 2
    all_rows = list(rows(argv[1]))
    for bench, n in zip(argv[2::2], argv[3::2]):
        gbps = bench.startswith(("skip", "count"))
        unit = "GB/s" if gbps else "ns/value"
        print(f"**{bench}** (n = {int(n):,} values; {unit}, speed vs baseline in parentheses)\n")
        print(table(all_rows, bench, n, gbps))
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
