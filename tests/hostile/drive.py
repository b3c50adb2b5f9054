"""Run CLI commands in this process, one after the other, as the hostile harness asks.

``python tests/hostile/drive.py CASES.json`` reads ``[{"name": ..., "argv": [...]}, ...]``
and, for each, calls ``viewer.cli.main(argv)`` with stdout a strict UTF-8 stream (as a
desktop terminal: a lone surrogate cannot be printed) and stderr captured, then prints
one JSON line: the exit code, what was printed and any exception's traceback.  The
harness runs this script in a subprocess with a timeout, so a hang fails its case.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import time
import traceback


def run_one(argv: list[str]) -> dict:
    from viewer.cli import main

    raw = io.BytesIO()
    stdout = io.TextIOWrapper(raw, encoding="utf-8", errors="strict", write_through=True)
    stderr = io.StringIO()
    error = None
    start = time.perf_counter()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
        except BaseException:  # noqa: BLE001 - the harness reports it as a failure
            code, error = None, traceback.format_exc()
        with contextlib.suppress(Exception):
            stdout.flush()
    out = raw.getvalue()
    return {
        "code": code,
        "stdout": out[:2_000_000].decode("utf-8", "backslashreplace"),  # a whole info --json
        "stdout_bytes": len(out),
        "stderr": stderr.getvalue()[:20_000],
        "traceback": error,
        "seconds": round(time.perf_counter() - start, 3),
    }


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as fh:
        cases = json.load(fh)
    for case in cases:
        print(json.dumps({"name": case["name"], "started": True}), flush=True)
        result = run_one(case["argv"])
        print(json.dumps({"name": case["name"], **result}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
