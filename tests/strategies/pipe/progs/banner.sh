#!/bin/sh
# Prints a banner on stdout before anything else: a line that is not JSON,
# sent before the host's hello or as its answer (whichever comes first, the
# run stops before its first trial, quoting it).
# expect-stderr: banner.sh sent
# expect-stderr: 'hello' (id 1)
# expect-stderr: 'Welcome to my strategy v0.1'
# log-lines: 0
echo "Welcome to my strategy v0.1"
cat >/dev/null
