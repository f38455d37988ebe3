#!/bin/sh
# skipped.sh NAME REASON - stands in for a test whose program this build
# lacks (an optional library missing at configure time): prints why and
# exits 77, so ctest lists NAME as Skipped instead of leaving it out.
echo "SKIP $1: $2"
exit 77
