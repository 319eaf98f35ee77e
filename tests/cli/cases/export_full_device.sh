# /dev/full accepts the open and fails every write with ENOSPC; being a
# device, it is not removed after the failure.
[ -c /dev/full ] || { echo "skipped: no /dev/full" >&2; exit 77; }
small_store s
status memhist export --force s --format jsonl /dev/full
[ -c /dev/full ] && echo still a device
