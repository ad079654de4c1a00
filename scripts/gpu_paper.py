"""The paper's CIFAR-10 recipe (`director bench cifar10 --recipe paper`) on one GPU, fitted to a wall-clock limit.

1. Probe: the paper's ViT-7 (compiled blocks, bf16 autocast) on the full CIFAR-10 splits for a few epochs of each stage,
   scoring `mle` and `director_paper` only. It measures the per-epoch wall time of the backbone and of the distillation
   (median of the epochs after the first) and the fixed cost (compilation, trace recording, scoring). If the compiled
   backbone fails on the device, the probe is repeated without compiling (recorded in the timing file).
2. Run: `bench_cifar10(recipe='paper', budget_minutes=B)` with the largest B whose proportionally shortened schedule
   (`director.bench.scaled_epochs`: backbone and DIRECTOR epochs and warm-ups in the recipe's 300:100 proportion) is
   predicted to fit what is left of --minutes. The methods run in two groups sharing one checkpoint folder (the
   baselines on the backbone, then the DIRECTOR rows on one distilled kernel), so a group that fails on the device is
   reported (traceback in the log) without losing the other's records.

The timing file records the measurements, the prediction, what the run took and the predicted time of the full recipe
on this device. Usage:

    python scripts/gpu_paper.py --minutes 8 --data <folder with cifar10/ and fashion-mnist/> --out results/gpu
"""
import argparse, dataclasses, json, sys, time, traceback
from pathlib import Path
import torch
from director.core import atomic_write, env_info
from director.bench.recipes import bench_cifar10, CIFAR_RECIPES, scaled_epochs
from director.data import load_cifar10

p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument('--minutes', type=float, default=8., help='wall-clock limit for everything this script does (default 8)')
p.add_argument('--out', default='results/gpu', help='results root of the run (default results/gpu, apart from the CPU records)')
p.add_argument('--data', default=None, help='data folder (layout of the shared data folder: cifar10/, fashion-mnist/)')
p.add_argument('--probe-epochs', type=int, nargs=2, default=(3, 2), metavar=('BACKBONE', 'DISTILL'))
p.add_argument('--margin', type=float, default=0.2, help='fraction of the time left that the prediction keeps free (default 0.2)')
p.add_argument('--baselines', nargs='+', default=['mle', 'ts', 'ts_authors', 'mc_dropout', 'mc_dropout_last'])
p.add_argument('--directors', nargs='+', default=['director_paper', 'director', 'director_s1'])
p.add_argument('--ckpt-dir', default='runs/bench/cifar10-gpu')
p.add_argument('--device', default='cuda')
p.add_argument('--lr-per-128', type=float, default=None,
               help="learning rate per 128 images of both stages (default: the recipe's, 2.5e-4: 1e-3 at its batch of 512)")
p.add_argument('--smoke', type=int, default=None, metavar='N',
               help='check the script itself: a tiny uncompiled ViT and a class-balanced N images of each split (the numbers mean nothing)')
a = p.parse_args()

T0 = time.time()
def el(): return time.time() - T0
def log(*x): print(f"[{el():7.1f} s]", *x, flush=True)
if torch.device(a.device).type == 'cuda' and not torch.cuda.is_available() and not a.smoke:
    sys.exit("gpu_paper.py: error: no CUDA device is visible; this script times the GPU recipe")
Path(a.out).mkdir(parents=True, exist_ok=True)
timing_f = Path(a.out)/'timing.json'
R = CIFAR_RECIPES['paper']
timing = dict(env=env_info(), minutes=a.minutes, margin=a.margin, probe_epochs=list(a.probe_epochs),
              methods=a.baselines + a.directors, left_out=dict(
                  ensemble='needs three more backbones of the same recipe (no time in this run)',
                  laplace='laplace-torch is not installed on the device', sgpa='trains its own GP backbone (no time in this run)',
                  kep_svgp='trains its own GP backbone (no time in this run)'))
def save():
    with atomic_write(timing_f, 'w') as f: json.dump(timing, f, indent=1, default=float)

splits = load_cifar10(a.data, augment=False)
recipe = 'paper'
if a.lr_per_128 is not None:
    recipe = R = dataclasses.replace(R, lr_per_128=a.lr_per_128); timing['lr_per_128'] = a.lr_per_128
if a.smoke:
    from director.data import ImageSet, Splits, balanced_subset
    def sub(v):
        i = balanced_subset(v.y, a.smoke)
        return ImageSet(v.x[i], v.y[i], stats=v.stats, variant=f'{v.variant}, {a.smoke} class-balanced (smoke)', meta=v.meta, classes=v.classes)
    splits = Splits({k: sub(v) for k, v in splits.items()})
    recipe = R = dataclasses.replace(R, backbone=(32, 2, 2, 32), compile=False); timing['smoke'] = a.smoke
