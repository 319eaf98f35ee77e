# Streams (every one imported from the CSV stream column is kind other,
# nothing else known) with their accesses and transition ranges, and the
# windows: text and JSON.
memhist import -q --format csv "$DATA/streams.csv" s
memhist inspect s | sed -n '/^streams:/,/^windows:/p'
memhist inspect s --windows | sed -n '/^windows:$/,$p'
memhist inspect s --json --windows --segments > out.json
python3 - <<'PY' || echo 'python3 missing'
import json
d = json.load(open("out.json"))
for s in d["streams"]:
    print(s["id"], s["kind"], s["name"], s["pid"], s["tid"], s["cpu"], s["parent"],
          s["accesses"], s["transition_first"], s["transition_last"], s["metadata"])
print("windows", d["windows"])
for w in d["window_list"]:
    print(w["window"], w["id_first"], w["accesses"], w["transition_first"], w["transition_last"])
seg = d["segment_list"][0]
print("segment", seg["version"], seg["streams"], seg["windows"], seg["has_pc"])
types = sorted((x["type"], x["name"], x["required"]) for x in seg["sections"])
print("sections", types[:5])
end = 256
for x in seg["sections"]:
    assert x["offset"] == end, x
    end += x["size"]
print("sections tile the segment up to its directory")
PY
