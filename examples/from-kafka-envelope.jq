# from-kafka-envelope.jq: like from-kafka.jq, for a topic filled by
# to-kafka.sh, whose messages carry the elog record as elog-cat prints it:
# the record's own timestamp, key and value come back, not the message's.
# A value that was a JSON object or array comes back as compact JSON text;
# a record whose key or value was not UTF-8 (key_b64, value_b64) stops jq
# with an error.  Use with jq -j.
.payload | fromjson |
if has("key_b64") or has("value_b64") then error("offset \(.offset): not UTF-8") else . end |
"\(.ts)\t\(.key // "")\t\(.value | if type == "string" then . else tojson end)\u0000"
