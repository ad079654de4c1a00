"""CPU driver for CIFAR-10 (JPEG copy) + regenerated CIFAR-10-C + Fashion-MNIST OOD, built from director.bench pieces.

Per-epoch checkpoints and resume for both stages; records in <repo>/results/cifar10 and results/cifar10c,
predictive probabilities (float16) in results/cifar10/preds.
"""
import os, sys, time, json, argparse, gc
from pathlib import Path
from types import SimpleNamespace
import numpy as np
import torch
torch.set_num_threads(int(os.environ.get('OMP_NUM_THREADS', '1')))
from director.core import seed_everything
from director.bench import (fit_method, predict_split, _scores, _baseline_predict, n_params, make_record, save_record, cifar_loaders, DeviceImageLoader, CIFAR_RECIPES)
from director.backbones import PaperViT
from director.data import load_cifar10, load_cifar10c, load_ood, CORRUPTIONS
from director.repartition import adapt
from director.model import Director
from director.loss import loss_weights
from director.metrics import evaluate
from director.baselines import DeepEnsemble
from director.train import TrainConfig, DistillConfig, train_backbone, distill, save_backbone, load_backbone

REPO = Path(__file__).resolve().parents[1]; RES = Path(os.environ.get('BENCH_RES', REPO/'results')); CK = Path(os.environ.get('BENCH_CK', REPO/'runs'/'ckpt'))
p = argparse.ArgumentParser()
p.add_argument('--seed', type=int, default=0)
p.add_argument('--epochs', type=int, required=True)
p.add_argument('--distill-epochs', type=int, required=True)
p.add_argument('--methods', nargs='+', default=['mle', 'ts', 'laplace', 'director', 'director_s1', 'mc_dropout'])
p.add_argument('--c-n', type=int, default=1000, help='test images per corruption and severity (class-balanced subset)')
p.add_argument('--c-methods', nargs='+', default=['mle', 'ts', 'laplace', 'director', 'director_s1', 'mc_dropout'])
p.add_argument('--c-corruptions', nargs='+', default=list(CORRUPTIONS))
p.add_argument('--bs', type=int, default=128)
p.add_argument('--l1', choices=['mse', 'kl'], default='mse', help="DIRECTOR transition loss: the authors' MSE (default) or the Gaussian NLL")
p.add_argument('--select', choices=['acc', 'nll'], default='acc', help='validation metric of the DIRECTOR checkpoint')
p.add_argument('--distill-warmup', type=int, default=CIFAR_RECIPES['cpu']['distill_warmup'],
               help="warm-up epochs of the distillation, the first at lr 0 (default: the cpu recipe's, 0; the director_e6 run used 1)")
p.add_argument('--ensemble', type=int, nargs='+', default=None,
               help="seeds whose trained backbones form a deep ensemble (mean of probabilities; no training): test, OOD and --c-corruptions")
p.add_argument('--tag', default='', help='suffix of the DIRECTOR checkpoint folder (a second distillation)')
p.add_argument('--no-augment', action='store_true', help='train the backbone and distil without crop+flip (an overfitting ablation; use its own BENCH_CK and BENCH_RES)')
a = p.parse_args()
seed, S = a.seed, 10
def log(*x): print(time.strftime('%H:%M:%S'), *x, flush=True)
R = CIFAR_RECIPES['cpu']['backbone']
splits = load_cifar10(augment=False); oodset = load_ood('fashion_mnist')
loaders = cifar_loaders(splits, a.bs, seed, 'cpu', oodset, augment=not a.no_augment)
ood_key = oodset.meta.get('dataset', 'ood')
tcfg = TrainConfig(epochs=a.epochs, lr=1e-3 * a.bs / 128, wd=5e-5, warmup_epochs=min(1, a.epochs - 1), min_lr=1e-5, bs=a.bs, device='cpu', progress=False)
dcfg = DistillConfig(epochs=a.distill_epochs, lr=1e-3 * a.bs / 128, wd=5e-5, warmup_epochs=a.distill_warmup, min_lr=1e-5, bs=a.bs,
                     heads=R['heads'], mlp_ratio=1.0, **loss_weights('cifar_softmax'), device='cpu', progress=False, l1=a.l1, select=a.select)
