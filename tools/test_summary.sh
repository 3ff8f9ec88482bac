#!/usr/bin/env bash
# Prints "N passed, M failed" for the last `bazel test` run, counting the test
# cases of every test target from the JUnit XML files GoogleTest wrote.
set -uo pipefail
cd "$(dirname "$0")/.."
testlogs=$(bazel info bazel-testlogs "$@" 2>/dev/null)
python3 - "$testlogs" <<'PY'
import pathlib, sys, xml.etree.ElementTree as ET
passed = failed = skipped = 0
for xml in pathlib.Path(sys.argv[1]).rglob("test.xml"):
    try:
        root = ET.parse(xml).getroot()
    except ET.ParseError:
        failed += 1  # a test binary that died before writing its report
        continue
    for case in root.iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1
        elif case.get("status") == "notrun" or case.find("skipped") is not None:
            skipped += 1
        else:
            passed += 1
line = f"{passed} passed, {failed} failed"
if skipped:
    line += f", {skipped} skipped"
print(line)
PY
