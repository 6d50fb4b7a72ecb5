#!/usr/bin/env python3
"""The longest functions of a Rust tree's non-test source, by lines.

Usage: scripts/longest-functions.py [--top N] ROOT...
  e.g. scripts/longest-functions.py crates/*/src

How it counts (no dependency beyond Python 3): comments, string literals
(plain, byte, raw `r#".."#`) and char literals are blanked first, keeping
the newlines; then every `fn NAME` whose signature (scanned to the first `{`
or `;` outside parentheses and brackets) opens a body is matched to its
closing brace. A function's length is the lines from the line of `fn` to the
line of its closing brace, both included (doc comments and attributes above
it are not counted; a nested fn counts inside its parent and on its own).
Left out as tests: any item after `#[cfg(test)]` (its braces matched, so a
test-only helper in the middle of a file goes and the rest stays), a file
whose `mod` is declared under `#[cfg(test)]` (`#[cfg(test)] mod properties;`),
and `#[test]` functions. `macro_rules!` bodies are scanned like code, so a
`fn` written inside a macro counts once, where it is written.

Prints the top N (default 10) per crate (the directory above `src`) and
overall, as `lines  crate  path:line  name`."""
import os, re, sys


def blank(text):
    """Text with comments, strings and char literals replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)

    def keep_newlines(s):
        return ''.join(c if c == '\n' else ' ' for c in s)

    while i < n:
        c = text[i]
        if text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i)); i = j
        elif text.startswith('/*', i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith('/*', j): depth += 1; j += 2
                elif text.startswith('*/', j): depth -= 1; j += 2
                else: j += 1
            out.append(keep_newlines(text[i:j])); i = j
        elif re.match(r'b?r#*"', text[i:i + 300]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == '_')):
            m = re.match(r'b?r(#*)"', text[i:])
            end = '"' + m.group(1)
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append(keep_newlines(text[i:j])); i = j
        elif c == '"' or (c == 'b' and text.startswith('b"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == '_'))):
            j = i + (2 if c == 'b' else 1)
            while j < n and text[j] != '"':
                j += 2 if text[j] == '\\' else 1
            j += 1
            out.append(keep_newlines(text[i:j])); i = j
        elif c == "'":
            # A char literal ('x', '\n', '\u{1F600}', b'x' handled by the same
            # rule) or a lifetime ('a, 'static): a literal closes with ' soon.
            m = re.match(r"'(\\(x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]{1,6}\}|.)|[^\\'\n])'", text[i:i + 12])
            if m:
                out.append(' ' * m.end()); i += m.end()
            else:
                out.append(c); i += 1
        else:
            out.append(c); i += 1
    return ''.join(out)


def match_brace(code, i):
    """Index of the `}` closing the `{` at i."""
    depth = 0
    for j in range(i, len(code)):
        if code[j] == '{': depth += 1
        elif code[j] == '}':
            depth -= 1
            if depth == 0: return j
    return len(code) - 1


def item_end(code, i):
    """From i (just after an attribute), where the item ends: `;` or its matching `}`; and which."""
    paren = 0
    j = i
    while j < len(code):
        ch = code[j]
        if ch in '([': paren += 1
        elif ch in ')]': paren -= 1
        elif paren == 0 and ch == ';': return j, ';'
        elif paren == 0 and ch == '{': return match_brace(code, j), '{'
        j += 1
    return len(code) - 1, ';'


def analyse(path):
    text = open(path, encoding='utf-8').read()
    code = blank(text)
    line_of = lambda k: code.count('\n', 0, k) + 1
    test_spans, test_mods = [], []
    for m in re.finditer(r'#\[\s*cfg\s*\(\s*test\s*\)\s*\]', code):
        end, kind = item_end(code, m.end())
        test_spans.append((m.start(), end))
        if kind == ';':
            mm = re.search(r'\bmod\s+(\w+)\s*$', code[m.end():end])
            if mm: test_mods.append(mm.group(1))
    for m in re.finditer(r'#\[\s*test\s*\]', code):
        end, _ = item_end(code, m.end())
        test_spans.append((m.start(), end))
    fns = []
    for m in re.finditer(r'\bfn\s+(r#)?([A-Za-z_]\w*)', code):
        if any(a <= m.start() <= b for a, b in test_spans): continue
        end, kind = item_end(code, m.end())
        if kind != '{': continue
        fns.append((line_of(end) - line_of(m.start()) + 1, line_of(m.start()), m.group(2)))
    return fns, test_mods


def module_files(src):
    """The .rs files under src, less those whose module is declared under #[cfg(test)]."""
    files = []
    for dp, _, fs in os.walk(src):
        for f in fs:
            if f.endswith('.rs'): files.append(os.path.join(dp, f))
    results, excluded = {}, set()
    for p in files:
        fns, test_mods = analyse(p)
        results[p] = fns
        base = os.path.dirname(p) if os.path.basename(p) in ('mod.rs', 'lib.rs', 'main.rs') else p[:-3]
        for name in test_mods:
            excluded.add(os.path.join(base, name + '.rs'))
            excluded.add(os.path.join(base, name))
    keep = {}
    for p, fns in results.items():
        if any(p == e or p.startswith(e + os.sep) for e in excluded): continue
        keep[p] = fns
    return keep


def main():
    args = sys.argv[1:]
    top = 10
    if args[:1] == ['--top']:
        top = int(args[1]); args = args[2:]
    rows = []
    for src in args:
        crate = os.path.basename(os.path.dirname(os.path.abspath(src)))
        for p, fns in module_files(src).items():
            for length, line, name in fns:
                rows.append((length, crate, f'{os.path.relpath(p)}:{line}', name))
    crates = sorted({r[1] for r in rows})
    for crate in crates + [None]:
        sel = sorted((r for r in rows if crate is None or r[1] == crate), key=lambda r: (-r[0], r[2]))
        print(f'== {crate or "overall"}: {len(sel)} functions, top {top}')
        for r in sel[:top]:
            print(f'{r[0]:5d}  {r[1]:20s} {r[2]}  {r[3]}')
        print()


if __name__ == '__main__':
    main()
