#!/usr/bin/env python3
"""The toolbridge functions and source files one run crossed, from callgrind.

Usage: scripts/call-path-functions.py PREFIX callgrind.out... [--idle IDLE.out] [--list]
  PREFIX: the tree's crates folder as the debug info names it, e.g. $PWD/crates/

Issue 24 counts how much code one tool call crosses. Measure a debug build
(line tables are enough), for instance:
  CLI:      valgrind --tool=callgrind --callgrind-out-file=cli.out \
              target/debug/toolbridge call example echo --args '{"text":"hi"}'
            (after one warm-up call; the server child is not traced)
  gateway:  valgrind --tool=callgrind --callgrind-out-file=gw.out target/debug/toolbridge serve ...
            one warm-up tools/call, `callgrind_control -z PID`, the measured
            tools/call, `callgrind_control -d PID` (gw.out.1); then -z, a few
            idle seconds, -d (gw.out.2) and pass `--idle gw.out.2` to leave
            out what runs in the background anyway (the process scanner).
A stdio server's sandbox needs Landlock, which valgrind does not emulate
(syscall 444): measure with `"sandbox": false` in the server's entry.

Counts the functions with a nonzero cost whose `fl=` file lies under PREFIX,
three ways: symbols (demangled name, `::h<hash>` cut, so the
monomorphisations of one generic fn are one); source functions (also every
`{{closure}}` segment cut, so an async fn's state machine and its closures
count with the fn); hand-written (source functions less the trait impls
derives write: clap, serde, Debug, Clone, Default, PartialEq, Hash; and the
global allocator's shims)."""
import re, sys, collections

prefix = sys.argv[1]
args = sys.argv[2:]
idle = None
if '--idle' in args:
    i = args.index('--idle'); idle = args[i + 1]; del args[i:i + 2]
files = [a for a in args if not a.startswith('--')]
show = '--list' in sys.argv
names = {'fl': {}, 'fn': {}, 'fi': {}, 'fe': {}, 'cfl': {}, 'cfn': {}, 'ob': {}, 'cob': {}, 'cfi': {}}


def name(kind, value):
    # Compressed strings: "(id) name" defines, "(id)" refers.
    table = names['fl'] if kind in ('fl', 'fi', 'fe', 'cfl', 'cfi') else names['fn'] if kind in ('fn', 'cfn') else names['ob']
    m = re.match(r'\((\d+)\)(?: (.*))?$', value)
    if not m: return value
    if m.group(2) is not None: table[m.group(1)] = m.group(2)
    return table.get(m.group(1), value)


def load(files):
  cost = collections.Counter()
  for path in files:
      for t in names.values(): t.clear()
      fl = fn = None
      skip_next = False
      for line in open(path, errors='replace'):
          line = line.rstrip('\n')
          m = re.match(r'^(fl|fi|fe|fn|cfl|cfi|cfn|ob|cob)=(.*)$', line)
          if m:
              k, v = m.groups(); v = name(k, v)
              if k == 'fl': fl = v
              elif k == 'fn': fn = v
              continue
          if line.startswith('calls='):
              skip_next = True; continue
          if line and (line[0].isdigit() or line[0] in '+-*'):
              if skip_next: skip_next = False; continue
              parts = line.split()
              if len(parts) >= 2 and fn is not None:
                  try: c = int(parts[1])
                  except ValueError: continue
                  cost[(fl, fn)] += c

  return cost

def clean(sym):
    return re.sub(r'::h[0-9a-f]{16}$', '', sym)

def source_fn(sym):
    return re.sub(r'(::)?\{\{closure\}\}', '', clean(sym))

def ours_of(cost):
    return {(fl, clean(fn)) for (fl, fn), c in cost.items() if c > 0 and fl and fl.startswith(prefix)}
ours = ours_of(load(files))
if idle:
    background = ours_of(load([idle]))
    print(f'idle window: {len(background)} symbols in {len({fl for fl, _ in background})} files; left out')
    ours -= background
fls = sorted({fl for fl, _ in ours})
srcs = {(fl, source_fn(fn)) for fl, fn in ours}
gen = re.compile(r'clap_builder::derive|serde::de::|serde::ser::|__FieldVisitor|__Visitor|__Field|_::<impl|core::fmt::Debug>::fmt|core::clone::Clone>::clone|core::cmp::Partial|core::default::Default>::default|core::hash::Hash>|^__rustc::')
hand = {(fl, fn) for fl, fn in srcs if not gen.search(fn)}
print(f'files {len(fls)}  symbols {len(ours)}  source-functions {len(srcs)}  '
      f'hand-written (no derive/alloc shim) {len(hand)} in {len({fl for fl, _ in hand})} files')
by_file = collections.Counter(fl for fl, _ in srcs)
for fl in fls:
    print(f'  {by_file[fl]:4d}  {fl[len(prefix):]}')
if show:
    for fl, fn in sorted(srcs):
        print(f'    {fl[len(prefix):]}  {fn}')
