"""Reads a ctest JUnit report of the ASan suite and prints, as one ctest -R regex, the failed
tests whose only fault is LeakSanitizer's own stop-the-world tracer crashing as the process
exited ("Tracer caught signal 11", then "LeakSanitizer has encountered a fatal error"; an open
sanitizer bug, google/sanitizers#1353, seen here after a passing PoCL test). run_asan.sh runs
those once more. Exits 1, naming them, when a failure is anything else: a sanitizer report, a
failed assertion, a crash of kiln's own.
    lsan_tracer_crashes.py REPORT.xml"""

import re
import sys
import xml.etree.ElementTree as ET

TRACER_CRASH = ("Tracer caught signal", "LeakSanitizer has encountered a fatal error")
# Anything a real finding prints; one of these beside the tracer crash fails the suite.
FINDINGS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:", "[  FAILED  ]",
            "WARNING: ThreadSanitizer")


def main(report: str) -> int:
    tracer_crashes, other_failures = [], []
    for case in ET.parse(report).getroot().iter("testcase"):
        if case.get("status") != "fail":
            continue
        output = "".join(node.text or "" for node in case.iter() if node.tag in ("system-out", "failure"))
        if all(s in output for s in TRACER_CRASH) and not any(s in output for s in FINDINGS):
            tracer_crashes.append(case.get("name"))
        else:
            other_failures.append(case.get("name"))
    if other_failures:
        print("failed, not by LeakSanitizer's tracer: " + ", ".join(other_failures), file=sys.stderr)
        return 1
    print("|".join(f"^{re.escape(name)}$" for name in tracer_crashes))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
