#!/usr/bin/env python3
"""lila beside llama.cpp's and ik_llama.cpp's llama-bench on the same files (docs/PERF.md).

    tests/bench/side_by_side.py --ik PATH/llama-bench [--llama PATH/llama-bench] \\
        [--isa avx2] [-t 1,2] [-p 512] [-n 32] [-r 2] [--rounds 1] [--json OUT] FILE.gguf...
    tests/bench/side_by_side.py --from-json OUT...   (the table of saved results, e.g. of
        several sittings or rounds together)

For each round, file and thread count it runs `lila bench`, then ik_llama.cpp's llama-bench
with its run-time repacking (`-rtr 1`), then llama.cpp's, one after the other, so that the
machine's drift (±20% within minutes on a shared VM) touches all three alike. Each result is
appended to --json as one JSON line (so a long sitting can be stopped and resumed), and the
mean of the rounds is printed as the markdown table of docs/PERF.md: the lila ÷ peer ratios
with the rows below issue #17's targets (prefill 1.25× ik_llama.cpp, decode 1.0× both peers)
in bold. The peers are built outside the project; nothing of them is part of lila.
With --isa avx2, lila runs with LILA_ISA=avx2; give it peers built without AVX-512.
"""
import argparse
import json
import os
import subprocess
import sys


def run_json(cmd, env=None):
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def lila(args, path, threads):
    env = dict(os.environ)
    if args.isa:
        env["LILA_ISA"] = args.isa
    rows = run_json([args.lila, "bench", "-m", path, "-p", str(args.p), "-n", str(args.n), "-t",
                     str(threads), "-r", str(args.r), "-o", "json"], env)
    by_test = {r["test"]: r for r in rows}
    pp, tg = by_test[f"pp{args.p}"], by_test[f"tg{args.n}"]
    return {"pp": pp["avg_ts"], "tg": tg["avg_ts"], "roofline": tg.get("roofline_frac"),
            "type": tg["type"]}


def llama_bench(args, binary, path, threads, extra, prompt):
    rows = run_json([binary, "-m", path, "-p", str(prompt), "-n", str(args.n), "-t", str(threads),
                     "-r", str(args.r), "-o", "json"] + extra)
    return {("pp" if r["n_prompt"] else "tg"): r["avg_ts"] for r in rows}


def table(results, args):
    keys = []
    for r in results:
        if (r["file"], r["threads"]) not in keys:
            keys.append((r["file"], r["threads"]))
    peers = [p for p in ("ik", "llama") if any(p in r for r in results)]
    pp_peers = [p for p in peers if any("pp" in r.get(p, {}) for r in results)]
    names = {"ik": "ik_llama.cpp", "llama": "llama.cpp"}
    head = ["file", "threads", f"lila pp{args.p}"] + [f"{names[p]} pp{args.p}" for p in pp_peers]
    head += [f"lila tg{args.n} (roofline)"] + [f"{names[p]} tg{args.n}" for p in peers]
    head += [f"pp ÷ {names[p]}" for p in pp_peers] + [f"tg ÷ {names[p]}" for p in peers]
    print("| " + " | ".join(head) + " |")
    print("|---|" + "---:|" * (len(head) - 1))

    def mean(rs, who, what):
        v = [r[who][what] for r in rs if who in r and r[who].get(what) is not None]
        return sum(v) / len(v) if v else float("nan")

    def ratio(a, b, target):
        v = round(a / b, 2)
        return f"**{v:.2f}**" if v < target else f"{v:.2f}"

    for file, threads in sorted(keys, key=lambda k: k[1]):
        rs = [r for r in results if r["file"] == file and r["threads"] == threads]
        pp = {w: mean(rs, w, "pp") for w in ["lila"] + peers}
        tg = {w: mean(rs, w, "tg") for w in ["lila"] + peers}
        roof = mean(rs, "lila", "roofline")
        cells = [rs[0]["lila"]["type"].upper(), str(threads)]
        cells += [f"{pp[w]:.1f}" for w in ["lila"] + pp_peers]
        cells += [f"{tg['lila']:.1f} ({100 * roof:.0f}%)"] + [f"{tg[p]:.1f}" for p in peers]
        cells += [ratio(pp["lila"], pp[p], 1.25 if p == "ik" else 1.0) for p in pp_peers]
        cells += [ratio(tg["lila"], tg[p], 1.0) for p in peers]
        print("| " + " | ".join(cells) + " |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--lila", default="build/lila")
    ap.add_argument("--ik", help="ik_llama.cpp's llama-bench")
    ap.add_argument("--llama", help="llama.cpp's llama-bench")
    ap.add_argument("--isa", help="LILA_ISA for lila (avx2 beside peers built without AVX-512)")
    ap.add_argument("-t", default="1,2", help="thread counts, comma-separated")
    ap.add_argument("-p", type=int, default=512)
    ap.add_argument("-n", type=int, default=32)
    ap.add_argument("-r", type=int, default=2)
    ap.add_argument("--llama-p", type=int, help="llama.cpp's prompt length (0: decode only)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--json", help="append each result to this file (JSON lines)")
    ap.add_argument("--from-json", action="store_true",
                    help="the FILEs are --json outputs: print the table of every result in them "
                         "(the mean per file and thread count), running nothing; -p and -n name "
                         "the columns, so give them as the sitting had them")
    args = ap.parse_args()
    if args.from_json:
        results = []
        for path in args.files:
            with open(path) as f:
                results += [json.loads(line) for line in f if line.strip()]
        table(results, args)
        return
    if args.llama_p is None:
        args.llama_p = args.p
    results = []
    for _ in range(args.rounds):
        for path in args.files:
            for threads in [int(t) for t in args.t.split(",")]:
                r = {"file": os.path.basename(path), "threads": threads, "isa": args.isa or "native",
                     "lila": lila(args, path, threads)}
                if args.ik:
                    r["ik"] = llama_bench(args, args.ik, path, threads, ["-rtr", "1"], args.p)
                if args.llama:
                    r["llama"] = llama_bench(args, args.llama, path, threads, [], args.llama_p)
                results.append(r)
                if args.json:
                    with open(args.json, "a") as f:
                        f.write(json.dumps(r) + "\n")
                print(json.dumps(r), file=sys.stderr, flush=True)
    table(results, args)


if __name__ == "__main__":
    main()
