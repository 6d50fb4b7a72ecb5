#!/usr/bin/env python3
"""Module dependency cycles of a crate: every `crate::`, `super::` and `self::`
path (in `use` lines and in code, `use` groups expanded), resolved to the
longest module it names; cycles = strongly connected components of more than
one module. Code after `#[cfg(test)]` in a file is left out.

Usage: scripts/import-cycles.py crates/toolbridge-gateway/src
(issue 24 counts cycles with it; no maintained tool does this without a
nightly-only `cargo modules` install)."""
import os, re, sys
root = sys.argv[1]
mods = {}
for dp, _, fs in os.walk(root):
    for f in fs:
        if not f.endswith('.rs'): continue
        p = os.path.join(dp, f); rel = os.path.relpath(p, root)[:-3].split(os.sep)
        if rel[-1] in ('mod', 'lib', 'main'): rel = rel[:-1]
        mods['::'.join(rel)] = p
def paths(text):
    """Yield each path after crate::/super::/self:: as a list of segments, groups expanded."""
    out = []
    for m in re.finditer(r'\b(crate|super|self)::', text):
        # The second `super::` of `super::super::` is part of the first path.
        if text[max(0, m.start() - 2):m.start()] == '::': continue
        i = m.end(); base = [m.group(1)]
        def tree(i, prefix):
            segs = list(prefix)
            while True:
                while i < len(text) and text[i].isspace(): i += 1
                if i < len(text) and text[i] == '{':
                    i += 1
                    while True:
                        i = tree(i, segs)
                        while i < len(text) and text[i] in ' \n\t\r': i += 1
                        if i < len(text) and text[i] == ',': i += 1; continue
                        if i < len(text) and text[i] == '}': return i + 1
                        return i
                w = re.match(r'[A-Za-z_][A-Za-z0-9_]*', text[i:])
                # A group's trailing comma leaves nothing before its `}`:
                # no path (it would be an edge to the group's prefix).
                if not w:
                    if len(segs) > len(prefix): out.append(segs)
                    return i
                segs = segs + [w.group(0)]; i += w.end()
                if text[i:i+2] == '::': i += 2; continue
                out.append(segs); return i
        tree(i, base)
    return out
edges = {m: set() for m in mods}
for m, p in mods.items():
    text = open(p).read()
    cut = text.find('#[cfg(test)]')
    if cut >= 0: text = text[:cut]
    text = re.sub(r'//[^\n]*', '', text)
    here = m.split('::') if m else []
    for segs in paths(text):
        cur = []
        k = 0
        while k < len(segs) and segs[k] in ('crate', 'super', 'self'):
            if segs[k] == 'crate': cur = []
            elif segs[k] == 'super': cur = (cur if k else here)[:-1]
            else: cur = here if k == 0 else cur
            k += 1
        rest = segs[k:]
        best = '::'.join(cur)
        for j in range(1, len(rest) + 1):
            cand = '::'.join(cur + rest[:j])
            if cand in mods: best = cand
        if best != m and best in mods: edges[m].add(best)
# Tarjan
idx = {}; low = {}; st = []; on = set(); sccs = []; c = [0]
sys.setrecursionlimit(10000)
def sc(v):
    idx[v] = low[v] = c[0]; c[0] += 1; st.append(v); on.add(v)
    for w in edges[v]:
        if w not in idx: sc(w); low[v] = min(low[v], low[w])
        elif w in on: low[v] = min(low[v], idx[w])
    if low[v] == idx[v]:
        comp = []
        while True:
            w = st.pop(); on.discard(w); comp.append(w)
            if w == v: break
        sccs.append(comp)
for v in mods:
    if v not in idx: sc(v)
cyc = [sorted(s) for s in sccs if len(s) > 1]
print(f"modules {len(mods)}, edges {sum(len(e) for e in edges.values())}, cycles (SCCs >1) {len(cyc)}")
for s in sorted(cyc, key=len, reverse=True):
    print(f"  {len(s)}: {' '.join(s)}")
if len(sys.argv) > 2:
    pre = sys.argv[2]
    sub = [m for m in mods if m == pre or m.startswith(pre + '::')]
    print(f"edges among {pre}*: ", sorted((a, b) for a in sub for b in edges[a] if b in sub))
if os.environ.get('SHOW'):
    for a in os.environ['SHOW'].split(','):
        print(a, '->', sorted(edges[a]))
        print(a, '<-', sorted(b for b in mods if a in edges[b]))
