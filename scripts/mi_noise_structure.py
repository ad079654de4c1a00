"""Does the structure of DIRECTOR's sampled noise decide whether its mutual information separates an OOD set? (CIFAR-10, over-confident run)

For each seed's backbone and distilled kernel of the over-confident CIFAR-10 run (saved by `director bench cifar10 --recipe cpu
--no-augment --epochs 24 --distill-epochs 8 --ckpt-dir runs/bench/cifar10-noaug` as seed<k>/backbone.pt and seed<k>/director),
it samples S = 10 rollouts of the kernel alone (no frozen model in the mixture, no temperature) on a random --n test images and
a random --n Fashion-MNIST images (`cifar10_setup` subsets, seed 0), with the step noise drawn in one of two structures:

- token:  sigma * eps with eps independent per token and feature (what the kernel was trained and is sampled with);
- shared: sigma * eps with one eps per example and feature, the same for every token (each token's marginal is unchanged, but
          the noise no longer averages out when the head pools the tokens);

and with its scale either fixed (tau) or matched to the input's transition residual r(x) (`Director.transition_residual`):
tau * (r(x) / mean r on a random --n validation images) ** alpha. alpha = 0.5 matches the noise variance to the squared one-step
error the frozen model's own path shows on that input; larger alpha over-amplifies it. It records accuracy, ECE and NLL of the
S-sample mean on the test images, the mean MI on both sets, and the OOD AUROC by MI and by MSP. Writes
results/mi-noise-structure.json (quoted on the calibration ablation page). A diagnostic: none of these settings is a library
method.
"""
import os, json, time, argparse
from pathlib import Path
import numpy as np
import torch
torch.set_num_threads(int(os.environ.get('OMP_NUM_THREADS', '1')))
from sklearn.metrics import roc_auc_score
from director.core import atomic_write, git_commit
from director.bench.ablation import cifar10_setup
from director.bench.harness import mutual_information
from director.model import Director, _repeat_ctx
from director.repartition import adapt
from director.metrics import evaluate

REPO = Path(__file__).resolve().parents[1]
p = argparse.ArgumentParser()
p.add_argument('--seeds', type=int, nargs='+', default=[1, 2])
p.add_argument('--n', type=int, default=1000, help='test, OOD and validation images (a random n of each, seed 0)')
p.add_argument('--ckpt-dir', default=str(REPO/'runs'/'bench'/'cifar10-noaug'))
p.add_argument('--out', default=str(REPO/'results'/'mi-noise-structure.json'))
a = p.parse_args()
SETTINGS = (('token', 1.0, 0.0), ('token', 1.0, 0.5), ('shared', 1.0, 0.0), ('shared', 0.5, 0.0), ('shared', 1.0, 0.5),
            ('shared', 0.5, 0.5), ('shared', 1.0, 1.0))
def log(*x): print(time.strftime('%H:%M:%S'), *x, flush=True)

def rollouts(d, x, S, structure, scale, g):
    "Logits (S, B, C) of S kernel rollouts with step noise sigma * scale[b] * eps, eps per token ('token') or per example ('shared')."
    X0, ctx = d.embed(d.check_batch(x)); B, N, D = X0.shape
    X, c, sc = X0.repeat(S, 1, 1), _repeat_ctx(ctx, S, B), scale.repeat(S)[:, None, None]
    for t in range(1, d.n_steps + 1):
        mu, sigma = d.transition(X, t, c)
        X = mu + sc * sigma * torch.randn((S * B, 1, D) if structure == 'shared' else (S * B, N, D), generator=g)
    return d.head(X, c).view(S, B, -1)

@torch.no_grad()
def outputs(d, loader, residuals, structure, tau, alpha, r_mean, seed, S=10):
    P, MI = [], []
    for i, ((x, _), r) in enumerate(zip(loader, residuals)):
        scale = tau * (r / r_mean) ** alpha
        ps = rollouts(d, x, S, structure, scale, torch.Generator().manual_seed(100_003 * seed + i)).softmax(-1)
        P.append(ps.mean(0)); MI.append(mutual_information(ps, torch.full((S,), 1 / S)))
    return torch.cat(P), torch.cat(MI)

for seed in a.seeds:  # refuse before any work: without a saved model, the setup below would train one
    ck = Path(a.ckpt_dir)/f'seed{seed}'
    missing = [n for n in ('backbone.pt', 'backbone_info.json', 'director') if not (ck/n).exists()]
    if missing: raise SystemExit(f"{ck} lacks {', '.join(missing)}: make them with `director bench cifar10 --recipe cpu --no-augment --epochs 24 "
                                 f"--distill-epochs 8 --seeds {seed} --methods director --ckpt-dir {a.ckpt_dir}` first")
su = cifar10_setup(n_test=a.n, n_valid=a.n)
rows = []
for seed in a.seeds:
    ck = Path(a.ckpt_dir)/f'seed{seed}'
    dl = su.make_data(seed)
    m, _ = su.make_teacher(seed, dl, ck); m.eval()
    ad = adapt(m); d = Director.load(ck/'director', adapter=ad).eval()
    if not d.has_teacher: d.attach_teacher(ad)
    with torch.no_grad():
        R = {k: [d.transition_residual(x) for x, _ in dl[k]] for k in ('valid', 'test', 'ood')}
    y = torch.cat([yb for _, yb in dl['test']]); r_mean = torch.cat(R['valid']).mean()
    lab = np.r_[np.ones(len(y)), np.zeros(sum(len(r) for r in R['ood']))]
    for structure, tau, alpha in SETTINGS:
        p_id, mi_id = outputs(d, dl['test'], R['test'], structure, tau, alpha, r_mean, seed)
        p_ood, mi_ood = outputs(d, dl['ood'], R['ood'], structure, tau, alpha, r_mean, seed)
        e = evaluate(p_id, y)
        rows.append(dict(seed=seed, noise=structure, tau=tau, alpha=alpha, acc=e['acc'], ece=e['ece'], nll=e['nll'],
                         mean_mi_id=float(mi_id.mean()), mean_mi_ood=float(mi_ood.mean()),
                         ood_auroc_mi=float(roc_auc_score(lab, -np.r_[mi_id.numpy(), mi_ood.numpy()])),
                         ood_auroc_msp=float(roc_auc_score(lab, np.r_[p_id.max(-1).values.numpy(), p_ood.max(-1).values.numpy()]))))
        log(seed, structure, tau, alpha, {k: round(v, 4) for k, v in rows[-1].items() if isinstance(v, float)})
    rres = np.r_[torch.cat(R['test']).numpy(), torch.cat(R['ood']).numpy()]
    rows.append(dict(seed=seed, noise='none', score='transition residual', ood_auroc_residual=float(roc_auc_score(lab, -rres))))
with atomic_write(Path(a.out), 'w') as f:
    json.dump(dict(n=a.n, S=10, settings=[dict(noise=s, tau=t, alpha=al) for s, t, al in SETTINGS], commit=git_commit(),
                   variant='CIFAR-10 (JPEG copy); OOD: Fashion-MNIST test, padded to 32x32x3',
                   deviations=su.deviations + f"; a random {a.n} test, OOD and validation images (seed 0); the kernel's rollouts alone "
                              "(no frozen model, no temperature); the noise structures and residual scaling are a diagnostic, not the method",
                   rows=rows), f, indent=1)
log('wrote', a.out)
