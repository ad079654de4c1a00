"Write README.md from nbs/index.ipynb where Quarto (and so `nbdev-readme`) is not available."
import json, re, sys, pathlib
root = pathlib.Path(__file__).resolve().parent.parent
nb = json.loads((root/'nbs'/'index.ipynb').read_text())
out = []
for c in nb['cells']:
    src = ''.join(c['source'])
    if c['cell_type'] == 'markdown':
        src = re.sub(r'\A(?:#\|.*\n)+', '', src)  # a cell's directives (`#| export`: the pitch exported as the docstring)
        src = re.sub(r'^> (.*)$', r'> \1', src, flags=re.M)
        out.append(src.replace('```{mermaid}', '```mermaid'))  # Quarto's fence, GitHub's fence
    elif c['cell_type'] == 'code' and not src.lstrip().startswith('#|'):
        out.append('```python\n' + src + '\n```')
text = '\n\n'.join(out).rstrip() + '\n'
text = '<!-- generated from nbs/index.ipynb: edit the notebook, not this file -->\n\n' + text
dest = root/'README.md'
if '--check' in sys.argv:
    if not dest.exists() or dest.read_text() != text: sys.exit('README.md is out of date: run python .ci/readme.py')
else: dest.write_text(text)
