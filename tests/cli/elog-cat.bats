#!/usr/bin/env bats
# elog-cat: output formats, JSON, where to start and stop, filters, failures.

load helpers

# A log of five records with known timestamps, keys and schemas.
five() {
	printf '%s\n' \
		$'1000\ta:{"n":0}' \
		$'2000\tb:{"n":1}' \
		$'3000\ta:{"n":2}' \
		$'4000\t:{"n":3}' \
		$'5000\tb:{"n":4}' | elog-append -t -K : -s 3 "$LOG"
}

@test "cat: JSON lines with every member, in order" {
	five
	run --separate-stderr elog-cat "$LOG"
	[ "$status" -eq 0 ] && [ "$stderr" = "" ]
	[ "$output" = '{"offset":0,"ts":1000,"schema":3,"key":"a","value":{"n":0}}
{"offset":1,"ts":2000,"schema":3,"key":"b","value":{"n":1}}
{"offset":2,"ts":3000,"schema":3,"key":"a","value":{"n":2}}
{"offset":3,"ts":4000,"schema":3,"key":null,"value":{"n":3}}
{"offset":4,"ts":5000,"schema":3,"key":"b","value":{"n":4}}' ]
}

@test "cat: an empty log prints nothing" {
	elog-append "$LOG" </dev/null
	run --separate-stderr elog-cat "$LOG"
	[ "$status" -eq 0 ] && [ "$output" = "" ] && [ "$stderr" = "" ]
}

# The value member elog-cat prints for the value given in printf form.
value_of() {
	rm -rf "$LOG"
	printf "$1" | elog-append -0 "$LOG"
	elog-cat "$LOG" | sed 's/^{"offset":0,"ts":[0-9]*,"schema":0,"key":null,//; s/}$//'
}

# Many values in one log: want_value VALUE FIELD appends the printf format
# VALUE to the input and FIELD, what elog-cat must write for it, to what
# values_are then compares, one line each (in a log of their own).
want_value() {
	printf "$1" >>"$T/in"
	printf '\0' >>"$T/in"
	printf '%s\n' "$2" >>"$T/want"
}

values_are() {
	elog-append -0 "$T/many" <"$T/in"
	elog-cat "$T/many" | sed 's/^{"offset":[0-9]*,"ts":[0-9]*,"schema":0,"key":null,//; s/}$//' >"$T/got"
	diff "$T/want" "$T/got"
}

@test "cat: objects and arrays are embedded as compact JSON" {
	[ "$(value_of '{"a":1}')" = '"value":{"a":1}' ]
	[ "$(value_of '[1,2,3]')" = '"value":[1,2,3]' ]
	# Compacting changed their bytes: value_text holds them as stored.
	[ "$(value_of '{\n  "a" : [ 1 , 2.5e-3 , -0 ] ,\r\n\t"b":{ }, "c":[]\n}\n')" = '"value":{"a":[1,2.5e-3,-0],"b":{},"c":[]},"value_text":"{\n  \"a\" : [ 1 , 2.5e-3 , -0 ] ,\r\n\t\"b\":{ }, \"c\":[]\n}\n"' ]
	[ "$(value_of '  {"s":"x y\\n\\"z\\u00e9\\ud83d\\ude00"}  ')" = '"value":{"s":"x y\n\"z\u00e9\ud83d\ude00"},"value_text":"  {\"s\":\"x y\\n\\\"z\\u00e9\\ud83d\\ude00\"}  "' ]
	[ "$(value_of '{"t":true,"f":false,"n":null,"e":"\xc3\xa9"}')" = '"value":{"t":true,"f":false,"n":null,"e":"é"}' ]
	[ "$(value_of '[[[]]]')" = '"value":[[[]]]' ]
}

@test "cat: other values, and JSON that is not valid, are JSON strings" {
	want_value '42' '"value":"42"'
	want_value '"str"' '"value":"\"str\""'
	want_value 'true' '"value":"true"'
	[ "$(value_of '\0')" = '"value":""' ]
	want_value '{"a":1' '"value":"{\"a\":1"'
	want_value '{"a":1}x' '"value":"{\"a\":1}x"'
	want_value '{"a":1}{}' '"value":"{\"a\":1}{}"'
	want_value '{a:1}' '"value":"{a:1}"'
	want_value '[1,]' '"value":"[1,]"'
	want_value '[01]' '"value":"[01]"'
	want_value '[1.]' '"value":"[1.]"'
	want_value '[.5]' '"value":"[.5]"'
	want_value '[1e]' '"value":"[1e]"'
	want_value '[+1]' '"value":"[+1]"'
	want_value '[-]' '"value":"[-]"'
	want_value '[tru]' '"value":"[tru]"'
	want_value '[NaN]' '"value":"[NaN]"'
	want_value "['x']" "\"value\":\"['x']\""
	want_value '["\\x"]' '"value":"[\"\\x\"]"'
	want_value '["\\u12"]' '"value":"[\"\\u12\"]"'
	want_value '["a\tb"]' '"value":"[\"a\tb\"]"'
	want_value '["\\ud800"]' '"value":"[\"\\ud800\"]"'
	want_value '["\\udc00\\ud800"]' '"value":"[\"\\udc00\\ud800\"]"'
	want_value '{"a":1,}' '"value":"{\"a\":1,}"'
	want_value '{"a" 1}' '"value":"{\"a\" 1}"'
	want_value '{1:1}' '"value":"{1:1}"'
	values_are
}

@test "cat: strings escape quotes, backslashes and control characters only" {
	[ "$(value_of 'a"b\\c\td\ne\rf\bg\fh\001i\037j\177k é ☃ 😀')" = '"value":"a\"b\\c\td\ne\rf\bg\fh\u0001i\u001fj'$'\177''k é ☃ 😀"' ]
}

@test "cat: numbers of every width, negative times too" {
	printf '%s\tv\n' 0 9 10 99 100 -1 -9 -10 -1000000000000 1234567890123 | elog-append -t "$LOG"
	[ "$(elog-cat "$LOG" | sed 's/,"schema".*//')" = '{"offset":0,"ts":0
{"offset":1,"ts":9
{"offset":2,"ts":10
{"offset":3,"ts":99
{"offset":4,"ts":100
{"offset":5,"ts":-1
{"offset":6,"ts":-9
{"offset":7,"ts":-10
{"offset":8,"ts":-1000000000000
{"offset":9,"ts":1234567890123' ]
	[ "$(elog-cat -o 8 -F '%o %T %c\n' "$LOG")" = '8 -1000000000000 0
9 1234567890123 0' ]
}

@test "cat: each control byte has its escape, DEL and U+2028 stay as they are" {
	[ "$(value_of '\001\002\003\004\005\006\007\010\011\012\013\014\015\016\017\020\021\022\023\024\025\026\027\030\031\032\033\034\035\036\037')" = '"value":"\u0001\u0002\u0003\u0004\u0005\u0006\u0007\b\t\n\u000b\f\r\u000e\u000f\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017\u0018\u0019\u001a\u001b\u001c\u001d\u001e\u001f"' ]
	[ "$(value_of 'a\177b\342\200\250c\342\200\251d')" = $'"value":"a\177b\xe2\x80\xa8c\xe2\x80\xa9d"' ]
}

@test "cat: a NUL in a key or a value is \\u0000" {
	echo '{"key_b64":"AGsA","value_b64":"dgB2AA=="}' | elog-append --json "$LOG"
	[ "$(elog-cat "$LOG" | sed 's/.*"schema":0,//')" = '"key":"\u0000k\u0000","value":"v\u0000v\u0000"}' ]
}

# Strings are scanned eight bytes at a time: a special byte or a character
# of several bytes at each place of a step, and across two steps.
@test "cat: escapes and characters at every place of an eight-byte step" {
	local i p
	for i in 0 1 2 3 4 5 6 7 8 9 10 15 16 17; do
		printf -v p "%${i}s" ""
		p=${p// /x}
		want_value "$p\"yyyyyyyy" "\"value\":\"$p\\\"yyyyyyyy\""
		want_value "$p\\\\yyyyyyyy" "\"value\":\"$p\\\\yyyyyyyy\""
		want_value "$p\\001yyyyyyyy" "\"value\":\"$p\\u0001yyyyyyyy\""
		want_value "$p\\303\\251yyyyyyyy" "\"value\":\"$p""é""yyyyyyyy\""
		want_value "$p\\360\\237\\230\\200yyyyyyy\\n" "\"value\":\"$p""😀""yyyyyyy\\n\""
		# Inside embedded JSON the same bytes are checked and kept.
		want_value "{\"$p\":\"$p\\\\\"\\\\\\\\\\\\u0041é☃$p\"}" "\"value\":{\"$p\":\"$p\\\"\\\\\\u0041é☃$p\"}"
		want_value "[\"$p\\001\"]" "\"value\":\"[\\\"$p\\u0001\\\"]\""
		want_value "[\"$p\\377\"]" '"value_b64":"'"$(printf "[\"$p\\377\"]" | base64 -w0)"'"'
	done
	values_are
}

# A string longer than the stdout buffer, escapes throughout: in whole,
# as value and as value_text.
@test "cat: long strings with escapes are written whole" {
	python3 -c 'import sys; sys.stdout.write(("a\n\x01\"b\\" * 20000) + "\0" + " [" + "\"\\n\x7f\"," * 20000 + "0] " + "\0")' | elog-append -0 "$LOG"
	elog-cat "$LOG" >"$T/out"
	python3 - "$T/out" <<-'EOF'
		import json, sys
		lines = open(sys.argv[1], 'rb').read().split(b'\n')
		assert lines[2] == b'' and len(lines) == 3, len(lines)
		want = b'a\\n\\u0001\\"b\\\\' * 20000
		assert lines[0].endswith(b',"value":"' + want + b'"}'), lines[0][-200:]
		v = b'[' + b'"\\n\x7f",' * 20000 + b'0]'
		t = json.dumps(' [' + '"\\n\x7f",' * 20000 + '0] ', ensure_ascii=False).encode()
		t = t.replace(b'\\u007f', b'\x7f')
		assert lines[1].endswith(b',"value":' + v + b',"value_text":' + t + b'}'), lines[1][-200:]
	EOF
}

@test "cat: bytes that are not UTF-8 are base64 under value_b64 and key_b64" {
	[ "$(value_of '\xff')" = '"value_b64":"/w=="' ]
	[ "$(value_of '\xff\xfe')" = '"value_b64":"//4="' ]
	[ "$(value_of '\xff\xfe\xfd')" = '"value_b64":"//79"' ]
	[ "$(value_of 'ab\xc3')" = '"value_b64":"YWLD"' ]
	# Overlong forms, surrogates and code points above U+10FFFF are not UTF-8.
	[ "$(value_of '\xc0\x80')" = '"value_b64":"wIA="' ]
	[ "$(value_of '\xe0\x80\x80')" = '"value_b64":"4ICA"' ]
	[ "$(value_of '\xed\xa0\x80')" = '"value_b64":"7aCA"' ]
	[ "$(value_of '\xf4\x90\x80\x80')" = '"value_b64":"9JCAgA=="' ]
	[ "$(value_of '{"a":"\xff"}')" = '"value_b64":"eyJhIjoi/yJ9"' ]
	# The largest code points of each length are.
	[ "$(value_of '\xdf\xbf\xef\xbf\xbf\xf4\x8f\xbf\xbf')" = $'"value":"\xdf\xbf\xef\xbf\xbf\xf4\x8f\xbf\xbf"' ]
	printf '\xfe\xff:v\n' | elog-append -K : "$T/k"
	[ "$(elog-cat "$T/k" | sed 's/.*"schema":0,//')" = '"key_b64":"/v8=","value":"v"}' ]
}

@test "cat: JSON nested 128 deep is embedded, deeper is a string" {
	local deep128 deep129
	deep128=$(printf '%.0s[' $(seq 128); printf '%.0s]' $(seq 128))
	deep129=$(printf '%.0s[' $(seq 129); printf '%.0s]' $(seq 129))
	printf '%s\n%s\n' "$deep128" "$deep129" | elog-append "$LOG"
	[ "$(elog-cat -c 1 "$LOG" | jq -c .value)" = "$deep128" ]
	[ "$(elog-cat -o 1 "$LOG" | jq -r .value)" = "$deep129" ]
}

@test "cat: jq reads back exactly what was appended" {
	local f=$T/values
	{
		echo '{"user":"ana","n":1,"tags":["a","b"],"nested":{"x":[1.5,-2e10,null]}}'
		echo '["x",{"y":"é\t\"q\""}]'
		printf '%s\n' 'plain text' 'tab	and "quotes" and \backslash\' '' 'ünïcödé ☃ 😀' '3.14'
		printf 'ctl\001\037\n'
	} >"$f"
	elog-append -s 9 "$LOG" <"$f"
	# Objects and arrays come back as JSON equal to the input...
	[ "$(elog-cat -c 2 "$LOG" | jq -c .value)" = "$(head -2 "$f" | jq -c .)" ]
	# ...and text comes back byte for byte.
	[ "$(elog-cat -o 2 "$LOG" | jq -r .value)" = "$(tail -n +3 "$f")" ]
	[ "$(elog-cat "$LOG" | jq -s -c 'map(.offset)')" = "[0,1,2,3,4,5,6,7]" ]
	[ "$(elog-cat "$LOG" | jq -r '.schema' | sort -u)" = "9" ]
}

@test "cat: -v prints raw values, one per line" {
	printf 'k:{"a": 1}\n:\n:x\\y\n' | elog-append -K : "$LOG"
	run --separate-stderr elog-cat -v "$LOG"
	[ "$status" -eq 0 ] && [ "$output" = $'{"a": 1}\n\nx\\y' ] && [ "$stderr" = "" ]
	[ "$(elog-cat --values "$LOG")" = "$output" ]
}

@test "cat: -F LOG with no % directive asks whether -f was meant" {
	seq 1 2 | elog-append "$LOG"
	usage_error elog-cat "-F '$LOG' has no % directive: did you mean -f?" -F "$LOG"
	usage_error elog-cat "-F '$LOG' has no % directive: did you mean -f?" -F "$LOG" "$LOG"
	# A format of text alone is fine where it cannot be the log.
	run elog-cat -F 'x\n' "$LOG"
	[ "$status" -eq 0 ]
	[ "$output" = $'x\nx' ]
}

@test "cat: -F prints every directive and escape" {
	five
	run elog-cat -c 1 -F 'o=%o k=%k s=%s T=%T S=%S K=%K c=%c %%o\t|\\|\r|\n' "$LOG"
	[ "$status" -eq 0 ] && [ "$output" = $'o=0 k=a s={"n":0} T=1000 S=7 K=1 c=3 %o\t|\\|\r|' ]
	[ "$(elog-cat -F '%o\0' "$LOG" | od -An -c | tr -s ' ')" = " 0 \\0 1 \\0 2 \\0 3 \\0 4 \\0" ]
	[ "$(elog-cat --format 'plain' "$LOG")" = "plainplainplainplainplain" ]
	[ "$(elog-cat -F '' "$LOG")" = "" ]
}

@test "cat: -F prints negative timestamps and raw bytes" {
	printf -- '-1500\t\xff\n' | elog-append -t "$LOG"
	[ "$(elog-cat -F '%T %S ' "$LOG"; elog-cat -F '%s' "$LOG" | od -An -tx1)" = "-1500 1  ff" ]
	[ "$(elog-cat "$LOG")" = '{"offset":0,"ts":-1500,"schema":0,"key":null,"value_b64":"/w=="}' ]
}

@test "cat: -o beginning, end, N and -N" {
	five
	[ "$(elog-cat -o beginning -F '%o' "$LOG")" = "01234" ]
	[ "$(elog-cat -o end -F '%o' "$LOG")" = "" ]
	[ "$(elog-cat -o 0 -F '%o' "$LOG")" = "01234" ]
	[ "$(elog-cat -o 3 -F '%o' "$LOG")" = "34" ]
	[ "$(elog-cat --offset 4 -F '%o' "$LOG")" = "4" ]
	[ "$(elog-cat -o 5 -F '%o' "$LOG")" = "" ]
	[ "$(elog-cat -o 99999999999 -F '%o' "$LOG")" = "" ]
	[ "$(elog-cat -o -2 -F '%o' "$LOG")" = "34" ]
	[ "$(elog-cat -o -5 -F '%o' "$LOG")" = "01234" ]
	[ "$(elog-cat -o -9 -F '%o' "$LOG")" = "01234" ]
	[ "$(elog-cat -o -0 -F '%o' "$LOG")" = "" ]
}

@test "cat: -n prints the last N records" {
	five
	[ "$(elog-cat -n 2 -F '%o' "$LOG")" = "34" ]
	[ "$(elog-cat --last 1 -F '%o' "$LOG")" = "4" ]
	[ "$(elog-cat -n 0 -F '%o' "$LOG")" = "" ]
	[ "$(elog-cat -n 100 -F '%o' "$LOG")" = "01234" ]
	# With -k, the last N records of that key, however far back.
	[ "$(elog-cat -n 1 -k a -F '%o' "$LOG")" = "2" ]
	[ "$(elog-cat -n 2 -k a -F '%o' "$LOG")" = "02" ]
	[ "$(elog-cat -n 3 -k a -F '%o' "$LOG")" = "02" ]
	[ "$(elog-cat -n 1 -k '' -F '%o' "$LOG")" = "3" ]
	[ "$(elog-cat -n 0 -k a -F '%o' "$LOG")" = "" ]
}

@test "cat: -n N -k KEY reads back only as far as the Nth last record of the key" {
	# 5000 records in 4 KiB segments; key "rare" only at offsets 10, 20
	# and 4990.
	awk 'BEGIN { for (i = 0; i < 5000; i++)
		printf "%s:%06d padding padding\n", (i == 10 || i == 20 || i == 4990) ? "rare" : "common", i }' |
		elog-append -K : --segment-bytes 4K "$LOG"
	[ "$(elog-cat -n 2 -k rare -F '%o ' "$LOG")" = "20 4990 " ]
	[ "$(elog-cat -n 5 -k rare -F '%o ' "$LOG")" = "10 20 4990 " ]
	[ "$(elog-cat -n 2 -k common -F '%o ' "$LOG")" = "4998 4999 " ]
	[ "$(elog-cat -n 1 -k rare -c 1 -F '%s' "$LOG")" = "004990 padding padding" ]
}

@test "cat: -F %R prints the timestamp in RFC 3339, which --since reads back" {
	five
	[ "$(elog-cat -F '%R %T\n' -c 2 "$LOG")" = $'1970-01-01T00:00:01.000Z 1000\n1970-01-01T00:00:02.000Z 2000' ]
	[ "$(elog-cat --since "$(elog-cat -o 3 -c 1 -F %R "$LOG")" -F %o "$LOG")" = 34 ]
	# Out of RFC 3339's years: epoch milliseconds after an @.
	printf '%s\t%s\n' 253402300800000 late | elog-append -t --max-skew 500000w "$LOG"
	[ "$(elog-cat -o 5 -F %R "$LOG")" = "@253402300800000" ]
	[ "$(elog-cat --since @253402300800000 -F %o "$LOG")" = 5 ]
}

@test "cat: --since and --until take the ts elog-cat prints, and hint at a missing minus" {
	five
	ts=$(elog-cat -o 2 -c 1 "$LOG" | jq .ts)
	[ "$ts" = 3000 ]
	[ "$(elog-cat --since "$ts" -F %o "$LOG")" = 234 ]
	[ "$(elog-cat --until "$ts" -F %o "$LOG")" = 012 ]
	usage_error elog-cat "--since: invalid time '1h' (did you mean -1h?)" --since 1h "$LOG"
	usage_error elog-cat "--until: invalid time '2d12h' (did you mean -2d12h?)" --until 2d12h "$LOG"
	# What elog-append -t reads, elog-cat --since reads.
	printf '%s\t%s\n' 2026-11-29T03:00:00.250Z x | elog-append -t "$LOG"
	[ "$(elog-cat --since 2026-11-29T03:00:00.250Z -F %T "$LOG")" = 1795921200250 ]
}

@test "cat: -n across segments" {
	seq -f '%098g' 0 199 | elog-append --segment-bytes 4K "$LOG"
	[ "$(ls "$LOG" | grep -c '\.log$')" -ge 5 ]
	[ "$(elog-cat -n 150 -v "$LOG" | cmp - <(seq -f '%098g' 50 199) && echo same)" = same ]
	[ "$(elog-cat -o 77 -c 3 -F '%o ' "$LOG")" = "77 78 79 " ]
}

@test "cat: -c stops after COUNT printed records, counted after -k" {
	five
	[ "$(elog-cat -c 2 -F '%o' "$LOG")" = "01" ]
	[ "$(elog-cat --count 9 -F '%o' "$LOG")" = "01234" ]
	[ "$(elog-cat -c 0 -F '%o' "$LOG")" = "" ]
	[ "$(elog-cat -c 2 -k b -F '%o' "$LOG")" = "14" ]
	[ "$(elog-cat -o 2 -c 2 -F '%o' "$LOG")" = "23" ]
}

@test "cat: -k prints only records with exactly that key" {
	five
	[ "$(elog-cat -k a -F '%o' "$LOG")" = "02" ]
	[ "$(elog-cat --key b -F '%o' "$LOG")" = "14" ]
	# As grep: a key no record has is a negative answer, status 1.
	run --separate-stderr elog-cat -k nope "$LOG"
	[ "$status" -eq 1 ] && [ "$output" = "" ] && [ "$stderr" = "" ]
	run --separate-stderr elog-cat -k a --until 1970-01-01T00:00:00.500Z "$LOG"
	[ "$status" -eq 1 ] && [ "$output" = "" ]
	[ "$(elog-cat -k '' -F '%o' "$LOG")" = "3" ]
	printf 'ab:1\n' | elog-append -K : "$LOG"
	[ "$(elog-cat -k a -F '%o' "$LOG")" = "02" ]
}

@test "cat: --since starts at the first record at or after TIME" {
	five
	[ "$(elog-cat --since @3000 -F '%o' "$LOG")" = "234" ]
	[ "$(elog-cat --since @2999 -F '%o' "$LOG")" = "234" ]
	[ "$(elog-cat --since @3001 -F '%o' "$LOG")" = "34" ]
	[ "$(elog-cat --since @0 -F '%o' "$LOG")" = "01234" ]
	[ "$(elog-cat --since @9000 -F '%o' "$LOG")" = "" ]
	[ "$(elog-cat --since 1970-01-01T00:00:02Z -F '%o' "$LOG")" = "1234" ]
	[ "$(elog-cat --since 1970-01-01T01:00:02.5+01:00 -F '%o' "$LOG")" = "234" ]
	[ "$(elog-cat --since 1970-01-01T00:00:04 -F '%o' "$LOG")" = "34" ]
	[ "$(elog-cat --since 1970-01-01 -F '%o' "$LOG")" = "01234" ]
	[ "$(elog-cat --since 1970-01-02 -F '%o' "$LOG")" = "" ]
}

@test "cat: --until prints the records at or before TIME" {
	five
	[ "$(elog-cat --until @3000 -F '%o' "$LOG")" = "012" ]
	[ "$(elog-cat --until @2999 -F '%o' "$LOG")" = "01" ]
	[ "$(elog-cat --until @999 -F '%o' "$LOG")" = "" ]
	[ "$(elog-cat --since @2000 --until @4000 -F '%o' "$LOG")" = "123" ]
	[ "$(elog-cat --until 1970-01-01T00:00:04Z -k b -F '%o' "$LOG")" = "1" ]
	# Timestamps need not grow with offsets: a record after a later one
	# is printed when it is at or before TIME, one before it left out
	# when it is not (see elog-cat-window.bats).
	printf '1500\tlate\n' | elog-append -t "$LOG"
	[ "$(elog-cat --until @4500 -F '%o' "$LOG")" = "01235" ]
	[ "$(elog-cat --since @1600 --until @4500 -F '%o' "$LOG")" = "123" ]
}

@test "cat: relative and local times" {
	local now
	now=$(now_ms)
	printf '%s\n' "$((now - 3 * 3600000))"$'\told' "$((now - 3600000))"$'\trecent' "$now"$'\tnow' |
		elog-append -t "$LOG"
	[ "$(elog-cat --since -2h -v "$LOG")" = $'recent\nnow' ]
	[ "$(elog-cat --since -90m --until -30m -v "$LOG")" = "recent" ]
	[ "$(elog-cat --since -1d -v "$LOG" | wc -l)" = 3 ]
	rm -rf "$LOG"
	printf '1782856799999\tbefore\n1782856800000\tmidnight\n' | elog-append -t "$LOG"
	[ "$(TZ=Europe/Berlin elog-cat --until 2026-06-30T23:59:59.999 -v "$LOG")" = "before" ]
	[ "$(TZ=Europe/Berlin elog-cat --until 2026-07-01 -v "$LOG")" = $'before\nmidnight' ]
	[ "$(TZ=Europe/Berlin elog-cat --since '2026-07-01 00:00' -v "$LOG")" = "midnight" ]
}

@test "cat: stdout closed early exits 0 with nothing on stderr" {
	seq 1 200000 | sed 's/^/7\t/' | elog-append -t "$LOG"
	run bash -c 'elog-cat "$1" 2>"$2" | head -1; echo "${PIPESTATUS[0]}"' _ "$LOG" "$T/err"
	[ "$output" = '{"offset":0,"ts":7,"schema":0,"key":null,"value":"1"}'$'\n''0' ]
	[ ! -s "$T/err" ]
	run bash -c 'elog-cat -v "$1" 2>"$2" | head -c 10 >/dev/null; echo "${PIPESTATUS[0]}"' _ "$LOG" "$T/err"
	[ "$output" = 0 ] && [ ! -s "$T/err" ]
}

@test "cat: a write error on stdout is an error" {
	[ -w /dev/full ] || skip "no /dev/full"
	echo a | elog-append "$LOG"
	run --separate-stderr bash -c 'elog-cat "$1" >/dev/full' _ "$LOG"
	[ "$status" -eq 5 ] && [ "$stderr" = "elog-cat: stdout: no space left on device" ]
}

@test "cat: a missing directory, a file, a directory that is not a log" {
	run --separate-stderr elog-cat "$T/missing"
	[ "$status" -eq 5 ] && [ "$output" = "" ] && [ "$stderr" = "elog-cat: $T/missing: no such file or directory" ]
	touch "$T/file"
	run --separate-stderr elog-cat "$T/file"
	[ "$status" -eq 5 ] && [ "$stderr" = "elog-cat: $T/file: not a directory" ]
	mkdir "$T/dir"
	run --separate-stderr elog-cat "$T/dir"
	[ "$status" -eq 5 ] && [ "$stderr" = "elog-cat: $T/dir: not an elog directory (no settings file)" ]
	[ "$(ls -A "$T/dir")" = "" ]
}

@test "cat: a log the user may not read" {
	chmod 755 "$T"
	echo a | elog-append "$LOG"
	chmod 700 "$LOG"
	as_nobody "$ELOG_BIN/elog-cat" --version >/dev/null 2>&1 ||
		skip "cannot run the programs as an unprivileged user here"
	run --separate-stderr as_nobody "$ELOG_BIN/elog-cat" "$LOG"
	[ "$status" -eq 5 ] && [ "$output" = "" ] && [ "$stderr" = "elog-cat: $LOG: permission denied" ]
}

@test "cat: a damaged record is an error after the records before it" {
	printf 'aaaa\nbbbb\ncccc\n' | elog-append "$LOG"
	# A 32-byte segment header, then records of 28 + 4 bytes: byte 92 is in
	# the value of the second record, which starts at byte 64.
	printf 'X' | dd of="$LOG/00000000000000000000.log" bs=1 seek=92 conv=notrunc 2>/dev/null
	run --separate-stderr elog-cat -v "$LOG"
	[ "$status" -eq 4 ] && [ "$output" = "aaaa" ]
	[ "$stderr" = "elog-cat: $LOG: 00000000000000000000.log: corrupt record at byte 64; run elog-verify $LOG to see what is damaged" ]
}

@test "cat: a gap left by retention is reported and skipped; --strict makes it an error" {
	seq -f '%098g' 0 99 | elog-append --segment-bytes 4K "$LOG"
	local second
	second=$(ls "$LOG" | grep '\.log$' | sed -n 2p)
	second=$((10#${second%.log}))
	rm "$LOG/00000000000000000000.log" "$LOG/00000000000000000000.idx"
	run --separate-stderr elog-cat -o 0 -c 1 -F '%o' "$LOG"
	[ "$status" -eq 0 ] && [ "$output" = "$second" ]
	[ "$stderr" = "elog-cat: $LOG: offsets 0-$((second - 1)) were removed by retention" ]
	run --separate-stderr elog-cat -o $((second - 1)) -c 1 -F '%o' "$LOG"
	[ "$status" -eq 0 ] && [ "$output" = "$second" ]
	[ "$stderr" = "elog-cat: $LOG: offset $((second - 1)) was removed by retention" ]
	run --separate-stderr elog-cat --strict -o 0 -F '%o' "$LOG"
	[ "$status" -eq 1 ] && [ "$output" = "" ]
	[ "$stderr" = "elog-cat: $LOG: offsets 0-$((second - 1)) were removed by retention" ]
	# From the beginning there is no gap: the log now starts later.
	run --separate-stderr elog-cat --strict -c 1 -F '%o' "$LOG"
	[ "$status" -eq 0 ] && [ "$output" = "$second" ] && [ "$stderr" = "" ]
}

# Each wrong use of the arguments: a usage error (status 2, the message
# and the hint on stderr, nothing on stdout), one test per failure path.
@test "cat: usage error: no log directory" {
	usage_error elog-cat "missing log directory"
}

@test "cat: usage error: two log directories" {
	usage_error elog-cat "unexpected argument 'b'" a b
}

@test "cat: usage error: an unknown short option" {
	usage_error elog-cat "unknown option -x" -x "$LOG"
}

@test "cat: usage error: an unknown long option" {
	usage_error elog-cat "unknown option --nope" --nope "$LOG"
}

@test "cat: usage error: -o without its argument" {
	usage_error elog-cat "option -o needs an argument" "$LOG" -o
}

@test "cat: usage error: --since without its argument" {
	usage_error elog-cat "option --since needs an argument" "$LOG" --since
}

@test "cat: usage error: -o with a word that is no position" {
	usage_error elog-cat "-o: invalid position 'middle'" -o middle "$LOG"
}

@test "cat: usage error: -o with a lone minus" {
	usage_error elog-cat "-o: invalid position '-'" -o - "$LOG"
}

@test "cat: usage error: -o with a double minus" {
	usage_error elog-cat "-o: invalid position '--1'" -o --1 "$LOG"
}

@test "cat: usage error: -n negative" {
	usage_error elog-cat "-n: invalid number '-1'" -n -1 "$LOG"
}

@test "cat: usage error: -c not a number" {
	usage_error elog-cat "-c: invalid number 'x'" -c x "$LOG"
}

@test "cat: usage error: -o with -n" {
	usage_error elog-cat "-o and -n cannot be used together" -o 1 -n 1 "$LOG"
}

@test "cat: usage error: --since with -o" {
	usage_error elog-cat "--since and -o cannot be used together" --since @1 -o end "$LOG"
}

@test "cat: usage error: -F then -v" {
	usage_error elog-cat "-F and -v cannot be used together" -F '%s' -v "$LOG"
}

@test "cat: usage error: -v then -F" {
	usage_error elog-cat "-F and -v cannot be used together" -v -F '%s' "$LOG"
}

@test "cat: usage error: -F with an unknown directive" {
	usage_error elog-cat "-F: unknown directive '%x'" -F '%x' "$LOG"
}

@test "cat: usage error: -F with an unknown escape" {
	usage_error elog-cat "-F: unknown escape '\\q'" -F '\q' "$LOG"
}

@test "cat: usage error: -F ending in a lone percent sign" {
	usage_error elog-cat "-F: the format ends in a lone '%'" -F 'abc%' "$LOG"
}

@test "cat: usage error: -F ending in a lone backslash" {
	usage_error elog-cat "-F: the format ends in a lone '\\'" -F 'abc\' "$LOG"
}

@test "cat: usage error: --since with a word that is no time" {
	usage_error elog-cat "--since: invalid time 'soon'" --since soon "$LOG"
}

@test "cat: usage error: --until on a day that does not exist" {
	usage_error elog-cat "--until: invalid time '2026-02-29'" --until 2026-02-29 "$LOG"
}

@test "cat: usage error: --until with minute 60" {
	usage_error elog-cat "--until: invalid time '2026-11-29T03:60:00Z'" --until 2026-11-29T03:60:00Z "$LOG"
}

@test "cat: usage error: --since relative without a unit" {
	usage_error elog-cat "--since: invalid time '-2' (a relative time needs a unit, as in -2h; @-2 is milliseconds before the epoch)" --since -2 "$LOG"
}

@test "cat: usage error: --since @ without a number" {
	usage_error elog-cat "--since: invalid time '@x'" --since @x "$LOG"
}

@test "cat: usage error: --since @ beyond 64 bits" {
	usage_error elog-cat "--since: invalid time '@9223372036854775808'" --since @9223372036854775808 "$LOG"
}

@test "cat: usage error: --since with a two-digit year" {
	usage_error elog-cat "--since: invalid time '26-11-29'" --since 26-11-29 "$LOG"
}

@test "cat: --help prints the man page's synopsis, --version the version" {
	run --separate-stderr elog-cat --version
	[ "$status" -eq 0 ] && [[ "$output" =~ ^elog-cat\ \(elog\)\ [0-9]+\.[0-9]+\.[0-9]+$ ]] && [ "$stderr" = "" ]
	run --separate-stderr elog-cat --help
	[ "$status" -eq 0 ] && [ "$stderr" = "" ] && [[ "$output" == "usage: elog-cat "* ]]
	[ "$(elog-cat -h)" = "$output" ]
	command -v mandoc >/dev/null || skip "mandoc is not installed"
	[ "$(usage_words elog-cat)" = "$(synopsis_words "$BATS_TEST_DIRNAME/../../man/elog-cat.1")" ]
}

@test "cat: a closed stdout is an error, and never reaches the log's files" {
	printf 'a\nb\n' | elog-append "$LOG"
	run --separate-stderr bash -c 'elog-cat "$1" >&-' _ "$LOG"
	[ "$status" -eq 5 ] && [ "$output" = "" ] && [ "$stderr" = "elog-cat: stdout: bad file descriptor" ]
	run --separate-stderr bash -c 'echo c | elog-append -p "$1" >&-' _ "$LOG"
	[ "$status" -eq 5 ] && [ "$stderr" = "elog-append: stdout: bad file descriptor" ]
	run --separate-stderr bash -c 'echo d | elog-append "$1" >&- <&0' _ "$LOG"
	[ "$status" -eq 0 ] && [ "$stderr" = "" ]
	run --separate-stderr bash -c 'elog-append "$1" <&-' _ "$LOG"
	[ "$status" -eq 0 ] && [ "$stderr" = "" ]
	[ "$(elog-cat -v "$LOG")" = $'a\nb\nc\nd' ]
}
