"""Errors: the golden corrupt stores raise the right class with the
library's detail; bad arguments raise InvalidArgumentError (or the code the
library gives); every library code has its class."""
import os

import pytest

import memhist
from conftest import GOLDEN
from memhist import Access, errors
from memhist._lib import lib

# format/golden (tests/golden.c's table): variant -> (exception at open,
# exception on a full scan). Opening reads the MANIFEST only, so a damaged
# segment fails the first call that reaches it: the scan.
E = memhist
VARIANTS = {
    "manifest-bad-magic": (E.NotStoreError, None),
    "manifest-major-3": (E.VersionError, None),
    "manifest-major-1": (None, E.CorruptError),  # a 1.0 MANIFEST listing 2.0 segments
    "manifest-generation-0": (E.CorruptError, None),
    "manifest-header-size-72": (E.CorruptError, None),
    "manifest-bad-checksum": (E.ChecksumError, None),
    "manifest-trailing-garbage": (E.CorruptError, None),
    "manifest-truncated": (E.TruncatedError, None),
    "manifest-short": (E.TruncatedError, None),
    "segment-bad-magic": (None, E.NotStoreError),
    "segment-major-3": (None, E.VersionError),
    "segment-byte-order": (None, E.VersionError),
    "segment-incompatible-flag": (None, E.VersionError),
    "segment-header-flip": (None, E.ChecksumError),
    "segment-truncated": (None, E.TruncatedError),
    "segment-missing": (None, E.CorruptError),
    "directory-flip": (None, E.ChecksumError),
    "directory-gap": (None, E.CorruptError),
    "directory-overlap": (None, E.CorruptError),
    "directory-duplicate": (None, E.CorruptError),
    "section-unknown-required": (None, E.VersionError),
    "dictionary-flip": (None, E.ChecksumError),
    "dict-table-header": (None, E.CorruptError),
    "stream-table-order": (None, E.CorruptError),
    "window-table-order": (None, E.CorruptError),
    "window-overlap": (None, E.CorruptError),
    "slice-array-flip": (None, E.ChecksumError),
    "chunk-record-flip": (None, E.ChecksumError),
    "block-flip": (None, E.ChecksumError),
    "block-raw-size": (None, E.CorruptError),
    "block-phy-range": (None, E.CorruptError),
    "block-first-row": (None, E.CorruptError),
    "chunk-row-outside": (None, E.CorruptError),
    "stream-mask-wrong": (None, E.CorruptError),
    "pc-truncated": (None, E.CorruptError),
    "aset-header": (None, E.CorruptError),
}
#: Valid stores among the variants (a newer minor's additions are skipped),
#: and the address-summary variants, which only a query narrow enough to use
#: the summary reads (tests/golden.c checks those).
VALID = {"segment-newer-minor", "future-minor"}
SUMMARY_ONLY = {"summary-order", "summary-posting", "fine-summary-order",
                "fine-summary-shift"}
#: Variants every query answers right (the damage is in a section no query of
#: 40 rows reads, or is well formed but inexact) and only fsck finds.
FSCK_ONLY = {"idmap-flip", "idmap-label-range", "idmap-label-swap",
             "idmap-group-count", "idmap-reserved", "aset-inexact",
             "apost-posting", "apost-missing-key", "apost-extra-key",
             "apost-popcount", "apost-granule-order", "apost-shift",
             "apost-run-bounds", "idtime-flip", "idtime-sample",
             "idtime-high-bits", "idtime-reserved", "apostw-range", "apostw-log2",
             "spost-stream", "spost-entry-size", "sspan-stream", "sspan-entry-size",
             "sruns-stream", "sruns-entry-size"}
#: Variants whose every segment is sound but whose store-level tables are
#: not: a stream missing from the newest segment's table, window parts that
#: do not continue. Only the stream / window tables read them.
STORE_TABLES = {"stream-not-in-newest": "streams", "window-parts-gap": "windows"}


S0, S1 = "seg-0000000000000000.mhs", "seg-0000000000000001.mhs"
DAMAGED = {name: "MANIFEST" for name in VARIANTS if name.startswith("manifest")}
DAMAGED.update({name: S0 for name in VARIANTS if not name.startswith("manifest")})
DAMAGED.update({"segment-header-flip": S1, "segment-truncated": S1, "segment-missing": S1})
# the whole store: a 1.0 MANIFEST names 2.0 segments (the first one reports it)
DAMAGED["manifest-major-1"] = S0


def corrupt(name):
    return os.path.join(GOLDEN, "corrupt", name + ".store")


