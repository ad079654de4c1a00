"""Checks of what the documentation shows, on the notebooks as committed (their stored outputs), without running them.

Fails (exit 1), naming the notebook, the cell id and the problem, when a stored output holds
- an error output or a traceback,
- a stderr stream that contains 'Warning',
- an absolute temporary path (/tmp/ or /var/folders/),
- a progress bar (tqdm-like `NN%|`);
and when a page has no title (its first markdown cell starts with '# ') or no description (a '> ' line right after
the title); and when a shown code line (of a cell the page shows) runs over 120 characters.

Usage: python .ci/docs_check.py [NOTEBOOK_OR_FOLDER ...]   (default: every notebook under nbs/, hidden folders skipped)
"""
import json, re, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_LINE = 120
TMP_RE = re.compile(r'(?:^|(?<=[^\w.~-])|(?<=/private))(/tmp/|/var/folders/)')  # absolute only: not 'runs/tmp/x', '~/tmp/'
BAR_RE = re.compile(r'\b\d{1,3}%\|')  # tqdm: ' 45%|████▌     | 9/20'
TEXT_TYPES = ('text/plain', 'text/html', 'text/markdown', 'text/latex', 'application/javascript')
HIDDEN_CODE = {'hide', 'export', 'exporti', 'default_exp'}  # nbdev removes these cells' source from the page
DIRECTIVE_RE = re.compile(r'^\s*#\|\s*([\w-]+)\s*:?\s*(.*?)\s*$')


def _text(v) -> str: return ''.join(v) if isinstance(v, list) else (v or '')


def notebooks(args: list) -> list:
    "The notebooks named (files or folders), or every notebook under nbs/; hidden folders and checkpoints are skipped."
    roots = [Path(a) for a in args] or [ROOT/'nbs']
    out = []
    for r in roots:
        if r.is_file(): out.append(r); continue
        out += [p for p in sorted(r.rglob('*.ipynb')) if not any(part.startswith('.') for part in p.relative_to(r).parts)]
    return out


def directives(src: str) -> dict:
    "nbdev directives (`#| name: value`) at the top of a code cell."
    d = {}
    for line in src.splitlines():
        if not line.strip(): continue
        m = DIRECTIVE_RE.match(line)
        if not m: break
        d[m[1]] = m[2].lower()
    return d


def shown_lines(cell) -> list:
    "The code lines a page shows for `cell` (none for hidden, exported or echo: false cells; directive lines removed)."
    if cell.get('cell_type') != 'code': return []
    src = _text(cell.get('source'))
    d = directives(src)
    if d.keys() & HIDDEN_CODE or d.get('echo') == 'false' or d.get('include') == 'false': return []
    return [l for l in src.splitlines() if not DIRECTIVE_RE.match(l) and not re.search(r'#\|\s*hide_line\s*$', l)]


def output_problems(out: dict) -> list:
    "What is wrong with one stored output."
    kind, probs = out.get('output_type'), []
    if kind == 'error':
        return [f"error output ({out.get('ename', '?')}: {_text(out.get('evalue'))[:80]})"]
    texts = []
    if kind == 'stream':
        t = _text(out.get('text')); texts.append(t)
        if out.get('name') == 'stderr' and 'Warning' in t:
            line = next((l for l in t.splitlines() if 'Warning' in l), '')
            probs.append(f"warning on stderr: {line.strip()[:100]!r}")
    else:
        texts += [_text(v) for k, v in (out.get('data') or {}).items() if k in TEXT_TYPES]
    for t in texts:
        if 'Traceback (most recent call last)' in t: probs.append('traceback in the output')
        if m := TMP_RE.search(t):
            line = next(l for l in t.splitlines() if TMP_RE.search(l))
            probs.append(f"temporary path {m[1]}…: {line.strip()[:100]!r}")
        if BAR_RE.search(t):
            line = next((l for l in re.split(r'[\r\n]', t) if BAR_RE.search(l)), '')
            probs.append(f"progress bar: {line.strip()[:80]!r}")
    return probs


def page_problems(cells: list) -> list:
    "A missing title or description."
    md = next((c for c in cells if c.get('cell_type') == 'markdown'), None)
    lines = [l for l in _text(md.get('source')).splitlines() if l.strip()] if md else []
    if not lines or not lines[0].startswith('# '): return ["no title: the first markdown cell must start with '# '"]
    rest = lines[1:]
    if not rest:  # the description may open the next cell
        i = cells.index(md)
        nxt = cells[i + 1] if i + 1 < len(cells) else None
        rest = [l for l in _text(nxt.get('source')).splitlines() if l.strip()] if nxt and nxt.get('cell_type') == 'markdown' else []
    if not rest or not rest[0].startswith('> '): return ["no description: a '> ' line must follow the title"]
    return []


def check(nb_path: Path) -> tuple:
    "(failures as (cell id, problem), count of shown code lines over MAX_LINE) of one notebook."
    try: nb = json.loads(nb_path.read_text(encoding='utf-8'))
    except (OSError, ValueError) as e: return [('-', f'cannot read the notebook: {e}')], 0
    cells, fails, long = nb.get('cells', []), [], 0
    fails += [('-', p) for p in page_problems(cells)]
    for i, c in enumerate(cells):
        cid = c.get('id') or f'#{i}'
        for o in c.get('outputs', []) or []:
            fails += [(cid, p) for p in output_problems(o)]
        over = [l for l in shown_lines(c) if len(l) > MAX_LINE]
        long += len(over)
        fails += [(cid, f'a shown code line of {len(l)} characters (over {MAX_LINE}): {l[:60]!r}...') for l in over]
    return fails, long


def main(args: list) -> int:
    nbs = notebooks(args)
    if not nbs: print('docs check: no notebooks found'); return 1
    n_fail, longs = 0, {}
    for p in nbs:
        fails, long = check(p)
        name = p.resolve().relative_to(ROOT) if p.resolve().is_relative_to(ROOT) else p
        for cid, prob in fails: print(f"{name}: cell {cid}: {prob}")
        n_fail += bool(fails)
        if long: longs[str(name)] = long
    if longs:
        print(f"\nshown code lines over {MAX_LINE} characters (each a problem above):")
        for n, k in sorted(longs.items(), key=lambda t: -t[1]): print(f"  {k:4d}  {n}")
    print(f"\ndocs check: {len(nbs)} notebooks, {n_fail} with problems")
    return 1 if n_fail else 0


if __name__ == '__main__': sys.exit(main(sys.argv[1:]))
