"""Why does KEP-SVGP not learn on IMDB in the 4-epoch CPU recipe? (diagnostic, not a library method)

For each seed whose KEP-SVGP backbone `director bench imdb --methods kep_svgp --epochs 4 --max-len 128 --train-subset 10000
--ckpt-dir runs/bench/imdb` saved (seed<k>/kep_svgp/backbone.pt), and for the same architecture freshly initialised, it runs the
first --n test reviews (128 WordPiece tokens) through the encoder in eval mode (one posterior sample, as at training) and records:
the two regulariser terms of the KEP-SVGP layer (the KL of its variational posterior, unscaled as in the KEP-SVGP code, and the
KSVD term before its weight), the mean cross-entropy, the spread of p(positive) over the reviews (how much the prediction depends
on the input at all), the test accuracy on them, and the size of the residual stream entering the KEP-SVGP block against the
size of that block's attention output (its mean and its sampled noise). Writes results/kep-imdb-diagnostic.json (quoted on the
IMDB page).
"""
import os, json, argparse
from pathlib import Path
import numpy as np
import torch
torch.set_num_threads(int(os.environ.get('OMP_NUM_THREADS', '1')))
import torch.nn.functional as F
from director.core import atomic_write, git_commit, seed_everything
from director.data import load_imdb, data_loaders, TextSet
from director.backbones import imdb_transformer, bert_tokenizer
from director.train import load_backbone

def measure(m, dl):
    m.eval(); blk = m.blocks[-1]; att, st = blk.attn, {}
    h = blk.register_forward_pre_hook(lambda mod, inp: st.__setitem__('x', inp))
    P, Y, ce, xr, mr, nr, kl, ksvd = [], [], [], [], [], [], [], []
    with torch.no_grad():
        for xb, yb in dl:
            lg = m(xb); P.append(lg.softmax(-1)[:, 1]); Y.append(yb); ce.append(F.cross_entropy(lg, yb).item())
            x, mask = st['x'][0], st['x'][1] if len(st['x']) > 1 else None
            s, mean, _ = att.forward_stats(blk.norm1(x), mask)
            w = (mask if mask is not None else torch.ones(x.shape[:2], dtype=torch.bool))[..., None].float()
            rms = lambda t: float(((t.pow(2) * w).sum() / (w.sum() * t.shape[-1])).sqrt())
            xr.append(rms(x)); mr.append(rms(mean)); nr.append(rms(s - mean)); kl.append(float(att.last_kl)); ksvd.append(float(att.last_ksvd))
    h.remove()
    p, y = torch.cat(P).numpy(), torch.cat(Y).numpy()
    return dict(acc=float(((p > .5) == y).mean()), ce=float(np.mean(ce)), p_pos_mean=float(p.mean()), p_pos_std=float(p.std()),
                p_pos_range=[float(np.quantile(p, .01)), float(np.quantile(p, .99))], kl=float(np.mean(kl)), ksvd=float(np.mean(ksvd)),
                residual_rms=float(np.mean(xr)), attn_mean_rms=float(np.mean(mr)), attn_noise_rms=float(np.mean(nr)))

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--ckpt-dir', default='runs/bench/imdb'); ap.add_argument('--data', default=None)
    ap.add_argument('--n', type=int, default=1000); ap.add_argument('--out', default='results/kep-imdb-diagnostic.json')
    a = ap.parse_args()
    sp = load_imdb(a.data, max_length=128)
    te = sp['test']; te = TextSet(te.texts[:a.n], np.asarray(te.labels)[:a.n], te.variant, dict(te.meta), te.max_length)
    dl = data_loaders({'test': te}, bs=50, seed=0)['test']
    tok = bert_tokenizer(); seed_everything(0)
    res = dict(init=measure(imdb_transformer(tok.vocab_size, pad_id=tok.pad_token_id, attn='kep_svgp', gp_layers=1), dl))
    for f in sorted(Path(a.ckpt_dir).glob('seed*/kep_svgp/backbone.pt')):
        seed_everything(0); res[f.parent.parent.name] = measure(load_backbone(f), dl)
    for k, v in res.items(): print(k, {n: (round(x, 5) if isinstance(x, float) else x) for n, x in v.items()})
    rec = dict(what=__doc__.splitlines()[0], n_test=a.n, max_len=128, commit=git_commit(), results=res)
    with atomic_write(a.out, 'w') as fh: json.dump(rec, fh, indent=1)

if __name__ == '__main__': main()
