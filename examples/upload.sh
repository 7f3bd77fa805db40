#!/bin/sh
# upload.sh: the "./upload" of the edge gateway's pipeline
#
#   elog-cat -g uplink -f DIR | ./upload.sh DIR FAR | elog-commit DIR uplink
#
# For each JSON line from elog-cat it delivers the record to the far side
# (here: a line appended to the file FAR) under the idempotency key
# "<log id>:<offset>", and only once that succeeded echoes the line, so that
# elog-commit commits only what was delivered.  A crash anywhere in the
# pipeline resends the records after the last commit; the far side keeps
# the first delivery of each key and drops the rest.
set -eu
dir=${1:?usage: upload.sh dir far-file}
far=${2:?usage: upload.sh dir far-file}
id=$(elog-commit --log-id "$dir")
while IFS= read -r line; do
	offset=${line#\{\"offset\":}
	offset=${offset%%,*}
	printf '%s:%s %s\n' "$id" "$offset" "$line" >> "$far"
	printf '%s\n' "$line"
done
