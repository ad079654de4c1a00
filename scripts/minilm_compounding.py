"""Diagnostic behind the CoLA results page: how far can an all-6-block DIRECTOR kernel of the fine-tuned MiniLM-L6 roll out?

Loads a seed's fine-tuned backbone (runs/ckpt/cola-minilm/seed<k>/backbone.pt, saved by an earlier run) and the
best checkpoint of an all-block distillation (director_v2_ck/best.pt), then, for k = 0..6, runs the teacher up to
X_{6-k} and the kernel's mean (no noise) for the last k steps, and scores the head on the validation slice.
"""
import os, sys
from pathlib import Path
import torch
torch.set_num_threads(int(os.environ.get('OMP_NUM_THREADS', '1')))
from director.bench.recipes import minilm_classifier
from director.repartition import adapt
from director.model import Director
from director.train import DistillConfig, load_checkpoint
from director.loss import loss_weights
from director.data import load_cola, data_loaders, load_tokenizer
from director.metrics import mcc

seed = int(sys.argv[1]) if len(sys.argv) > 1 else 0
ck = Path(os.environ.get('BENCH_CK', Path(__file__).resolve().parents[1]/'runs'/'ckpt'))/'cola-minilm'/f'seed{seed}'
m = minilm_classifier(); m.hf.load_state_dict(torch.load(ck/'backbone.pt', weights_only=True)); m.eval()
ad = adapt(m.hf)
st = load_checkpoint(ck/'director_v2_ck'/'best.pt')
d = Director.from_adapter(ad, kernel_cfg=DistillConfig(heads=12, mlp_ratio=1.0, **loss_weights('cola_softmax')).kernel_config(ad.dim, ad.n_steps, 12))
d.load_state_dict({k.removeprefix('director.'): v for k, v in st['model'].items()}); d.eval()
dl = data_loaders(load_cola(seed=0), bs=32, seed=0, tokenizer=load_tokenizer())
res, ys, teach = {k: [] for k in range(7)}, [], []
with torch.no_grad():
    for i, (b, y) in enumerate(dl['valid']):
        if i >= 8: break  # 256 validation sentences
        tr = ad.traces(b); _, c = d.embed(b); ys.append(y); teach.append(tr.logits.softmax(-1))
        for k in range(7):
            X = tr.xs[6 - k]
            for t in range(7 - k, 7): X = d.transition(X, t, c)[0]
            res[k].append(d.head(X, c).softmax(-1))
y = torch.cat(ys)
print('teacher', 'mcc', round(float(mcc(torch.cat(teach), y)), 3))
for k, v in res.items():
    p = torch.cat(v)
    print(f'kernel on the last {k} steps', 'mcc', round(float(mcc(p, y)), 3), 'acc', round((p.argmax(-1) == y).float().mean().item(), 3),
          'share predicted acceptable', round(p.argmax(-1).float().mean().item(), 3))