def test_every_variant_is_listed():
    on_disk = {f[:-len(".store")] for f in os.listdir(os.path.join(GOLDEN, "corrupt"))}
    assert on_disk == set(VARIANTS) | VALID | SUMMARY_ONLY | FSCK_ONLY | set(STORE_TABLES)


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_corrupt_variant(name):
    at_open, at_scan = VARIANTS[name]
    if at_open is not None:
        with pytest.raises(memhist.Error) as ei:
            memhist.Reader(corrupt(name))
    else:
        with memhist.Reader(corrupt(name)) as r:
            with pytest.raises(memhist.Error) as ei:
                r.query(ops="rwx")
            with pytest.raises(memhist.Error) as ec:
                list(r.cursor(ops="rwx"))
            assert type(ec.value) is at_scan and ec.value.detail
    e = ei.value
    assert type(e) is (at_open or at_scan)
    assert e.code == type(e).code and e.name == lib.mh_error_name(e.code).decode()
    assert e.detail, "the library's error detail is missing"
    # The detail names the damaged file first, as fsck does.
    assert e.detail.startswith(DAMAGED[name] + ":"), e.detail
    assert e.name in str(e) and e.detail in str(e)
    v = memhist.verify(corrupt(name))
    assert not v.ok and v.problems
    assert e.name in [p.name for p in v.problems]


@pytest.mark.parametrize("name", sorted(VALID))
def test_valid_newer_minor(name):
    with memhist.Reader(corrupt(name)) as r:
        assert len(r.query(ops="rwx")) == 40
    assert memhist.verify(corrupt(name)).ok


@pytest.mark.parametrize("name", sorted(FSCK_ONLY))
def test_fsck_only_variant(name):
    with memhist.Reader(corrupt(name)) as r:
        assert len(r.query(ops="rwx")) == 40
    v = memhist.verify(corrupt(name))
    assert not v.ok and v.problems


def test_every_library_code_has_its_class():
    code = -1
    while lib.mh_error_name(code) != b"MH_UNKNOWN":
        cls = errors.BY_CODE.get(code)
        assert cls is not None, "no class for %s" % lib.mh_error_name(code)
        e = memhist.error(code, "d")
        assert type(e) is cls and e.name == lib.mh_error_name(code).decode()
        assert isinstance(e, memhist.Error)
        code -= 1
    assert code <= -15
    assert set(errors.BY_CODE) == set(range(code + 1, 0))


def test_open_errors(tmp_path):
    with pytest.raises(memhist.NotFoundError) as ei:
        memhist.Reader(str(tmp_path / "absent"))
    assert ei.value.detail
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "MANIFEST").write_bytes(b"not a manifest at all, really" * 4)
    with pytest.raises(memhist.NotStoreError):
        memhist.Reader(str(tmp_path / "junk"))
    with pytest.raises(memhist.NotFoundError):
        memhist.Writer(str(tmp_path / "absent"), mode="append")
    path = str(tmp_path / "s")
    memhist.Writer(path).close()
    with pytest.raises(memhist.ExistsError):
        memhist.Writer(path)
    with memhist.Writer(path, mode="append"):
        with pytest.raises(memhist.LockedError):
            memhist.Writer(path, mode="append")


def test_bad_query_arguments(tmp_path):
    path = str(tmp_path / "s")
    with memhist.Writer(path) as w:
        w.append_one(1, 0x100, 4, "w")
    r = memhist.Reader(path)
    for kw in ({"ops": "q"}, {"ops": ""}, {"ops": 0}, {"ops": 8}, {"ops": True},
               {"start": 1, "after": 2}, {"after": 1, "backward": True},
               {"until": 1, "to_id": 1}, {"start": -1}, {"max": -1},
               {"start": 1 << 64}, {"start": "3"}):
        with pytest.raises(memhist.InvalidArgumentError):
            r.query(**kw)
    # A > B is refused by the library itself: its code and detail come through.
    with pytest.raises(memhist.InvalidArgumentError) as ei:
        r.query(0x200, 0x100)
    assert ei.value.code == -3
    with pytest.raises(memhist.InvalidArgumentError):
        r.cursor(batch=0)
    r.close()
    r.close()
    with pytest.raises(memhist.InvalidArgumentError):
        r.query()


