# from-kafka.jq: a Kafka message, as `kcat -C -J` prints it, as input for
#   elog-append -0 -t -K "$(printf '\t')" dir
# that is, "TS<TAB>KEY<TAB>VALUE" ended by a NUL byte (so that values may
# hold newlines).  The record keeps the message's timestamp (.ts, ms since
# the epoch), its key (none when the key is null or empty; keys must not
# hold a tab) and its payload as the value (empty for a null payload, which
# with a key is a tombstone in elog as in Kafka).  Use with jq -j.
"\(.ts)\t\(.key // "")\t\(.payload // "")\u0000"
