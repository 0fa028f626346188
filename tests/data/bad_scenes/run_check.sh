#!/bin/sh
# Usage: run_check.sh TALUS SCENE
# Runs `TALUS check SCENE` (plus `--set VALUE` if the scene has a "# set: VALUE" header) and
# passes if it exits with code 2 and its stderr names the problem: "SCENE:N:" for a
# "# expect-line: N" header, and the literal text of an "# expect-text: TEXT" header.
set -u
talus=$1
scene=$2
line=$(sed -n 's/^# expect-line: *\([0-9][0-9]*\).*/\1/p' "$scene" | head -n 1)
text=$(sed -n 's/^# expect-text: *//p' "$scene" | head -n 1)
set_value=$(sed -n 's/^# set: *//p' "$scene" | head -n 1)

if [ -n "$set_value" ]; then
    err=$("$talus" check "$scene" --set "$set_value" 2>&1 >/dev/null)
else
    err=$("$talus" check "$scene" 2>&1 >/dev/null)
fi
rc=$?
printf '%s\n' "$err"

status=0
if [ "$rc" -ne 2 ]; then
    echo "FAIL: exit code $rc, expected 2" >&2
    status=1
fi
if [ -n "$line" ] && ! printf '%s\n' "$err" | grep -qF -- "$scene:$line:"; then
    echo "FAIL: stderr does not name $scene:$line:" >&2
    status=1
fi
if [ -n "$text" ] && ! printf '%s\n' "$err" | grep -qF -- "$text"; then
    echo "FAIL: stderr does not contain: $text" >&2
    status=1
fi
exit $status
