#!/bin/sh
# program= that cannot be run is refused before anything is measured (exit
# status 2, the user's to fix) with a message that says what is wrong with
# it: a folder "is a directory", a missing file "no such file", a file
# without the executable bit "is not executable", a FIFO "is not a regular
# file", a name not in PATH "not found in PATH".  --dry-run on a small CPU
# task: the strategy is created (and refused) without loading a dataset.
. "$(dirname "$0")/../common.sh"
mkdir "$W/folder"
printf '#!/bin/sh\n' >"$W/plain.sh"
mkfifo "$W/fifo"
check() {
  _n=$1 _prog=$2 _want=$3
  search "$_n" --op gemm --shape 64,64,64 --strategy pipe \
    --param "program=$_prog" --trials 4 --dry-run
  [ "$(cat "$W/$_n.status")" -eq 2 ] ||
    fail "$_n: exit status $(cat "$W/$_n.status"), expected 2"
  grep -qF -- "pipe: program=$_prog$_want" "$W/$_n.err" ||
    fail "$_n: stderr lacks 'pipe: program=$_prog$_want'"
}
check folder "$W/folder" " is a directory, not a program"
check folder_slash "$W/folder/" " is a directory, not a program"
check missing "$W/nothing.py" ": no such file"
check plain "$W/plain.sh" " is not executable"
check fifo "$W/fifo" " is not a regular file"
check unknown "heron-no-such-program-here" ": not found in PATH"
echo ok