timing['load_s'] = el(); log(f"CIFAR-10 loaded ({splits.variant})"); save()

def probe(recipe):
    e1, e2 = a.probe_epochs
    t = time.time()
    recs = bench_cifar10(recipe, epochs=e1, distill_epochs=e2, methods=['mle', 'director_paper'], out=None, ckpt_dir=None,
                         splits=splits, data_path=a.data, device=a.device, verbose=False)
    return recs, time.time() - t

try: recs, t_probe = probe(recipe)
except FloatingPointError as e:
    traceback.print_exc()
    timing['bf16_error'] = f"{type(e).__name__}: {e}"[:2000]; save()
    recipe = R = dataclasses.replace(R, mixed_precision='no')
    log('the bf16 probe diverged (traceback above): the run goes on in float32 (TF32 matrix products)')
    recs, t_probe = probe(recipe)
except Exception as e:
    traceback.print_exc()
    timing['compile_error'] = f"{type(e).__name__}: {e}"[:2000]; save()
    recipe = R = dataclasses.replace(R, compile=False)
    log('the compiled probe failed (traceback above): the run goes on without compiling the blocks')
    recs, t_probe = probe(recipe)
b = recs[0]['backbone_epoch_time_s']
d = next(r for r in recs if r['method'] == 'director_paper')['epoch_time_s']
e1p, e2p = a.probe_epochs
fixed = t_probe - b['median_rest'] * e1p - d['median_rest'] * e2p  # compilation, first-epoch extras, traces, scoring
full = R.epochs * b['median_rest'] + R.distill_epochs * d['median_rest']  # the epochs of the full 300 + 100 schedule
left = a.minutes * 60 - el()
s = min(1., max(0., (left * (1 - a.margin) - 2 * fixed) / full))  # the run also compiles twice more, fits and scores the other methods
budget = None if s >= 1 else round(s * R.minutes, 3)
timing.update(recipe=dataclasses.asdict(R), probe_s=t_probe, probe=[dict(method=r['method'], split=r['split'], acc=r['metrics'].get('acc'), ece=r['metrics'].get('ece'))
                                      for r in recs], backbone_epoch_s=b, distill_epoch_s=d, fixed_s=fixed, full_epochs_s=full,
              full_recipe_predicted_s=fixed + full, left_s=left, scale=s, budget_minutes=budget, compiled=R.compile)
save()
if s <= 0: sys.exit(f"gpu_paper.py: error: no time is left for the run ({left:.0f} s left, fixed cost {fixed:.0f} s); give more --minutes")
e1, e2, warm, _ = scaled_epochs(R, budget)
timing.update(epochs=[e1, e2, warm], run_predicted_s=2 * fixed + e1 * b['median_rest'] + e2 * d['median_rest']); save()
log(f"probe {t_probe:.0f} s: backbone {b['median_rest']:.2f} s/epoch, distillation {d['median_rest']:.2f} s/epoch, fixed {fixed:.0f} s; "
    f"full recipe predicted {(fixed + full) / 60:.1f} min; running {e1} + {e2} epochs (budget {budget} min)")

cmd = ' '.join(['python'] + sys.argv)
t, runs = time.time(), []
for g in (a.baselines, a.directors):
    try:
        recs = bench_cifar10(recipe, budget_minutes=budget, methods=g, out=a.out, ckpt_dir=a.ckpt_dir, splits=splits, data_path=a.data,
                             device=a.device, command=cmd)
        runs += [dict(method=r['method'], split=r['split'], acc=r['metrics'].get('acc'), ece=r['metrics'].get('ece'),
                      nll=r['metrics'].get('nll')) for r in recs]
        if g is a.directors:
            rd = next((r for r in recs if r['method'] == 'director_paper' and r['split'] == 'test'), None)
            if rd is not None: timing.update(run_backbone_epoch_s=rd['backbone_epoch_time_s'], run_distill_epoch_s=rd['epoch_time_s'])
    except Exception as e:
        traceback.print_exc(); timing.setdefault('failed', {})[' '.join(g)] = f"{type(e).__name__}: {e}"[:2000]
    timing.update(run_s=time.time() - t, total_s=el(), run=runs); save()
log(f"run {timing['run_s']:.0f} s (predicted {timing['run_predicted_s']:.0f} s); total {el():.0f} s")
