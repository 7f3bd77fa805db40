#!/usr/bin/env bats
# Keys given with elog-append -K: where the key ends and the value begins.
# ELOG_BIN is the build directory.

load helpers

@test "record keys: -K with a record that begins with the delimiter: no key, the rest is the value" {
	printf ':v\nk:w\nnone\n' | elog-append -K : "$LOG"
	[ "$(elog-cat "$LOG" | jq -c '[.key, .value]' | tr '\n' ' ')" = '[null,"v"] ["k","w"] [null,"none"] ' ]
}
