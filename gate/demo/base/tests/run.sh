#!/bin/sh
# The slug suite: one line per case, then the plain closing line gate reads counts from.
. ./lib/slug.sh
passed=0
failed=0
check() {
  got=$(slug "$1")
  if [ "$got" = "$2" ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL: slug '$1' gave '$got', expected '$2'"
  fi
}
. ./tests/cases.sh
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
