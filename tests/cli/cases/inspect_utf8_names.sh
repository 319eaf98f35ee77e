# File names are any bytes but NUL: the CLI stores and shows each byte of no
# UTF-8 sequence as U+FFFD (SPEC.md 7.2), so the import of a file whose name
# is not UTF-8 works and inspect (text and JSON) prints valid UTF-8.
printf 'transition,linear,physical,size,op\n0,,0x1000,4,r\n' > "$(printf 'in\377.csv')"
memhist import --format csv --quiet "$(printf 'in\377.csv')" "$(printf 's\300\257t')"
memhist inspect "$(printf 's\300\257t')" | grep -E '^store:|import_source'
memhist inspect --json "$(printf 's\300\257t')" > out.json
grep -o '"store": "[^"]*"' out.json
grep -o '"import_source": "[^"]*"' out.json
if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import json; d=json.load(open("out.json", encoding="utf-8", errors="strict")); print(d["store"], d["metadata"]["import_source"])'
else
    echo 's��t in�.csv'
fi
