#!/usr/bin/env bats
# completion/elog.bash: flags, flag arguments, DIR arguments and consumer
# names, by calling the completion function as bash would (COMP_WORDS,
# COMP_CWORD) and reading COMPREPLY.  ELOG_BIN is the build directory.

load helpers
load flags

TOP=$BATS_TEST_DIRNAME/../..

setup_test() {
	# shellcheck source=../../completion/elog.bash
	source "$TOP/completion/elog.bash"
	cd "$T"
	echo a | elog-append events
	echo b | elog-append 'old events'
	mkdir plain plain/inner
	touch notadir
}


# Complete the last of the words given, as if typed after them; the
# candidates end up one per line, sorted, in $reply.
complete_words() {
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMP_LINE="$*"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	_elog "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
	reply=$(printf '%s\n' "${COMPREPLY[@]}" | sed '/^$/d' | sort)
}

@test "completion: registered for the six programs" {
	local p
	for p in elog-append elog-cat elog-commit elog-compact elog-retain elog-verify; do
		[ "$(complete -p "$p")" = "complete -F _elog $p" ]
	done
}

@test "completion: '-' offers every flag of the program's man page, no other" {
	local p
	for p in elog-append elog-cat elog-commit elog-compact elog-retain elog-verify; do
		complete_words "$p" -
		[ "$reply" = "$(flags_of_options "$TOP/man/$p.1")" ] || {
			echo "$p: completion (<) and man page (>) differ:" >&2
			diff <(echo "$reply") <(flags_of_options "$TOP/man/$p.1") >&2
			return 1
		}
	done
}

@test "completion: a flag's prefix completes to the flags that begin with it" {
	complete_words elog-cat --s
	[ "$reply" = "$(printf '%s\n' --since --strict)" ]
	complete_words elog-append --retain-b
	[ "$reply" = --retain-bytes ]
	complete_words elog-verify --re
	[ "$reply" = --repair ]
	complete_words elog-retain --nothing
	[ "$reply" = "" ]
}

@test "completion: DIR offers directories, not files, with logs among them" {
	complete_words elog-cat ''
	[ "$reply" = "$(printf '%s\n' events 'old events' plain)" ]
	complete_words elog-verify -l ''
	[ "$reply" = "$(printf '%s\n' events 'old events' plain)" ]
	complete_words elog-retain --max-bytes 1M ''
	[ "$reply" = "$(printf '%s\n' events 'old events' plain)" ]
}

@test "completion: a lone log completes to a finished, quoted word" {
	complete_words elog-cat ev
	[ "$reply" = events ]
	complete_words elog-compact -n ol
	[ "$reply" = 'old\ events' ]
	complete_words elog-cat "$T/ev"
	[ "$reply" = "$T/events" ]
}

@test "completion: a plain directory is offered to go on into it" {
	complete_words elog-append pl
	[ "$reply" = plain ]
	complete_words elog-append plain/
	[ "$reply" = plain/inner ]
	complete_words elog-append notad
	[ "$reply" = "" ]
}

@test "completion: after DIR nothing more is offered" {
	complete_words elog-cat events ''
	[ "$reply" = "" ]
	complete_words elog-verify events ''
	[ "$reply" = "" ]
}

@test "completion: the argument of a flag is not taken for DIR" {
	complete_words elog-cat -g ''
	[ "$reply" = "" ]
	complete_words elog-cat -o ''
	[ "$reply" = "$(printf '%s\n' beginning end)" ]
	complete_words elog-cat --offset e
	[ "$reply" = end ]
	complete_words elog-append --compress ''
	[ "$reply" = zstd ]
	complete_words elog-append --cleanup ''
	[ "$reply" = "$(printf '%s\n' compact delete)" ]
	complete_words elog-append --cleanup c
	[ "$reply" = compact ]
	complete_words elog-append -k cart-7 ''
	[ "$reply" = "$(printf '%s\n' events 'old events' plain)" ]
	# bash splits "--every=1s" at the "=".
	complete_words elog-commit --every = 1s ''
	[ "$reply" = "$(printf '%s\n' events 'old events' plain)" ]
	complete_words elog-cat --offset = ''
	[ "$reply" = "$(printf '%s\n' beginning end)" ]
}

@test "completion: elog-commit DIR NAME completes consumer names" {
	elog-commit --create events mailer 0
	elog-commit --create events uplink 0
	complete_words elog-commit events ''
	[ "$reply" = "$(printf '%s\n' mailer uplink)" ]
	complete_words elog-commit -T events up
	[ "$reply" = uplink ]
	complete_words elog-commit events mailer ''
	[ "$reply" = "" ]
	complete_words elog-commit 'old events' ''
	[ "$reply" = "" ]
}

@test "completion: elog-commit -l and --log-id take DIR alone; -d and --ack-loss DIR NAME" {
	elog-commit --create events mailer 0
	complete_words elog-commit -l ev
	[ "$reply" = events ]
	complete_words elog-commit -l events ''
	[ "$reply" = "" ]
	complete_words elog-commit -d ev
	[ "$reply" = events ]
	complete_words elog-commit -d events m
	[ "$reply" = mailer ]
	complete_words elog-commit --ack-loss events ''
	[ "$reply" = mailer ]
	complete_words elog-commit -d events mailer ''
	[ "$reply" = "" ]
	complete_words elog-commit --log-id events ''
	[ "$reply" = "" ]
}

@test "completion: works in a shell with no bash-completion, under set -u" {
	run bash --norc -uc 'source "$1" && COMP_WORDS=(elog-cat --fo) COMP_CWORD=1 &&
		_elog elog-cat --fo elog-cat && echo "${COMPREPLY[*]}"' sh "$TOP/completion/elog.bash"
	[ "$status" -eq 0 ] && [ "$output" = "--format --follow" ]
}
