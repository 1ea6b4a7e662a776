#!/usr/bin/env python3
"""Does real PyTorch do what the emulation of it says? (tests/e2e/torch_suite.sh)

    compare_emulation.py EMULATION.json REAL.json API FINDINGS

EMULATION.json is a `collgrad-check --rules NAME` report (the C emulation
over MPI), REAL.json a `--backend pytorch:API` report of the same cases at
the same world. For every case it prints one line: both outcomes and
whether they agree -- the same status and, tensor by tensor, the same observed
values and gradients of every tensor on every rank (the numbers the run
produced, compared with each other, not with the oracle), or both raising
on the same ranks.

FINDINGS lists the known disagreements, one per line:
    API WORLD CASE TEXT
where TEXT must appear in the real run's outcome (its error, its first
failing check's note, or "hang"). A disagreement not listed, or a listed
one that did not happen as written, fails (exit 1), so the list stays true.
A case the API skips with a reason (no such op) is shown, not compared.
Standard library only.
"""

import json
import math
import sys


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def close(a, b, rtol):
    for x, y in zip(a, b):
        if isinstance(x, str) or isinstance(y, str):
            if x != y:
                return False
        elif not (math.isfinite(x) and math.isfinite(y)):
            if not (x == y or (math.isnan(x) and math.isnan(y))):
                return False
        elif abs(x - y) > rtol * (1.0 + abs(y)):
            return False
    return len(a) == len(b)


def observed(case):
    """(tensor, rank, semantics) -> observed values of the checks against the oracle."""
    out = {}
    for k in case.get("checks", []):
        if k.get("against") == "oracle" and k["semantics"] in ("value", "per_rank"):
            out[(k["tensor"], k["rank"], k["semantics"])] = k["observed"]
    return out


def raised_ranks(case):
    return sorted({k["rank"] for k in case.get("checks", []) if k["semantics"] == "error" and k["rank"] >= 0})


def outcome_text(case):
    """What the real run did, in words a FINDINGS line can quote."""
    if case["status"] == "error":
        return case.get("message", "error")
    if case["status"] == "skip":
        return "skipped: " + case.get("message", "")
    for k in case.get("checks", []):
        if k["semantics"] == "error" and k["rank"] >= 0:
            return "raised: " + (k.get("note") or "")
    diag = (case.get("diagnosis") or {}).get("explanation", "")
    return case["status"] + (": " + diag if diag else "")


def tolerance(case_emu):
    """Both runs round to the case dtype; their arithmetic differs (C in
    double rounded once per op, torch in the dtype): bf16/f16 need more room."""
    name = case_emu["name"]
    return 5e-2 if ("bf16" in name or "f16" in name) else 1e-5


def agree(emu, real):
    """(True, "") or (False, why)."""
    if emu["status"] != real["status"]:
        return False, f"status {emu['status']} vs {real['status']}"
    er, rr = raised_ranks(emu), raised_ranks(real)
    if er or rr:
        return (er == rr, "" if er == rr else f"raised on ranks {er} vs {rr}")
    eo, ro = observed(emu), observed(real)
    if set(eo) != set(ro):
        return False, "different tensors checked"
    rtol = tolerance(emu)
    for key in sorted(eo):
        if not close(ro[key], eo[key], rtol):
            t, r, sem = key
            return False, f"{sem}({t}) on rank {r}: emulation {eo[key][:6]}, real {ro[key][:6]}"
    return True, ""


def main(argv):
    if len(argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    emu, real, api = load(argv[1]), load(argv[2]), argv[3]
    findings = {}
    worlds = {c["world"] for c in emu["cases"]}  # a report of one world checks that world's findings
    with open(argv[4], encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                a, w, name, text = line.split(None, 3)
                if a == api and int(w) in worlds:
                    findings[(int(w), name)] = text
    real_cases = {(c["name"], c["world"]): c for c in real["cases"]}
    fw = real.get("framework") or {}
    print(f"# {api}: torch {fw.get('version')}, process group {fw.get('backend')}, "
          f"against rules={emu.get('rules')}")
    bad = same = found = skipped = 0
    for e in emu["cases"]:
        key = (e["name"], e["world"])
        r = real_cases.get(key)
        if r is None:
            print(f"W={e['world']} {e['name']}: MISSING from the real run")
            bad += 1
            continue
        ok, why = agree(e, r)
        listed = findings.pop((e["world"], e["name"]), None)
        text = outcome_text(r)
        if r["status"] == "skip" and listed is None and r.get("message"):
            skipped += 1  # the API has no such op: nothing to compare, and the report says why
            print(f"W={e['world']} {e['name']:28} {e['status']:5} skip  skipped: {r['message'][:120]}")
        elif ok and listed is None:
            same += 1
            print(f"W={e['world']} {e['name']:28} {e['status']:5} {r['status']:5} same")
        elif not ok and listed is not None and listed in text:
            found += 1
            print(f"W={e['world']} {e['name']:28} {e['status']:5} {r['status']:5} finding: {text[:160]}")
        else:
            bad += 1
            what = f"listed as '{listed}' but " if listed else ""
            print(f"W={e['world']} {e['name']:28} {e['status']:5} {r['status']:5} UNEXPECTED: {what}"
                  f"{'agrees' if ok else why}; real: {text[:200]}")
    for (w, name), text in findings.items():
        print(f"W={w} {name}: listed finding '{text}' but the case did not run")
        bad += 1
    print(f"# {same} same, {found} known findings, {skipped} skipped by the API, {bad} unexpected")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
