"""The paper's CIFAR-10 recipe (`bench_cifar10(recipe='paper')`) on one GPU, fitted to a wall-clock limit.

0. A check (--precheck N): every method on a tiny ViT and a class-balanced N images of each split, one method group at a
   time, so that a method that fails on this device is reported (traceback in the log) and left out of the runs
   instead of ending them; if the compiled backbone fails, the runs go on uncompiled. Both are recorded.
1. A probe: the whole benchmark (every method, scoring, OOD) with a few epochs of each stage. It measures the
   per-epoch wall time of the backbone and of the distillation (median of the epochs after the first), and the
   fixed cost (compilation, the post-hoc fits, scoring). Its records are written to --probe-out, not --out.
2. The run: `bench_cifar10(recipe='paper', budget_minutes=B)` with the largest B whose proportionally
   shortened schedule (`director.bench.scaled_epochs`) is predicted to fit what is left of --minutes.
   With enough time it is the full 300 + 100 epochs (no budget).

A timing file records the measurements, the prediction, what the run took, and the predicted time of the
full recipe on this device. Usage:

    python scripts/gpu_paper.py --minutes 9 --precheck 2048        # records in results/gpu/cifar10, timings in results/gpu/timing.json
"""
import argparse, copy, json, sys, time, traceback
import torch
from director.core import atomic_write, env_info, check_value
from director.bench import bench_cifar10, CIFAR_RECIPES, CIFAR_METHODS, scaled_epochs
from director.data import load_cifar10, ImageSet, Splits, balanced_subset

p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument('--minutes', type=float, default=9., help='wall-clock limit for everything this script does (default 9)')
p.add_argument('--out', default='results/gpu', help='results root of the run (default results/gpu: apart from the CPU records in results/)')
p.add_argument('--probe-out', default='runs/gpu_probe', help='results root of the probe')
p.add_argument('--timing', default='results/gpu/timing.json', help='JSON file for the timings (outside the records folder)')
p.add_argument('--probe-epochs', type=int, nargs=2, default=(4, 3), metavar=('BACKBONE', 'DISTILL'))
p.add_argument('--margin', type=float, default=0.15, help='fraction of the time left that the prediction keeps free (default 0.15)')
p.add_argument('--methods', nargs='+', default=list(CIFAR_METHODS))
p.add_argument('--ckpt-dir', default='runs/bench/cifar10-gpu')
p.add_argument('--device', default='cuda')
p.add_argument('--precheck', type=int, default=None, metavar='N', help='first check every method on a tiny ViT and N images per split')
p.add_argument('--smoke', type=int, default=None, metavar='N',
               help='check the script itself: a tiny ViT and the first N images of each split (the numbers mean nothing)')
a = p.parse_args()

T0 = time.time()
def el(): return time.time() - T0
def log(*x): print(f"[{el():7.1f} s]", *x, flush=True)
if torch.device(a.device).type == 'cuda' and not torch.cuda.is_available():
    sys.exit("gpu_paper.py: error: no CUDA device is visible; this script times the GPU recipe (use --device cpu only to try it)")
R = CIFAR_RECIPES['paper']
timing = dict(env=env_info(), minutes=a.minutes, margin=a.margin, probe_epochs=list(a.probe_epochs), methods=a.methods)
def save():
    with atomic_write(a.timing, 'w') as f: json.dump(timing, f, indent=1, default=float)

TINY = dict(dim=32, depth=3, heads=2, mlp_dim=32)
def head(splits, n):
    "A class-balanced n images of every split (the JPEG copy's splits are ordered by class)."
    def sub(v):
        i = balanced_subset(v.y, n)
        return ImageSet(v.x[i], v.y[i], stats=v.stats, variant=f'{v.variant}, {n} class-balanced (check)', meta=v.meta, classes=v.classes)
    return Splits({k: sub(v) for k, v in splits.items()})
splits = load_cifar10(augment=False)
if a.smoke:
    R['backbone'] = TINY; splits = head(splits, a.smoke)
    timing['smoke'] = dict(n=a.smoke, backbone=R['backbone'])
timing['load_s'] = el(); log(f"CIFAR-10 loaded ({splits.variant})")

