"""Brute-force answers to memhist queries, in plain Python, over a list of
Access tuples whose index is their id: what the library must return."""
U64_MAX = (1 << 64) - 1


def rows(result):
    """A query result (numpy array or Access list) as a list of plain tuples
    in Access field order, for comparing with the oracle."""
    from memhist import Access
    if isinstance(result, list):
        return [tuple(a) for a in result]
    cols = [result[f].tolist() for f in Access._fields]
    return list(zip(*cols))


def start_at(i, a):
    """The start of random query i, at access a: the four kinds in turn
    (from its transition forward, backward, after its id, before it)."""
    how = i % 4
    if how == 0:
        return {"start": a.transition}
    if how == 1:
        return {"start": a.transition, "backward": True}
    if how == 2:
        return {"after": a.id}
    return {"before": a.id}


def oracle(acc, first=0, last=U64_MAX, *, start=None, after=None, before=None,
           backward=False, ops="rw", max=None, until=None, to_id=None,
           streams=None, pc=None, window=None, win_of=None):
    """win_of: the window id of each access (None outside windows), by id;
    needed with window=."""
    mask = ops if isinstance(ops, int) else sum({"r": 1, "w": 2, "x": 4}[c] for c in ops)
    sset = None if streams is None else set(streams)

    def match(a):
        if sset is not None and a.stream not in sset:
            return False
        if pc is not None and not (a.has_pc and pc[0] <= a.pc <= pc[1]):
            return False
        if window is not None and win_of[a.id] != window:
            return False
        return (mask >> a.op) & 1 and a.physical <= last and a.physical + a.size - 1 >= first

    if after is not None:
        seq, fwd = acc[after + 1:] if after < len(acc) else [], True
    elif before is not None:
        seq, fwd = acc[:min(before, len(acc))][::-1], False
    elif backward:
        t = U64_MAX if start is None else start
        seq, fwd = [a for a in acc if a.transition <= t][::-1], False
    else:
        t = 0 if start is None else start
        seq, fwd = [a for a in acc if a.transition >= t], True
    out = []
    if max == 0:
        return out
    for a in seq:
        if until is not None and (a.transition > until if fwd else a.transition < until):
            break
        if to_id is not None and (a.id > to_id if fwd else a.id < to_id):
            break
        if match(a):
            out.append(tuple(a))
            if max is not None and len(out) == max:
                break
    return out
