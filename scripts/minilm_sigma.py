"""Kernel std against the teacher-forced transition error of the CoLA-MiniLM kernels (seed 0), on 128 validation sentences.

Reads the checkpoints of earlier CoLA-MiniLM runs under $BENCH_CK (default runs/ckpt): the MSE kernel (tag _lk2f),
the Gaussian-NLL kernel with the raw-GELU std head (lk2fkl) and with a softplus head (lk2fklsp). Quoted on the CoLA page.
"""
import os, torch, numpy as np
from pathlib import Path
CK = Path(os.environ.get('BENCH_CK', Path(__file__).resolve().parents[1]/'runs'/'ckpt'))/'cola-minilm'/'seed0'
torch.set_num_threads(1)
from director.bench.recipes import minilm_classifier
from director.bench.harness import _unwrap
from director.data import load_cola, load_tokenizer, data_loaders
from director.repartition import adapt
from director.model import Director
from director.traces import teacher_traces
tok = load_tokenizer(); splits = load_cola(seed=0, max_length=64)
loaders = data_loaders(splits, bs=128, seed=0, tokenizer=tok)
m = minilm_classifier(); m.hf.load_state_dict(torch.load(CK/'backbone.pt', map_location='cpu', weights_only=True)); m.eval()
ad = adapt(_unwrap(m), last_k=2)
batch = next(iter(loaders['valid']))
x = batch[0] if isinstance(batch, (list, tuple)) else batch
tr = teacher_traces(ad, x)
xs = torch.stack(list(tr.xs)); mask = tr.ctx.get("mask")
for tag in ['_lk2f', 'lk2fkl', 'lk2fklsp']:
    d = Director.load(CK/f'director{tag}', adapter=ad).eval()
    with torch.no_grad(): mus, sig = d.teacher_forced(xs, tr.ctx)
    real = mask if mask is not None else torch.ones(xs.shape[1:3], dtype=torch.bool)
    sel = real[None, :, :, None].expand_as(mus)
    r = (xs[1:] - mus).abs()[sel]; s = sig.abs()[sel]
    print(tag, 'resid mean %.3f | sigma mean %.3f median %.4f frac<0.01 %.2f | state rms %.2f | mean |r|/sigma %.1f' % (
        r.mean(), s.mean(), s.median(), (s < 0.01).float().mean(), xs[1:][sel].pow(2).mean().sqrt(), (r / s.clamp_min(1e-3)).mean()))