methods = list(a.methods)
if a.precheck:
    full_R, small = copy.deepcopy(R), head(splits, a.precheck)
    R['backbone'] = TINY
    groups = [g for g in (['mle'], ['ts'], ['mc_dropout'], ['laplace'], [m for m in methods if m.startswith('director')]) if g and set(g) <= set(methods)]
    failed = {}
    check_value('precheck', a.precheck >= 2 * CIFAR_RECIPES['paper']['bs'], a.precheck, f"at least two training batches ({2 * CIFAR_RECIPES['paper']['bs']} images)")
    def check(g):
        try: bench_cifar10('paper', epochs=2, distill_epochs=2, methods=g, out=None, ckpt_dir=None, splits=small, device=a.device, verbose=False); return None
        except Exception as e: traceback.print_exc(); return f"{type(e).__name__}: {e}"
    err = check(['mle'])
    if err is not None and R['compile']:
        R['compile'] = False
        if check(['mle']) is None:
            timing['compile_error'] = err[:2000]; log('the compiled backbone failed (traceback above): the runs go on without compiling it')
        else: R['compile'] = True; failed['mle'] = err[:2000]
    elif err is not None: failed['mle'] = err[:2000]
    groups = [g for g in groups if g != ['mle']]
    for g in groups:
        err = check(g)
        if err is not None: failed[' '.join(g)] = err[:2000]; log(f"left out {g}: {err[:300]}")
    methods = [m for m in methods if not any(m in k.split() for k in failed)]
    check_s = el() - timing['load_s']
    R.update(backbone=full_R['backbone'])
    timing.update(precheck=dict(n=a.precheck, seconds=check_s, failed=failed, methods=methods, compile=R['compile']))
    log(f"checked in {check_s:.0f} s; methods {methods}; compile {R['compile']}")
    if 'mle' not in methods: save(); sys.exit('gpu_paper.py: error: the backbone itself fails on this device (see the log)')

e1p, e2p = a.probe_epochs
t = time.time()
probe = bench_cifar10('paper', epochs=e1p, distill_epochs=e2p, methods=methods, out=a.probe_out, ckpt_dir=None, splits=splits,
                      device=a.device)
t_probe = time.time() - t
b = probe[0]['backbone_epoch_time_s']
r = next((r for r in probe if r['method'] == 'director' and r['split'] == 'test'), None)
d = r['epoch_time_s'] if r is not None else dict(median_rest=0.)
fixed = t_probe - b['median_rest'] * e1p - d['median_rest'] * e2p  # compilation, first-epoch extras, post-hoc fits, scoring
full = R['epochs'] * b['median_rest'] + R['distill_epochs'] * d['median_rest']  # the epochs of the full schedule
left = a.minutes * 60 - el()
s = min(1., max(0., (left * (1 - a.margin) - fixed) / full))
budget = None if s >= 1 else round(s * R['minutes'], 3)
timing.update(probe_s=t_probe, backbone_epoch_s=b, distill_epoch_s=d, fixed_s=fixed, full_epochs_s=full,
              full_recipe_predicted_s=fixed + full, left_s=left, scale=s, budget_minutes=budget)
save()
if not budget and s < 1: sys.exit(f"gpu_paper.py: error: no time is left for the run ({left:.0f} s left, fixed cost {fixed:.0f} s); "
                                  "give more --minutes (the probe's records and the timings are written)")
e1, e2, warm, _ = scaled_epochs(R, budget)
timing.update(epochs=[e1, e2, warm], run_predicted_s=fixed + e1 * b['median_rest'] + e2 * d['median_rest'])
save()
log(f"probe {t_probe:.0f} s: backbone {b['median_rest']:.2f} s/epoch, distillation {d['median_rest']:.2f} s/epoch, fixed {fixed:.0f} s; "
    f"full recipe predicted {(fixed + full) / 60:.1f} min; running {e1} + {e2} epochs (budget {budget} min)")

t = time.time()
recs = bench_cifar10('paper', budget_minutes=budget, methods=methods, out=a.out, ckpt_dir=a.ckpt_dir, splits=splits, device=a.device)
timing.update(run_s=time.time() - t, total_s=el(), n_records=len(recs),
              run=[dict(method=r['method'], split=r['split'], acc=r['metrics'].get('acc'), ece=r['metrics'].get('ece'),
                        nll=r['metrics'].get('nll')) for r in recs])
rd = next((r for r in recs if r['method'] == 'director' and r['split'] == 'test'), None)
if rd is not None: timing.update(run_backbone_epoch_s=rd['backbone_epoch_time_s'], run_distill_epoch_s=rd['epoch_time_s'])
save()
log(f"run {timing['run_s']:.0f} s (predicted {timing['run_predicted_s']:.0f} s); total {el():.0f} s")
