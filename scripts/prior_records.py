"""The constant base-rate predictor of CoLA: every sentence gets the training split's label frequencies.

A reference row for the CoLA results: a calibrated predictor that knows nothing about the sentence. Writes one record
per split (method 'prior', seed 0; the split is the same for every seed) to results/cola and results/cola-minilm.
"""
import os, json
from pathlib import Path
import numpy as np, torch
from director.data import load_cola
from director.metrics import evaluate, mcc, mcc_per_batch
from director.bench import make_record, save_record

REPO = Path(__file__).resolve().parents[1]; RES = Path(os.environ.get('BENCH_RES', REPO/'results'))
splits = load_cola(seed=0, max_length=64)
rate = float(np.mean(splits['train'].labels))
for bench in ('cola', 'cola-minilm'):
    for split in ('test', 'ood'):
        y = torch.tensor(np.asarray(splits[split].labels), dtype=torch.long)
        p = torch.tensor([[1 - rate, rate]], dtype=torch.float32).repeat(len(y), 1)
        m = evaluate(p, y); m.update(mcc=mcc(p, y), mcc_per_batch=mcc_per_batch(p, y, 32))
        dev = (f"reference, not a method: the constant predictor p(acceptable) = {rate:.4f}, the label frequency of the {len(splits['train'].labels):,} "
               "training sentences of split seed 0 (the same split for every seed); it predicts the majority class for every sentence")
        rec = make_record(bench, 'CoLA', splits.variant, split, 'prior', 0, m, None, None, 1, 0.0, None, None, 'cpu', dev, n_test=len(y),
                          config=dict(rate=rate, split_seed=0, driver='scripts/prior_records.py'))
        save_record(rec, RES); print(bench, split, {k: round(float(v), 4) for k, v in m.items() if k in ('acc', 'ece', 'nll', 'mcc')})
