#!/bin/sh
# Each suite gets a scratch TMPDIR of its own, empty at the start.
[ -n "$TMPDIR" ] && [ -d "$TMPDIR" ] || { echo "no scratch TMPDIR"; exit 1; }
[ -z "$(ls -A "$TMPDIR")" ] || { echo "TMPDIR is not empty"; exit 1; }
echo leftover > "$TMPDIR/leftover"
echo "1 passed, 0 failed"