distils = any(m.startswith('director') for m in a.methods + a.c_methods)
DEV = '; '.join([f"CPU-sized ViT of the paper's family ({R}, patch 4, 64 tokens) instead of the ViT-7",
                 f"{a.epochs} backbone / {a.distill_epochs} DIRECTOR epochs instead of 300 / 100 (two shared CPU cores)",
                 "CIFAR-10 read from the JPEG copy (quality 75)", f"OOD set: {oodset.variant} (far-OOD stand-in, not SVHN/LSUN)",
                 "TS on the 5k validation split; MC dropout last dropout only, S=10; Laplace last-layer KFAC; DIRECTOR S=10 mean of probabilities"] +
                ([f"{dcfg.warmup_epochs} warm-up epochs in the distillation (the recipe's first epoch runs at lr 0)"] if distils else []) +
                (["no training augmentation (crop+flip off) for the backbone and the distillation: an overfitting ablation"] if a.no_augment else []) +
                ([] if a.l1 == 'mse' else [f"DIRECTOR transition loss: Gaussian NLL (l1='kl') instead of the authors' MSE, checkpoint on validation {a.select}"]))
config = dict(train=tcfg.to_dict(), distill=dcfg.to_dict(), backbone=R, driver='scripts/cifar_bench.py')
def c10c_record(cs, name, seed, mets, fm, pr, **extra):
    "The record of one CIFAR-10-C set `cs` (an ImageSet from load_cifar10c) scored by method `name`."
    c, s = cs.meta['corruption'], cs.meta['severity']
    src = 'CIFAR-10-C regenerated (not the released files)' if 'regenerated' in cs.variant else 'CIFAR-10-C (the released files)'
    return make_record('cifar10c', 'CIFAR-10-C', cs.variant, f'{c}-s{s}', name, seed, mets, fm.n_samples, fm.average, fm.n_params, fm.fit_s,
                       pr.throughput, None, 'cpu', DEV + f"; {src}, a class-balanced {len(pr.labels)} test images "
                       f"({len(pr.labels) // 10} per class) per corruption and severity" + extra.pop('dev', ''), n_test=len(pr.labels), corruption=c,
                       severity=s, config=config, **extra)

if a.ensemble:  # deep ensemble of the seeds' trained backbones (mean of probabilities), scored like every other method
    seeds = a.ensemble
    if len(seeds) < 2 or len(set(seeds)) != len(seeds): sys.exit(f'--ensemble needs at least two distinct seeds, got {seeds}')
    files = [CK/'cifar10'/f'seed{k}'/'backbone.pt' for k in seeds]
    if missing := [str(f) for f in files if not f.exists()]:
        sys.exit(f"--ensemble: no trained backbone at {', '.join(missing)}; train it first with --seed K --epochs {a.epochs} --methods mle")
    members = [load_backbone(f).eval() for f in files]
    infos = [json.loads((f.parent/'backbone_info.json').read_text()) for f in files]
    fm = SimpleNamespace(predict=_baseline_predict(DeepEnsemble(members), len(members), seeds[0]), n_samples=len(members), average='prob',
                         n_params=sum(n_params(m) for m in members), fit_s=sum(i.get('train_time_s') or 0 for i in infos), fit_bytes=None, grad=False)
    edev = f"; deep ensemble of the M={len(seeds)} backbones of seeds {seeds} (one ensemble, so no standard error)"
    pdir = RES/'cifar10'/'preds'; pdir.mkdir(parents=True, exist_ok=True)
    preds = {s: predict_split(fm.predict, loaders[s], 'cpu') for s in ('test', ood_key)}
    for split, mets, alt, pr in _scores(SimpleNamespace(), fm, preds, ('test',), (ood_key,), False):
        rec = make_record('cifar10', 'CIFAR-10', splits.variant, split, 'ensemble', seeds[0], mets, fm.n_samples, fm.average, fm.n_params, fm.fit_s,
                          pr.throughput, None, 'cpu', DEV + edev, n_test=len(pr.labels), members=seeds, config=config,
                          **({} if alt is None else dict(metrics_alt=alt, average_alt='logit')))
        save_record(rec, RES)
        np.savez_compressed(pdir/f"{split.replace(':', '-')}_ensemble_seed{seeds[0]}.npz", probs=pr.probs.numpy().astype(np.float16), labels=pr.labels.numpy())
        log('ensemble', split, {k: round(v, 4) for k, v in list(mets.items())[:4]})
    for c in a.c_corruptions:
        for s in range(1, 6):
            cs = load_cifar10c(c, s, n=a.c_n)
            pr = predict_split(fm.predict, DeviceImageLoader(cs.x, cs.y, 500, cs.stats, device='cpu'), 'cpu')
            save_record(c10c_record(cs, 'ensemble', seeds[0], evaluate(pr.probs, pr.labels), fm, pr, dev=edev, members=seeds), RES)
        log('c10c', c)
    log('done'); sys.exit(0)

