# flags.bash: the flags of a program as its usage, its man page and its
# source name them, for help.bats and completion.bats.  Each function prints
# one flag per line, sorted and without repeats.

# The flags named in a usage text or a rendered SYNOPSIS, one per line,
# sorted: "-0ptv" gives -0 -p -t -v; "--batch-bytes" stays whole.
flags_of_text() {
	grep -oE -- '(^|[][ |])--?[A-Za-z0-9][-A-Za-z0-9]*' |
		sed 's/^[][ |]//' |
		awk '/^--/ { print; next }
		     { for (i = 2; i <= length($0); i++) print "-" substr($0, i, 1) }' |
		sort -u
}

# The flags of the man page's option list: every "Fl" of an ".It Fl" line
# (a flag and its long alias), or only the first of each line with "first".
flags_of_options() {
	sed -n 's/^\.It Fl //p' "$1" | sed 's/\\//g' |
		awk -v first="$2" '{
			line = "Fl " $0
			n = split(line, w, " ")
			for (i = 1; i < n; i++)
				if (w[i] == "Fl" && w[i + 1] != "|") {
					print "-" w[i + 1]
					if (first) break
				}
		}' | sort -u
}

# The flags the program's getopt_long accepts, read from its source: the
# letters of the short option string and the names of the long options.
flags_of_source() {
	local src=$1
	{
		grep -o 'getopt_long(argc, argv, "[^"]*"' "$src" |
			sed 's/.*"\(.*\)"/\1/' | tr -d ':' | grep -o . | sed 's/^/-/'
		awk '/long_options\[\] = \{/, /^\};/' "$src" |
			grep -o '{ "[^"]*"' | sed 's/{ "/--/; s/"$//'
	} | sort -u
}
