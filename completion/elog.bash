# bash completion for elog-append, elog-cat, elog-commit, elog-compact,
# elog-retain and elog-verify.
#
# `make install` puts this file in $PREFIX/share/bash-completion/completions
# under each program's name, where bash-completion loads it the first time
# one of them is completed.  Without bash-completion, source it from
# ~/.bashrc.  It needs nothing but bash itself.
#
# Flags complete to every short and long flag of the program, as listed in
# its man page.  A DIR argument completes to directories: a directory that
# is an elog log (it holds a "settings" file) completes to a finished word,
# followed by a space, while any other directory completes with a slash, so
# that one can go on into it to find the log.  Consumer names complete
# after elog-commit DIR.

# The flags of each program, and among them the ones that take an argument.
_elog_flags_append='-0 --null -K --key-delimiter -k --key -s --schema
	-t --timestamp -p --print-offsets -v --verbose --json --keep-offsets --batch --batch-bytes
	--linger --sync --exclusive --wait --max-skew --segment-bytes --index-interval
	--retain-age --retain-bytes --compress --no-dictionary --cleanup
	-h --help --version'
_elog_args_append='-K --key-delimiter -k --key -s --schema --batch
	--batch-bytes --linger --wait --max-skew --segment-bytes --index-interval
	--retain-age --retain-bytes --compress --cleanup'

_elog_flags_cat='-F --format -v --values -o --offset -n --last --since
	-g --group -c --count --until -f --follow -k --key --reverse --idle
	--existing --strict -L --list --json
	-h --help --version'
_elog_args_cat='-F --format -o --offset -n --last --since -g --group
	-c --count --until -k --key --idle'

_elog_flags_commit='-T --tee -e --every --create -l --list --json -d --delete
	--ack-loss --log-id -h --help --version'
_elog_args_commit='-e --every'

_elog_flags_compact='--grace --min-lag -n --dry-run -v --verbose --wait
	-h --help --version'
_elog_args_compact='--grace --min-lag'

_elog_flags_retain='--max-age --max-bytes -n --dry-run -v --verbose --wait
	--set -h --help --version'
_elog_args_retain='--max-age --max-bytes --set'

_elog_flags_verify='-l --list -q --quiet --json --repair --salvage -h --help
	--version'
_elog_args_verify=''

# _elog_in WORD LIST: whether WORD is one of the words of LIST.
_elog_in() {
	local w
	for w in $2; do
		[[ $w == "$1" ]] && return 0
	done
	return 1
}

# The word as the shell will read it: quotes and backslashes removed, and a
# leading ~ expanded, so that it can be tested as a path.
_elog_dequote() {
	local w=$1
	case $w in
	\'*) w=${w#\'}; w=${w%\'} ;;
	\"*) w=${w#\"}; w=${w%\"} ;;
	*) w=$(printf '%s' "$w" | sed 's/\\\(.\)/\1/g') ;;
	esac
	[[ $w == "~" || $w == "~/"* ]] && w=$HOME${w#\~}
	printf '%s' "$w"
}

# Directories that begin with the word CUR.  A lone match that is a log is
# offered quoted and whole, so that bash ends the word with a space; else
# bash is told the matches are file names, so that it quotes them, shows
# their last component and ends a lone directory with a slash.
_elog_dirs() {
	local cur d path
	local -a dirs
	cur=$(_elog_dequote "$1")
	mapfile -t dirs < <(compgen -d -- "$cur")
	if ((${#dirs[@]} == 1)); then
		d=${dirs[0]}
		path=$d
		[[ $d == "~/"* ]] && path=$HOME${d#\~}
		if [[ -f $path/settings ]]; then
			if [[ $d == "~/"* ]]; then
				COMPREPLY=("~/$(printf '%q' "${d#\~/}")")
			else
				COMPREPLY=("$(printf '%q' "$d")")
			fi
			return
		fi
	fi
	compopt -o filenames 2>/dev/null || true
	COMPREPLY=("${dirs[@]}")
}

# Consumer names committed in the log DIR that begin with CUR.
_elog_consumers() {
	local dir=$1 cur=$2 names
	[[ -f $dir/consumers.json ]] || return 0
	names=$(elog-commit -l --json "$dir" 2>/dev/null |
		sed -n 's/^{"name":"\([A-Za-z0-9._-]*\)".*/\1/p')
	mapfile -t COMPREPLY < <(compgen -W "$names" -- "$cur")
}

_elog() {
	local prog=${1##*/} cur prev i w flags args
	local -a pos
	local dashdash=0
	prog=${prog#elog-}
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	COMPREPLY=()
	flags=_elog_flags_$prog
	args=_elog_args_$prog
	flags=${!flags}
	args=${!args}

	# The positional words before the one completed: not a flag, not the
	# argument of one.
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		if ((dashdash)); then
			pos+=("$w")
		elif [[ $w == -- ]]; then
			dashdash=1
		elif [[ $w == -* ]]; then
			# bash splits "--every=1s" into three words at the "=".
			if _elog_in "$w" "$args"; then
				[[ ${COMP_WORDS[i + 1]} == = ]] && ((i++))
				((i++))
			fi
		else
			pos+=("$w")
		fi
	done

	# The argument of a flag, after a space or an "=".
	if [[ $cur == = ]]; then
		cur=
	elif [[ $prev == = ]]; then
		prev=${COMP_WORDS[COMP_CWORD - 2]}
	fi
	if ((!dashdash)) && [[ $prev == -* ]] && _elog_in "$prev" "$args"; then
		case $prev in
		-o | --offset)
			mapfile -t COMPREPLY < <(compgen -W 'beginning end' -- "$cur") ;;
		--compress)
			mapfile -t COMPREPLY < <(compgen -W zstd -- "$cur") ;;
		--cleanup)
			mapfile -t COMPREPLY < <(compgen -W 'delete compact' -- "$cur") ;;
		esac
		return 0
	fi

	if ((!dashdash)) && [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$flags" -- "$cur")
		return 0
	fi

	# elog-commit DIR NAME [OFFSET]: the second word is a consumer name,
	# unless -l or --log-id made the log directory the only one; -d and
	# --ack-loss take DIR NAME and nothing more.
	if [[ $prog == commit && ${#pos[@]} -ge 1 ]]; then
		for w in "${COMP_WORDS[@]:1:COMP_CWORD-1}"; do
			case $w in
			-l | --list | --log-id) return 0 ;;
			-d | --delete | --ack-loss) ((${#pos[@]} == 1)) || return 0 ;;
			esac
		done
		if ((${#pos[@]} == 1)); then
			_elog_consumers "$(_elog_dequote "${pos[0]}")" "$cur"
		fi
		return 0
	fi
	if ((${#pos[@]} == 0)); then
		_elog_dirs "$cur"
	fi
	return 0
}

complete -F _elog elog-append elog-cat elog-commit elog-compact elog-retain elog-verify
