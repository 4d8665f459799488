#!/usr/bin/env python3
"""Reads the wall-clock bench's full table (stdout of `cargo bench -p pbwire-bench --bench wall`)
and prints the figures the open issues set targets on (#3 packed decode, #5 scanning, messages
and encoding), each beside its target, so that a run can be judged without pivoting by hand.

Usage: benches/tools/wall-targets.py FULL.md
Ratios are read within the run (the speed column, or two rows' ns of the same run), never across
runs. Python 3 standard library only.
"""
import sys

DISTS = ["one-byte", "u32-mixed", "u64-mixed", "realistic"]
DISPATCH = "pbwire packed::* (dispatch"
ENCODE = "pbwire packed::encode_u64 (dispatch"


def load(path):
    table = {}
    for line in open(path):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 8 and cells[2].isdigit():
            bench, data, n, who, ns, _iqr, gbps, speed = cells
            table[(bench, data, n, who)] = (float(ns.split()[0]), float(gbps), float(speed.rstrip("x")))
    return table


def find(table, bench, data, n, prefix):
    """The row whose contender starts with `prefix` (the dispatch row names its backend)."""
    for (b, d, size, who), row in table.items():
        if b == bench and d == data and size == n and who.startswith(prefix):
            return row
    return None


def cell(value, fmt="{:.2f}x"):
    return "-" if value is None else fmt.format(value)


def line(label, values, target):
    print(f"  {label:<44} " + "  ".join(f"{v:>8}" for v in values) + f"   target {target}")


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    t = load(argv[1])
    dispatch = next((w for (_, _, _, w) in t if w.startswith(DISPATCH)), "?")
    print(f"{argv[1]}: dispatch row '{dispatch}'")
    print(f"  {'':<44} " + "  ".join(f"{d:>8}" for d in ["one-byte", "u32-mix", "u64-mix", "realist"]))

    def speeds(bench, n, who):
        return [cell(r[2] if (r := find(t, bench, d, n, who)) else None) for d in DISTS]

    def ratio(bench, n, num, den):
        out = []
        for d in DISTS:
            a, b = find(t, bench, d, n, num), find(t, bench, d, n, den)
            out.append(cell(a[0] / b[0] if a and b else None))
        return out

    print("#3 packed decode (speed vs prost)")
    line("decode_u64_fresh 10,000, dispatched", speeds("decode_u64_fresh", "10000", DISPATCH), ">= 8 / 8 / 6 / 8")
    line("decode_u32_fresh 10,000, dispatched", speeds("decode_u32_fresh", "10000", DISPATCH), ">= 8")
    line("decode_i32_fresh 10,000, dispatched", speeds("decode_i32_fresh", "10000", DISPATCH), ">= 8")
    line("decode_u64 10,000 (same payload), dispatched", speeds("decode_u64", "10000", DISPATCH), "(peers' best case)")
    line("decode_u64 1,000,000, dispatched", speeds("decode_u64", "1000000", DISPATCH), ">= 4")
    line("  its time / out.fill's", ratio("decode_u64", "1000000", DISPATCH, "out.fill"), "<= 1.5")
    line("  16,000,000 (128 MB output): time / fill's", ratio("decode_u64_dram", "16000000", DISPATCH, "out.fill"), "(context)")
    line("AVX2 time / AVX-512 time, fresh 10,000", ratio("decode_u64_fresh", "10000", "pbwire Kernel(avx2)", "pbwire Kernel(avx512)"), "<= 1.5")
    line("AVX2 time / AVX-512 time, 1,000,000", ratio("decode_u64", "1000000", "pbwire Kernel(avx2)", "pbwire Kernel(avx512)"), "<= 1.5")
    line("SSE2, fresh 10,000", speeds("decode_u64_fresh", "10000", "pbwire Kernel(sse2)"), ">= 3 mixed")
    line("SSSE3, fresh 10,000", speeds("decode_u64_fresh", "10000", "pbwire Kernel(ssse3)"), ">= 3 mixed")
    for bench in ["skip_varints", "count_varints"]:
        gb = [cell(r[1] if (r := find(t, bench, d, "1000000", DISPATCH)) else None, "{:.1f}") for d in DISTS]
        line(f"{bench} 1,000,000, dispatched (GB/s)", gb, ">= 8")
    line("Reader::read_varint loop / prost decode_varint", ratio("decode_u64_fresh", "10000", "prost decode_varint loop", "pbwire Reader::read_varint loop"), ">= 1 / 2 / 2 / -")

    print("#5 scanning, messages, encoding (speed vs prost)")
    line("encode_u64_fresh 10,000, dispatched", speeds("encode_u64_fresh", "10000", ENCODE), ">= 4 u32-mix, realist")
    line("encode_u64 10,000 (same array), dispatched", speeds("encode_u64", "10000", ENCODE), ">= 4 u32-mix, realist")
    for (b, d, n, who), (ns, _gb, speed) in sorted(t.items()):
        if b == "scan" and "mixed" in d and who.startswith("pbwire validate ("):
            print(f"  scan 1 MiB mixed, validate: {speed:.2f}x ({ns} ns/field)   target >= 4")
        if b == "records message" and who.startswith("pbwire Reader"):
            print(f"  records, {who[len('pbwire Reader, '):]}: {speed:.2f}x ({ns} ns/record)   target >= 10")
        if b == "TradeOrder" and who.startswith("pbwire"):
            print(f"  TradeOrder, {who}: {speed:.2f}x ({ns} ns/msg)   target >= 3")


if __name__ == "__main__":
    main(sys.argv)