bdir = CK/'cifar10'/f'seed{seed}'; bdir.mkdir(parents=True, exist_ok=True)
pdir = RES/'cifar10'/'preds'; pdir.mkdir(parents=True, exist_ok=True)
build = lambda: PaperViT(img_size=32, patch=4, in_chans=3, n_classes=10, **R)
bfile = bdir/'backbone.pt'
if bfile.exists(): model = load_backbone(bfile); tinfo = json.loads((bdir/'backbone_info.json').read_text()); log('loaded backbone')
else:
    seed_everything(seed); model = build(); t0 = time.time()
    model = train_backbone(model, loaders['train'], loaders['valid'], tcfg.replace(seed=seed, ckpt_dir=str(bdir/'backbone_ck'), resume=True))
    tinfo = dict(train_time_s=time.time() - t0, train_bytes=None, fit_log=model.fit_log); save_backbone(model, bfile)
    (bdir/'backbone_info.json').write_text(json.dumps(tinfo, default=float)); log('trained', [(r['epoch'], round(r['valid_acc'], 4)) for r in model.fit_log])
model.eval()
ctx = SimpleNamespace(model=model, loaders=loaders, seed=seed, device=torch.device('cpu'), dcfg=dcfg, n_samples=S, teacher_info=tinfo,
                      make_member=None, n_members=1, adapt_opts={}, ckpt_dir=None, cache={})
if any(m.startswith('director') for m in a.methods + a.c_methods):
    ad = adapt(model); ddir = bdir/f'director{a.tag}'
    if ddir.is_dir(): d = Director.load(ddir, adapter=ad); dinfo = json.loads((bdir/f'director{a.tag}_info.json').read_text())
    else:
        t0 = time.time(); d = distill(ad, loaders['train'], loaders['valid'], dcfg.replace(seed=seed, ckpt_dir=str(bdir/f'director{a.tag}_ck'), resume=True))
        dinfo = dict(train_time_s=time.time() - t0, fit_log=d.fit_log); d.save(ddir); (bdir/f'director{a.tag}_info.json').write_text(json.dumps(dinfo, default=float))
        log('distilled', [(r['epoch'], round(r['valid_acc'], 4)) for r in d.fit_log])
    ctx.cache['director'] = (d.eval(), dinfo['train_time_s'], None)
fitted = {}
for name in a.methods:
    fm = fitted[name] = fit_method(name, ctx)
    if (RES/'cifar10'/f"cifar-10_test_{name.replace('_', '-')}_seed{seed}.json").exists(): log('skip', name); continue
    preds = {s: predict_split(fm.predict, loaders[s], 'cpu', fm.grad) for s in ('test', ood_key)}
    for split, mets, alt, pr in _scores(ctx, fm, preds, ('test',), (ood_key,), False):
        extra = dict(metrics_alt=alt, average_alt='logit' if fm.average == 'prob' else 'prob') if alt is not None else {}
        rec = make_record('cifar10', 'CIFAR-10', splits.variant, split, name, seed, mets, fm.n_samples, fm.average, fm.n_params, fm.fit_s, pr.throughput,
                          dict(train_bytes=fm.fit_bytes, infer_bytes=pr.peak_bytes, method=pr.memory_method), 'cpu', DEV, n_test=len(pr.labels),
                          backbone_train_time_s=tinfo.get('train_time_s'), config=config, **extra)
        save_record(rec, RES)
        np.savez_compressed(pdir/f"{split.replace(':', '-')}_{name}_seed{seed}.npz", probs=pr.probs.numpy().astype(np.float16), labels=pr.labels.numpy())
        log(name, split, {k: round(v, 4) for k, v in list(mets.items())[:4]})
# CIFAR-10-C (regenerated), a class-balanced c_n test images per (corruption, severity)
for c in a.c_corruptions:
    for s in range(1, 6):
        t0 = time.time(); cs = load_cifar10c(c, s, n=a.c_n)
        dl = DeviceImageLoader(cs.x, cs.y, 500, cs.stats, device='cpu')
        for name in a.c_methods:
            rec_f = RES/'cifar10c'/f"cifar-10-c_{c.replace('_', '-')}-s{s}_{name.replace('_', '-')}_seed{seed}.json"
            if rec_f.exists(): continue
            fm = fitted.get(name) or fitted.setdefault(name, fit_method(name, ctx))
            pr = predict_split(fm.predict, dl, 'cpu', fm.grad)
            mets = evaluate(pr.probs, pr.labels)
            save_record(c10c_record(cs, name, seed, mets, fm, pr), RES)
        log('c10c', c, s, f'{time.time() - t0:.0f}s')
log('done')
