"nbdev's docs pre-processing without Quarto: refresh the Quarto config, build the module index, process every notebook into _proc/."
from pathlib import Path
from nbdev.config import get_config
from nbdev.quarto import refresh_quarto_yml
from nbdev.doclinks import _build_modidx
from nbdev.serve import proc_nbs

if __name__ == '__main__':
    cfg = get_config()
    refresh_quarto_yml()
    _build_modidx()
    proc_nbs(path=cfg.nbs_path, n_workers=2)
    n = len(list(Path('_proc').glob('*.ipynb')))
    assert n > 0, "no processed notebooks in _proc"
    print(f"processed {n} notebooks into _proc/")