def test_bad_appends(tmp_path):
    path = str(tmp_path / "s")
    with pytest.raises(memhist.InvalidArgumentError):
        memhist.Writer(path, mode="sideways")
    with pytest.raises(memhist.InvalidArgumentError):
        memhist.Writer(path, no_such_option=1)
    with pytest.raises(memhist.InvalidArgumentError):
        memhist.Writer(path, block_accesses=-5)
    with pytest.raises(memhist.InvalidArgumentError):  # library range check
        memhist.Writer(path, block_accesses=3)
    good = Access(0, 5, 0, 0x100, 0, 4, 0, 1, 0, 0)
    with memhist.Writer(path) as w:
        w.append([good])
        batch = [good._replace(transition=6), good._replace(transition=6, size=0)]
        with pytest.raises(memhist.InvalidArgumentError) as ei:
            w.append(batch)
        assert "access 1" in ei.value.detail
        # A stream must be declared before its first access.
        with pytest.raises(memhist.NoStreamError):
            w.append([good._replace(stream=1)])
        for bad in (good._replace(has_pc=2, pc=7), good._replace(op=3),
                    good._replace(has_linear=2)):
            with pytest.raises(memhist.InvalidArgumentError):
                w.append([bad])
        with pytest.raises(memhist.OrderError):
            w.append([good._replace(transition=4)])
        with pytest.raises(memhist.InvalidArgumentError):
            w.append_one(7, 0x100, 4, "q")
        with pytest.raises(memhist.InvalidArgumentError):
            w.append([(1, 2, 3)])
        with pytest.raises(memhist.InvalidArgumentError):
            w.append({"transition": [7], "physical": [1]})  # size, op missing
        with pytest.raises(memhist.InvalidArgumentError):
            w.append({"transition": [7], "physical": [-1], "size": [1], "op": [0]})
        with pytest.raises(memhist.InvalidArgumentError):
            w.append({"transition": [7], "physical": [1], "size": [1 << 32], "op": [0]})
        assert w.next_id == 1  # nothing of a refused batch was taken
    with memhist.Reader(path) as r:
        assert len(r) == 1


@pytest.mark.parametrize("name", sorted(STORE_TABLES))
def test_store_table_variant(name):
    with memhist.Reader(corrupt(name)) as r:
        with pytest.raises(memhist.CorruptError) as ei:
            getattr(r, STORE_TABLES[name])()
        assert ei.value.detail
    # fsck reports the same line (src/verify_store.c)
    v = memhist.verify(corrupt(name))
    assert not v.ok
    assert ei.value.detail in ["%s: %s" % (p.file, p.message) for p in v.problems]


def test_stale_span_sets_after_repair(tmp_path):
    """A lost MANIFEST rebuilt while two empty segments were lost too: the
    span address sets after them are stale, reported as notes (code 0), and
    the store stays clean and whole (library 1.8.1)."""
    path = tmp_path / "s.store"
    t = 0
    with memhist.Writer(path, commit_accesses=0, background=0) as w:
        for seq in range(11):
            if seq in (2, 4):
                w.set_meta("empty", str(seq))  # a segment holding no access
            else:
                for i in range(300):
                    w.append_one(t, 0x100000 * (seq + 1) + (i % 30) * 8, 8, "r" if i % 3 else "w")
                    t += 1
            w.commit()
    for name in ("MANIFEST", "seg-0000000000000002.mhs", "seg-0000000000000004.mhs"):
        os.unlink(path / name)
    assert memhist.verify(path, repair=True).ok
    v = memhist.verify(path)
    assert v.ok and v.repaired == 0
    notes = [p for p in v.problems if p.code == 0]
    assert notes and all("is stale (not used)" in p.message for p in notes)
    assert len(notes) == len(v.problems)
    with memhist.Reader(path) as r:
        assert len(r.query(ops="rwx")) == t
        hits = r.query(0x600000, 0x600007, ops="w", max=3)
        phys = hits["physical"] if hasattr(hits, "dtype") else [a.physical for a in hits]
        assert len(hits) == 3 and all(int(p) == 0x600000 for p in phys)


def test_verify_threads(tmp_path):
    """verify(threads=N) checks the segments on N threads (library 1.10.0):
    the same problems in the same order whatever N; out of range is
    InvalidArgumentError."""
    path = tmp_path / "s.store"
    t = 0
    with memhist.Writer(path, commit_accesses=0, background=0) as w:
        for seq in range(5):
            for i in range(400):
                w.append_one(t, 0x200000 * (seq + 1) + (i % 50) * 8, 8, "r" if i % 4 else "w")
                t += 1
            w.commit()
    for seg in ("seg-0000000000000001.mhs", "seg-0000000000000003.mhs"):
        with open(path / seg, "r+b") as f:
            f.seek(300)
            b = f.read(1)
            f.seek(300)
            f.write(bytes([b[0] ^ 0xFF]))
    one = memhist.verify(path, threads=1)
    assert not one.ok and one.threads == 1 and one.segments == 5
    files = {p.file for p in one.problems}
    assert files == {"seg-0000000000000001.mhs", "seg-0000000000000003.mhs"}
    for n in (2, 3, 16):
        v = memhist.verify(path, threads=n)
        assert v.threads == min(n, 5)
        assert v.problems == one.problems
        assert (v.ok, v.accesses, v.bytes, v.segments) == \
            (one.ok, one.accesses, one.bytes, one.segments)
    assert memhist.verify(path).problems == one.problems
    for bad in (-1, 17, 1.5, True, "2"):
        with pytest.raises(memhist.InvalidArgumentError):
            memhist.verify(path, threads=bad)
