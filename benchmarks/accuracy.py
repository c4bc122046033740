"""The linter's recall and false flags, measured against the syncs that really happened.

The reference is `benchmarks/data/sync_sites.json`: the source lines that synchronised when real
model code ran on an H100 under `torch.cuda.set_sync_debug_mode("warn")`
(benchmarks/accuracy_collect.py records them). This script fetches the exact sources those lines
refer to (the same wheels of transformers / torchvision / torchaudio / timm, from the package
index, cached under .bench/), runs the current `syncscan lint --all --format json --no-cache` on
the files, and reports:

- recall: a site counts as found when a lint finding lies in the same statement
  (`syncscan.join.statement_span`), overall / per package / per model / per mode, with and
  without requiring the concrete rewrite (a non-empty suggestion); hot vs cold of the found ones;
- the missed sites, grouped by the rule that should catch them, with their source line;
- false flags: findings on statements that RAN during the measured steps (lines recorded by a
  line tracer) and never synced, per rule, with examples.

The sets of sites: `--set tuned` (the default: the models the rules were developed on) and
`--set heldout` (`benchmarks/data/heldout/sync_sites.json`, recorded by
benchmarks/heldout_collect.py in libraries and training repositories the rules were never tuned on;
its sites in the tuned libraries, reached through peft or smp, are listed apart and not counted), and
`--set fresh` (`benchmarks/data/fresh/sync_sites.json`, recorded by benchmarks/fresh_collect.py): a
second held-out set, of libraries and repositories nobody here had looked at when it was recorded, and
`--set fresh2` (`benchmarks/data/fresh2/sync_sites.json`, benchmarks/fresh2_collect.py): a third one, once
the first two had been read, `--set fresh3` (`benchmarks/data/fresh3/sync_sites.json`,
benchmarks/fresh3_collect.py): a fourth one, once all three had been scored, `--set fresh4`
(`benchmarks/data/fresh4/sync_sites.json`, benchmarks/fresh4_collect.py): a fifth one, once fresh3 had
been read, `--set fresh5` (`benchmarks/data/fresh5/sync_sites.json`, benchmarks/fresh5_collect.py): a
sixth one, sealed, as fresh4 became a development set, and `--set fresh6` (`benchmarks/data/fresh6/sync_sites.json`,
benchmarks/fresh6_collect.py): a seventh one, recorded the same way, to be read as a development set, and
`--set fresh7` (`benchmarks/data/fresh7/sync_sites.json`, benchmarks/fresh7_collect.py): an eighth one, another
development set, `--set fresh8` (benchmarks/fresh8_collect.py): a ninth, a development set, `--set fresh9`
(benchmarks/fresh9_collect.py): a tenth, sealed, `--set fresh10` (`benchmarks/data/fresh10/sync_sites.json`,
benchmarks/fresh10_collect.py): an eleventh, sealed (scored for totals only), `--set fresh11`
(`benchmarks/data/fresh11/sync_sites.json`, benchmarks/fresh11_collect.py): a twelfth, sealed (totals only),
`--set fresh12` (`benchmarks/data/fresh12/sync_sites.json`, benchmarks/fresh12_collect.py): a thirteenth, sealed
(totals only), `--set fresh13` (`benchmarks/data/fresh13/sync_sites.json`, benchmarks/fresh13_collect.py): a
fourteenth, sealed (totals only), `--set fresh14` (`benchmarks/data/fresh14/sync_sites.json`,
benchmarks/fresh14_collect.py): a fifteenth, sealed (totals only), `--set fresh15`
(`benchmarks/data/fresh15/sync_sites.json`, benchmarks/fresh15_collect.py): a sixteenth, sealed (totals only),
`--set fresh16` (`benchmarks/data/fresh16/sync_sites.json`, benchmarks/fresh16_collect.py): a seventeenth, sealed
(totals only), `--set fresh17` (`benchmarks/data/fresh17/sync_sites.json`, benchmarks/fresh17_collect.py): an
eighteenth, sealed (totals only), `--set fresh18` (`benchmarks/data/fresh18/sync_sites.json`,
benchmarks/fresh18_collect.py): a nineteenth, sealed (totals only), `--set fresh19`
(`benchmarks/data/fresh19/sync_sites.json`, benchmarks/fresh19_collect.py): a twentieth, blind at first, then read
(session 18), `--set fresh20` (`benchmarks/data/fresh20/sync_sites.json`, benchmarks/fresh20_collect.py): a
twenty-first, sealed (totals only), `--set fresh21` (`benchmarks/data/fresh21/sync_sites.json`,
benchmarks/fresh21_collect.py): a twenty-second, sealed (totals only), `--set fresh22`
(`benchmarks/data/fresh22/sync_sites.json`, benchmarks/fresh22_collect.py): a twenty-third, sealed (totals only),
`--set fresh23` (`benchmarks/data/fresh23/sync_sites.json`, benchmarks/fresh23_collect.py): a twenty-fourth, sealed
(totals only), `--set fresh24` (`benchmarks/data/fresh24/sync_sites.json`, benchmarks/fresh24_collect.py): a
twenty-fifth, sealed (totals only), `--set fresh25` (`benchmarks/data/fresh25/sync_sites.json`,
benchmarks/fresh25_collect.py): a twenty-sixth, sealed (totals only), `--set fresh26`
(`benchmarks/data/fresh26/sync_sites.json`, benchmarks/fresh26_collect.py): a twenty-seventh, sealed (totals only),
`--set fresh27` (`benchmarks/data/fresh27/sync_sites.json`, benchmarks/fresh27_collect.py): a twenty-eighth, sealed
(totals only), `--set fresh28` (`benchmarks/data/fresh28/sync_sites.json`, benchmarks/fresh28_collect.py): a
twenty-ninth, sealed (totals only), `--set fresh29` (`benchmarks/data/fresh29/sync_sites.json`,
benchmarks/fresh29_collect.py): a thirtieth, sealed (totals only), `--set fresh30`
(`benchmarks/data/fresh30/sync_sites.json`, benchmarks/fresh30_collect.py): a thirty-first, sealed (totals only),
`--set fresh31` (`benchmarks/data/fresh31/sync_sites.json`, benchmarks/fresh31_collect.py): a thirty-second, sealed
(totals only), `--set fresh32` (`benchmarks/data/fresh32/sync_sites.json`, benchmarks/fresh32_collect.py): a
thirty-third, sealed (totals only), `--set fresh33` (`benchmarks/data/fresh33/sync_sites.json`,
benchmarks/fresh33_collect.py): a thirty-fourth, sealed (totals only), `--set fresh34`
(`benchmarks/data/fresh34/sync_sites.json`, benchmarks/fresh34_collect.py): a thirty-fifth, sealed (totals only),
`--set fresh35` (`benchmarks/data/fresh35/sync_sites.json`, benchmarks/fresh35_collect.py): a thirty-sixth,
sealed (totals only), `--set fresh36` (`benchmarks/data/fresh36/sync_sites.json`, benchmarks/fresh36_collect.py):
a thirty-seventh, sealed (totals only), `--set fresh37` (`benchmarks/data/fresh37/sync_sites.json`,
benchmarks/fresh37_collect.py): a thirty-eighth, sealed (totals only), `--set fresh38`
(`benchmarks/data/fresh38/sync_sites.json`, benchmarks/fresh38_collect.py): a thirty-ninth, sealed (totals only),
`--set fresh39` (`benchmarks/data/fresh39/sync_sites.json`, benchmarks/fresh39_collect.py): a fortieth,
sealed (totals only), `--set fresh40` (`benchmarks/data/fresh40/sync_sites.json`, benchmarks/fresh40_collect.py):
a forty-first, sealed (totals only), `--set fresh41` (`benchmarks/data/fresh41/sync_sites.json`,
benchmarks/fresh41_collect.py): a forty-second, sealed (totals only), `--set fresh42`
(`benchmarks/data/fresh42/sync_sites.json`, benchmarks/fresh42_collect.py): a forty-third, sealed (totals only), and `--set fresh43`
(`benchmarks/data/fresh43/sync_sites.json`, benchmarks/fresh43_collect.py): a forty-fourth, sealed (totals only).
`--linter REV` scores the linter of a git revision instead of the working tree (e.g. the baseline).

    python benchmarks/accuracy.py [--set tuned|heldout|fresh|fresh2|...|fresh43]
                                  [--format text|md|json]
                                  [--no-false-flags]
                                  [--linter REV]
    python benchmarks/accuracy.py merge [--set tuned|heldout|fresh|fresh2|...|fresh43]
                                        RAW.json [RAW.json ...]                    # -> its data
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "benchmarks" / "data" / "sync_sites.json"
HELDOUT_DATA = REPO / "benchmarks" / "data" / "heldout" / "sync_sites.json"
FRESH_DATA = REPO / "benchmarks" / "data" / "fresh" / "sync_sites.json"
FRESH2_DATA = REPO / "benchmarks" / "data" / "fresh2" / "sync_sites.json"
FRESH3_DATA = REPO / "benchmarks" / "data" / "fresh3" / "sync_sites.json"
FRESH4_DATA = REPO / "benchmarks" / "data" / "fresh4" / "sync_sites.json"
FRESH5_DATA = REPO / "benchmarks" / "data" / "fresh5" / "sync_sites.json"
FRESH6_DATA = REPO / "benchmarks" / "data" / "fresh6" / "sync_sites.json"
FRESH7_DATA = REPO / "benchmarks" / "data" / "fresh7" / "sync_sites.json"
FRESH8_DATA = REPO / "benchmarks" / "data" / "fresh8" / "sync_sites.json"
FRESH9_DATA = REPO / "benchmarks" / "data" / "fresh9" / "sync_sites.json"
FRESH10_DATA = REPO / "benchmarks" / "data" / "fresh10" / "sync_sites.json"
FRESH11_DATA = REPO / "benchmarks" / "data" / "fresh11" / "sync_sites.json"
FRESH12_DATA = REPO / "benchmarks" / "data" / "fresh12" / "sync_sites.json"
FRESH13_DATA = REPO / "benchmarks" / "data" / "fresh13" / "sync_sites.json"
FRESH14_DATA = REPO / "benchmarks" / "data" / "fresh14" / "sync_sites.json"
FRESH15_DATA = REPO / "benchmarks" / "data" / "fresh15" / "sync_sites.json"
FRESH16_DATA = REPO / "benchmarks" / "data" / "fresh16" / "sync_sites.json"
FRESH17_DATA = REPO / "benchmarks" / "data" / "fresh17" / "sync_sites.json"
FRESH18_DATA = REPO / "benchmarks" / "data" / "fresh18" / "sync_sites.json"
FRESH19_DATA = REPO / "benchmarks" / "data" / "fresh19" / "sync_sites.json"
FRESH20_DATA = REPO / "benchmarks" / "data" / "fresh20" / "sync_sites.json"
FRESH21_DATA = REPO / "benchmarks" / "data" / "fresh21" / "sync_sites.json"
FRESH22_DATA = REPO / "benchmarks" / "data" / "fresh22" / "sync_sites.json"
FRESH23_DATA = REPO / "benchmarks" / "data" / "fresh23" / "sync_sites.json"
FRESH24_DATA = REPO / "benchmarks" / "data" / "fresh24" / "sync_sites.json"
FRESH25_DATA = REPO / "benchmarks" / "data" / "fresh25" / "sync_sites.json"
FRESH26_DATA = REPO / "benchmarks" / "data" / "fresh26" / "sync_sites.json"
FRESH27_DATA = REPO / "benchmarks" / "data" / "fresh27" / "sync_sites.json"
FRESH28_DATA = REPO / "benchmarks" / "data" / "fresh28" / "sync_sites.json"
FRESH29_DATA = REPO / "benchmarks" / "data" / "fresh29" / "sync_sites.json"
FRESH30_DATA = REPO / "benchmarks" / "data" / "fresh30" / "sync_sites.json"
FRESH31_DATA = REPO / "benchmarks" / "data" / "fresh31" / "sync_sites.json"
FRESH32_DATA = REPO / "benchmarks" / "data" / "fresh32" / "sync_sites.json"
FRESH33_DATA = REPO / "benchmarks" / "data" / "fresh33" / "sync_sites.json"
FRESH34_DATA = REPO / "benchmarks" / "data" / "fresh34" / "sync_sites.json"
FRESH35_DATA = REPO / "benchmarks" / "data" / "fresh35" / "sync_sites.json"
FRESH36_DATA = REPO / "benchmarks" / "data" / "fresh36" / "sync_sites.json"
FRESH37_DATA = REPO / "benchmarks" / "data" / "fresh37" / "sync_sites.json"
FRESH38_DATA = REPO / "benchmarks" / "data" / "fresh38" / "sync_sites.json"
FRESH39_DATA = REPO / "benchmarks" / "data" / "fresh39" / "sync_sites.json"
FRESH40_DATA = REPO / "benchmarks" / "data" / "fresh40" / "sync_sites.json"
FRESH41_DATA = REPO / "benchmarks" / "data" / "fresh41" / "sync_sites.json"
FRESH42_DATA = REPO / "benchmarks" / "data" / "fresh42" / "sync_sites.json"
FRESH43_DATA = REPO / "benchmarks" / "data" / "fresh43" / "sync_sites.json"
CACHE = REPO / ".bench"
# the libraries the rules were tuned on
PACKAGES = ("transformers", "torchvision", "torchaudio", "timm", "accelerate")
# libraries of the held-out set (benchmarks/heldout_collect.py); its training repositories are named
# in the data's meta["repos"] with their commits
HELDOUT_PACKAGES = ("torchdiffeq", "torch_geometric", "gpytorch", "linear_operator", "botorch", "e3nn",
                    "torchmetrics", "pytorch_lightning", "lightning_fabric", "lightning_utilities", "peft",
                    "sentence_transformers", "kornia", "monai", "diffusers", "segmentation_models_pytorch")
# libraries of the second held-out set, nobody here has looked at (benchmarks/fresh_collect.py); its
# training repositories are named in its data's meta["repos"]
FRESH_PACKAGES = ("pyro", "torchsde", "torchcde", "pytorch_metric_learning", "ignite", "torchcrf", "geomloss",
                  "torch_ema")
# libraries of the third held-out set, recorded before anyone working on the linter looked at them
# (benchmarks/fresh2_collect.py); its training repositories are named in its data's meta["repos"]
FRESH2_PACKAGES = ("stable_baselines3", "zuko", "piq", "torch_optimizer", "pytorch_ranger", "torchode", "geoopt",
                   "pytorch_msssim")
# libraries of the fourth held-out set, recorded before anyone working on the linter looked at them
# (benchmarks/fresh3_collect.py); its training repositories are named in its data's meta["repos"]
FRESH3_PACKAGES = ("captum", "opacus", "torchmin", "torchattacks", "vector_quantize_pytorch", "x_transformers",
                   "torch_einops_utils", "pytorch_tabnet", "torchquad")
# libraries of the fifth held-out set, recorded before anyone working on the linter looked at them
# (benchmarks/fresh4_collect.py), laplace-torch's curvature backends included; its training repositories
# are named in its data's meta["repos"]
FRESH4_PACKAGES = ("skorch", "poutyne", "pytorch_optimizer", "schedulefree", "deepinv", "ema_pytorch", "laplace",
                   "curvlinops", "backpack", "asdl", "unfoldNd", "einconv")
# libraries of the sixth held-out set, recorded before anyone working on the linter looked at them
# (benchmarks/fresh5_collect.py), torch-audiomentations' own needs (julius, torch-pitch-shift) included; its
# training repositories are named in its data's meta["repos"]
FRESH5_PACKAGES = ("torcheval", "torchsurv", "skrl", "torch_audiomentations", "julius", "torch_pitch_shift",
                   "auraloss", "torchkbnufft", "entmax", "prodigyopt", "deepxde")
# libraries of the seventh set, a development set recorded before anyone working on the linter looked at them
# (benchmarks/fresh6_collect.py); its training repositories are named in its data's meta["repos"]
FRESH6_PACKAGES = ("flow_matching", "torchcfm", "torchjd", "lightly", "fast_pytorch_kmeans", "torchkge", "roma",
                   "nnAudio", "cooper")
# libraries of the eighth set, a development set recorded before anyone working on the linter looked at them
# (benchmarks/fresh7_collect.py); its training repositories are named in its data's meta["repos"]
FRESH7_PACKAGES = ("kan", "torchensemble", "normflows", "k_diffusion", "lion_pytorch", "adan_pytorch", "madgrad",
                   "blitz", "vit_pytorch", "info_nce")
# libraries of the ninth set, a development set recorded before anyone working on the linter looked at them
# (benchmarks/fresh8_collect.py); its training repositories are named in its data's meta["repos"]
FRESH8_PACKAGES = ("torchtnt", "torch_pruning", "segment_anything", "torchcam", "sbi", "torch_uncertainty")
# libraries of the tenth set, a sealed test set recorded before anyone working on the linter looked at them
# (benchmarks/fresh9_collect.py); its training repositories are named in its data's meta["repos"]
FRESH9_PACKAGES = ("open_clip", "open_clip_train", "esm", "speechbrain", "torchbearer", "torchani",
                   "rotary_embedding_torch", "perceiver_pytorch")
# libraries of the eleventh set, a sealed test set recorded before anyone working on the linter looked at them
# (benchmarks/fresh10_collect.py); its training repositories are named in its data's meta["repos"]
FRESH10_PACKAGES = ("pypose", "encodec", "bayesian_torch", "torch_struct", "pfrl", "mixture_of_experts",
                    "dadaptation")
# libraries of the twelfth set, a sealed test set recorded before anyone working on the linter looked at them
# (benchmarks/fresh11_collect.py); its training repositories are named in its data's meta["repos"]
FRESH11_PACKAGES = ("tensorly", "tltorch", "kymatio", "geotorch", "lpips", "torch_kmeans", "pytorch_ood",
                    "torch_lr_finder")
# libraries of the thirteenth set, a sealed test set recorded before anyone working on the linter looked at them
# (benchmarks/fresh12_collect.py); its training repositories are named in its data's meta["repos"]
FRESH12_PACKAGES = ("snntorch", "torchhd", "effdet", "torchdr", "pytorch_toolbelt", "torchnmf", "ncps", "higher")
# libraries of the fourteenth set, a sealed test set recorded before anyone working on the linter looked at them
# (benchmarks/fresh13_collect.py); its training repositories are named in its data's meta["repos"]
FRESH13_PACKAGES = ("asteroid_filterbanks", "egnn_pytorch", "torchfm", "pytorch_tcn", "torch_ac", "neurodiffeq",
                    "baal", "brevitas")
# libraries of the fifteenth set, a sealed test set recorded before anyone working on the linter looked at them
# (benchmarks/fresh14_collect.py); its training repositories are named in its data's meta["repos"]
FRESH14_PACKAGES = ("tntorch", "FrEIA", "pytorch_kinematics", "zennit", "ptwt", "nngeometry", "qpth", "torchiva")
# libraries of the sixteenth set, a sealed test set recorded before anyone working on the linter looked at them
# (benchmarks/fresh15_collect.py); its training repositories are named in its data's meta["repos"]
FRESH15_PACKAGES = ("pomegranate", "diffsort", "torch_ppr", "facenet_pytorch", "reformer_pytorch", "mpc", "sb3_contrib",
                    "openunmix")
# libraries of the seventeenth set, a sealed test set recorded before anyone working on the linter looked at them
# (benchmarks/fresh16_collect.py), eagerpy (the tensor layer foolbox's attacks run through) included; its training
# repositories are named in its data's meta["repos"]
FRESH16_PACKAGES = ("cebra", "ctgan", "d3rlpy", "foolbox", "eagerpy", "hummingbird", "torchdrift", "libauc",
                    "kmeans_pytorch")
# libraries of the eighteenth set, a sealed test set recorded before anyone working on the linter looked at them
# (benchmarks/fresh17_collect.py); its training repositories are named in its data's meta["repos"]
FRESH17_PACKAGES = ("pymde", "noisereduce", "pyod", "piqa", "spikingjelly", "torchstain", "vbll", "torchxrayvision")
# libraries of the nineteenth set, a sealed test set recorded before anyone working on the linter looked at them
# (benchmarks/fresh18_collect.py): art is adversarial-robustness-toolbox, castle is gcastle, deel is deel-torchlip;
# its training repositories are named in its data's meta["repos"]
FRESH18_PACKAGES = ("art", "deepctr_torch", "fastmri", "castle", "cliffordlayers", "labml_nn", "deepecho", "deel")
# libraries of the twentieth set, recorded before anyone working on
# the linter looked at them, then read (session 18)
# (benchmarks/fresh19_collect.py); its training repositories are named in its data's meta["repos"]
FRESH19_PACKAGES = ("torch_rechub", "pythae", "tensordict", "rsl_rl", "pytorch_pfn_extras", "torch_stoi", "mambapy",
                    "torchtuples")
# libraries of the twenty-first set, a sealed test set recorded before anyone working on the linter looked at them
# (benchmarks/fresh20_collect.py), cuequivariance (the irreps and descriptors cuequivariance_torch's modules are
# built from) included; its training repositories are named in its data's meta["repos"]
FRESH20_PACKAGES = ("alias_free_torch", "azula", "cuequivariance_torch", "cuequivariance", "curated_transformers",
                    "delu", "fvcore", "hypll", "loralib")
# libraries of the twenty-second set, a sealed test set recorded before anyone working on the linter looked at them
# (benchmarks/fresh21_collect.py): torchpme is torch-pme, trak is traker; its training repositories are named in its
# data's meta["repos"]
FRESH21_PACKAGES = ("mmengine", "torchpme", "rtdl_num_embeddings", "torch_kf", "performer_pytorch", "trak", "sinabs",
                    "rising")
# libraries of the twenty-third set, a sealed test set recorded before anyone working on the linter looked at them
# (benchmarks/fresh22_collect.py): cheetah is cheetah-accelerator, chop is chop-pytorch; its training repositories
# are named in its data's meta["repos"]
FRESH22_PACKAGES = ("bindsnet", "cheetah", "cleverhans", "flowtorch", "hessian_eigenthings", "kmeans_gpu", "chop",
                    "ksddescent")
# libraries of the twenty-fourth set, a sealed test set recorded before anyone working on the linter looked at them
# (benchmarks/fresh23_collect.py): pyhessian is PyHessian, pina is pina-mathlab; its training repositories are
# named in its data's meta["repos"]
FRESH23_PACKAGES = ("pyhessian", "pytorch_accelerated", "torchimize", "torchseg", "torch_pca", "torchlaplace", "pina")
# libraries of the twenty-fifth set, a sealed test set recorded before anyone working on the linter looked at them
# (benchmarks/fresh24_collect.py): ebm is ebmkit; its training repository is named in its data's meta["repos"]
FRESH24_PACKAGES = ("ebm", "easyfsl", "fastai", "glasflow", "gradoptorch", "gpyconform", "imbalanced_losses")
# libraries of the twenty-sixth set, a sealed test set recorded before anyone working on the linter looked at them
# (benchmarks/fresh25_collect.py): each ships in a wheel of its own name; its training repositories are named in its
# data's meta["repos"]
FRESH25_PACKAGES = ("otorchmizer", "nessai_torch", "pcn_torch", "oflibpytorch", "petls_pytorch", "torchist",
                    "torchbnn", "mirtorch")
# libraries of the twenty-seventh set, a sealed test set recorded before anyone working on the linter looked at them
# (benchmarks/fresh26_collect.py): autoFRK is autofrk, bayesian_changepoint_detection is bayesian-changepoint, ivon is
# ivon-opt; its training repository is named in its data's meta["repos"]
FRESH26_PACKAGES = ("adv_lib", "autoFRK", "bayesian_changepoint_detection", "coral_pytorch", "dlordinal", "ivon")
# libraries of the twenty-eighth set, a sealed test set recorded before anyone working on the linter looked at them
# (benchmarks/fresh27_collect.py): interpol is torch-interpol, the others ship in a wheel of their own name; its
# training repositories are named in its data's meta["repos"]
FRESH27_PACKAGES = ("minibatch_kmeans", "ncg_optimizer", "tgmm", "interpol", "torch_cubic_spline_grids",
                    "torch_dxdt", "torch_incremental_pca", "torch_tps")
# libraries of the twenty-ninth set, a sealed test set recorded before anyone working on the linter looked at them
# (benchmarks/fresh28_collect.py): cola is cola-ml, the others ship in a wheel of their own name (a_unet, which
# audio_diffusion_pytorch's models are built from, is a need of it and not counted); its training repositories are
# named in its data's meta["repos"]
FRESH28_PACKAGES = ("deepod", "cola", "fdtd", "audio_diffusion_pytorch", "dasp_pytorch", "deeptime")
# libraries of the thirtieth set, a sealed test set recorded before anyone working on the linter looked at them
# (benchmarks/fresh29_collect.py): each ships in a wheel of its own name (tad_dftd3 in tad_dftd3, its need tad_mctc
# not counted); its training repositories are named in its data's meta["repos"]
FRESH29_PACKAGES = ("pyqtorch", "pytorch3dunet", "scoringrules", "tad_dftd3", "torchcvnn", "torchdistill", "torchrir",
                    "torchsvm")
# libraries of the thirty-first set, a sealed test set recorded before anyone working on the linter looked at them
# (benchmarks/fresh30_collect.py): each ships in a wheel of its own name but iTransformer (in itransformer); the
# needs they reach (tad_mctc, tad_dftd4, tad_multicharge, pyro, sklearn, ...) are not counted, nor tad_dftd3
# (fresh29's); its training repositories are named in its data's meta["repos"]
FRESH30_PACKAGES = ("dhg", "dxtb", "fft_conv_pytorch", "focal_frequency_loss", "funsor", "gateloop_transformer",
                    "iTransformer", "linformer")
# libraries of the thirty-second set, a sealed test set recorded before anyone working on the linter looked at them
# (benchmarks/fresh31_collect.py): each ships in a wheel of its own name (routing_transformer's needs
# local_attention, mixture_of_experts and product_key_memory, st_moe_pytorch's colt5_attention, tyxe's pyro, not
# counted); its training repositories are named in its data's meta["repos"]
FRESH31_PACKAGES = ("mdmm", "netcal", "pydssp", "routing_transformer", "soft_moe_pytorch", "st_moe_pytorch",
                    "torch_runstats", "torchdeq", "tyxe")
# libraries of the thirty-third set, a sealed test set recorded before anyone working on the linter looked at them
# (benchmarks/fresh32_collect.py): each ships in a wheel of its own name but betty (in betty_ml) and ltn (in
# LTNtorch); the needs they reach (lovely_numpy, fastcore, einconv, accelerate, tensorboardX, ...) are not counted;
# its training repositories are named in its data's meta["repos"]
FRESH32_PACKAGES = ("betty", "kronfluence", "ksom", "learnergy", "lovely_tensors", "lsuv", "ltn")
# libraries of the thirty-fourth set, a sealed test set recorded before anyone working on the linter looked at them
# (benchmarks/fresh33_collect.py): each ships in a wheel of its own name but pesto (in pesto_pitch) and torchnlp (in
# pytorch_nlp); their needs (omegaconf, rtdl_num_embeddings, ...) are not counted; its training repositories are
# named in its data's meta["repos"]
FRESH33_PACKAGES = ("nara_wpe", "pesto", "silero_vad", "tabm", "torchgan", "torchnlp", "torchsr")
# libraries of the thirty-fifth set, a sealed test set recorded before anyone working on the linter looked at them
# (benchmarks/fresh34_collect.py): each ships in a wheel of its own name (fairscale in a source distribution only);
# their needs (kornia, FrEIA, pydantic, cytoolz, soundfile, jsonargparse, fvcore, yacs, thop, ...) are not counted;
# its training repositories are named in its data's meta["repos"]
FRESH34_PACKAGES = ("anomalib", "compressed_tensors", "fairscale", "lhotse", "litgpt")
# libraries of the thirty-sixth set, a sealed test set recorded before anyone working on the linter looked at them
# (benchmarks/fresh35_collect.py): each ships in a wheel of its own name (pytorch_forecasting in
# pytorch_forecasting, pytorch_tabular in pytorch_tabular); the needs they reach (skbase, omegaconf, skorch, ot,
# slicer, cachetools, lightning, ...) are not counted; its training repositories are named in its data's meta["repos"].
# (skada failed on the GPU and was replaced by se3-transformer-pytorch before the recording that was merged: the
# helper's registration still named skada, so se3_transformer_pytorch's sites went uncounted until the merge)
FRESH35_PACKAGES = ("pgmpy", "pygad", "pytorch_forecasting", "pytorch_tabular", "quantus", "se3_transformer_pytorch",
                    "shap", "tslearn")
# libraries of the thirty-seventh set, a sealed test set recorded before anyone working on the linter looked at them
# (benchmarks/fresh36_collect.py): each ships in a wheel of its own name but cockpit (in cockpit_for_pytorch); the
# needs they reach (backpack, a library of fresh4, segment_anything, fastremap, IPython, matplotlib, ...) are not
# counted; dynamic_network_architectures ran but its recording holds no site of it, so it is not named here; its
# training repositories are named in its data's meta["repos"]
FRESH36_PACKAGES = ("cellpose", "cockpit", "d2l", "fairlearn", "hippynn")
# libraries of the thirty-eighth set, a sealed test set recorded before anyone working on the linter looked at them
# (benchmarks/fresh37_collect.py): exactly the libraries whose own sites its merged recording holds (tltorch ran, its
# syncs all in tensorly, a library of an earlier set; nbeats_pytorch and torchao were written but not recorded);
# each ships in a wheel of its own name (pytorch_mppi in pytorch_mppi); the needs they reach (hydra, omegaconf,
# gymnasium, accelerate, loguru, tensorly, torchao, datasets, ...) are not counted; its training repositories are
# named in its data's meta["repos"]
FRESH37_PACKAGES = ("mbrl", "pytorch_mppi", "tez", "torchtune")
# libraries of the thirty-ninth set, a sealed test set recorded before anyone working on the linter looked at them
# (benchmarks/fresh38_collect.py): exactly the libraries whose own sites its merged recording holds; each ships in a
# wheel of its own name but all (in autonomous_learning_library) and lycoris (in lycoris_lora); the needs they reach
# (gymnasium, caskade, astropy, filterpy, torchvision, ...) are not counted; its training repositories are named in
# its data's meta["repos"]
FRESH38_PACKAGES = ("all", "basicsr", "caustics", "deep_sort_realtime", "facexlib", "lycoris")
# libraries of the fortieth set, a sealed test set recorded before anyone working on the linter looked at them
# (benchmarks/fresh39_collect.py): exactly the libraries whose own sites its merged recording holds (phi, PhiFlow,
# ran, its syncs all in phiml); each ships in a wheel of its own name; phiml and vmas are published as source
# distributions only (their pure-Python wheels are built); the needs they reach (autoray, autograd, rustworkx, gym,
# hdbscan, timm, transformers, scipy, ...) are not counted; its training repositories are named in its data's
# meta["repos"]
FRESH39_PACKAGES = ("ocnn", "pennylane", "phiml", "pyiqa", "torchsom", "vmas")
# libraries of the forty-first set, a sealed test set recorded before anyone working on the linter looked at them
# (benchmarks/fresh40_collect.py): exactly the libraries whose own sites its merged recording holds (GRAFX ran in
# the first GPU call with no site of its own and was dropped); each ships in a wheel of its own name but harmony (in
# harmony_pytorch) and deepali (in hf_deepali); the needs they reach (lightning, torchmetrics, monai, laplace,
# curvlinops, ...) are not counted; its training repositories are named in its data's meta["repos"]
FRESH40_PACKAGES = ("deepali", "finetuning_scheduler", "harmony", "landmarker", "lightning_uq_box")
# libraries of the forty-second set, a sealed test set recorded before anyone working on the linter looked at them
# (benchmarks/fresh41_collect.py): exactly the libraries whose own sites its merged recording holds; each ships in a
# wheel of its own name but optimum (optimum-quanto's package, in optimum_quanto); the needs they reach
# (torch_geometric, torchvision, accelerate, tensorboardX, numpy, ...) are not counted; its training repositories are
# named in its data's meta["repos"]
FRESH41_PACKAGES = ("onnx2torch", "optimum", "sahi", "score_models", "smalldiffusion", "supar",
                    "torch_geometric_signed_directed", "torchsparsegradutils")
# libraries of the forty-third set `fresh42`, a sealed test set recorded before anyone working on the linter looked at
# them (benchmarks/fresh42_collect.py): exactly the libraries whose own sites its merged recording holds; each ships
# in a wheel of its own name but pycvvdp (cvvdp's package) and dog (dog-optimizer's, a source distribution only);
# the needs they reach (kornia, transformers, torchvision, numpy, ...) are not counted; its training repositories
# are named in its data's meta["repos"]
FRESH42_PACKAGES = ("bert_score", "came_pytorch", "dog", "engression", "fastglmpca", "fastica_torch", "kornia_moons",
                    "pycvvdp")
# libraries of the forty-fourth set, a sealed test set recorded before anyone working on the linter looked at them
# (benchmarks/fresh43_collect.py): exactly the libraries whose own sites its merged recording holds (its other four,
# mlm_pytorch, pytorch_warmup, torchsampler and xgrammar, synchronised nowhere of their own); each ships in a wheel
# of its own name; the needs they reach (tensordict, pydantic, einx, x_mlps_pytorch, torchvision, numpy, ...) are
# not counted; its training repositories are named in its data's meta["repos"]
FRESH43_PACKAGES = ("tab_transformer_pytorch", "torchrl")
# packages whose wheel has another name: {package: wheel (and version key)}
WHEEL_OF = {"lightning_fabric": "pytorch_lightning", "pyro": "pyro_ppl", "ignite": "pytorch_ignite",
            "torchcrf": "pytorch_crf", "torchmin": "pytorch_minimize", "laplace": "laplace_torch",
            "curvlinops": "curvlinops_for_pytorch", "backpack": "backpack_for_pytorch", "asdl": "asdfghjkl",
            "nnAudio": "nnaudio", "cooper": "cooper_optim", "kan": "pykan", "blitz": "blitz_bayesian_pytorch",
            "info_nce": "info_nce_pytorch", "open_clip": "open_clip_torch", "open_clip_train": "open_clip_torch",
            "esm": "fair_esm", "tltorch": "tensorly_torch", "torchhd": "torch_hd", "FrEIA": "freia",
            "hummingbird": "hummingbird_ml", "rsl_rl": "rsl_rl_lib", "art": "adversarial_robustness_toolbox",
            "castle": "gcastle", "deel": "deel_torchlip", "torchpme": "torch_pme", "trak": "traker",
            "cheetah": "cheetah_accelerator", "chop": "chop_pytorch",
            "pyhessian": "PyHessian", "pina": "pina_mathlab", "ebm": "ebmkit",
            "autoFRK": "autofrk", "bayesian_changepoint_detection": "bayesian_changepoint", "ivon": "ivon_opt",
            "interpol": "torch_interpol", "cola": "cola_ml", "iTransformer": "itransformer",
            "betty": "betty_ml", "ltn": "LTNtorch",
            "pesto": "pesto_pitch", "torchnlp": "pytorch_nlp", "cockpit": "cockpit_for_pytorch",
            "all": "autonomous_learning_library", "lycoris": "lycoris_lora",
            "harmony": "harmony_pytorch", "deepali": "hf_deepali",
            "optimum": "optimum_quanto", "pycvvdp": "cvvdp", "dog": "dog_optimizer"}
# packages published as a source distribution only: their pure-Python wheel is built (`pip wheel`) to score them
SDIST_ONLY = {"normflows", "encodec", "pfrl", "dadaptation", "torchfm", "neurodiffeq", "freia", "qpth", "torchiva",
              "mpc", "fvcore", "traker", "fairscale", "phiml", "vmas", "dog_optimizer"}
SETS = {"tuned": DATA, "heldout": HELDOUT_DATA, "fresh": FRESH_DATA, "fresh2": FRESH2_DATA, "fresh3": FRESH3_DATA,
        "fresh4": FRESH4_DATA, "fresh5": FRESH5_DATA, "fresh6": FRESH6_DATA, "fresh7": FRESH7_DATA,
        "fresh8": FRESH8_DATA, "fresh9": FRESH9_DATA, "fresh10": FRESH10_DATA,
        "fresh11": FRESH11_DATA, "fresh12": FRESH12_DATA, "fresh13": FRESH13_DATA, "fresh14": FRESH14_DATA,
        "fresh15": FRESH15_DATA, "fresh16": FRESH16_DATA, "fresh17": FRESH17_DATA,
        "fresh18": FRESH18_DATA, "fresh19": FRESH19_DATA, "fresh20": FRESH20_DATA, "fresh21": FRESH21_DATA,
        "fresh22": FRESH22_DATA, "fresh23": FRESH23_DATA, "fresh24": FRESH24_DATA,
        "fresh25": FRESH25_DATA, "fresh26": FRESH26_DATA,
        "fresh27": FRESH27_DATA, "fresh28": FRESH28_DATA,
        "fresh29": FRESH29_DATA, "fresh30": FRESH30_DATA,
        "fresh31": FRESH31_DATA, "fresh32": FRESH32_DATA,
        "fresh33": FRESH33_DATA, "fresh34": FRESH34_DATA, "fresh35": FRESH35_DATA,
        "fresh36": FRESH36_DATA, "fresh37": FRESH37_DATA, "fresh38": FRESH38_DATA,
        "fresh39": FRESH39_DATA, "fresh40": FRESH40_DATA,
        "fresh41": FRESH41_DATA, "fresh42": FRESH42_DATA,
        "fresh43": FRESH43_DATA}
# the libraries each held-out set counts (the tuned set counts every package)
SET_PACKAGES = {"heldout": HELDOUT_PACKAGES, "fresh": FRESH_PACKAGES, "fresh2": FRESH2_PACKAGES,
                "fresh3": FRESH3_PACKAGES, "fresh4": FRESH4_PACKAGES, "fresh5": FRESH5_PACKAGES,
                "fresh6": FRESH6_PACKAGES, "fresh7": FRESH7_PACKAGES, "fresh8": FRESH8_PACKAGES,
                "fresh9": FRESH9_PACKAGES, "fresh10": FRESH10_PACKAGES, "fresh11": FRESH11_PACKAGES,
                "fresh12": FRESH12_PACKAGES, "fresh13": FRESH13_PACKAGES, "fresh14": FRESH14_PACKAGES,
                "fresh15": FRESH15_PACKAGES, "fresh16": FRESH16_PACKAGES, "fresh17": FRESH17_PACKAGES,
                "fresh18": FRESH18_PACKAGES,
                "fresh19": FRESH19_PACKAGES, "fresh20": FRESH20_PACKAGES, "fresh21": FRESH21_PACKAGES,
                "fresh22": FRESH22_PACKAGES, "fresh23": FRESH23_PACKAGES, "fresh24": FRESH24_PACKAGES,
                "fresh25": FRESH25_PACKAGES, "fresh26": FRESH26_PACKAGES,
                "fresh27": FRESH27_PACKAGES, "fresh28": FRESH28_PACKAGES,
                "fresh29": FRESH29_PACKAGES, "fresh30": FRESH30_PACKAGES,
                "fresh31": FRESH31_PACKAGES, "fresh32": FRESH32_PACKAGES,
                "fresh33": FRESH33_PACKAGES, "fresh34": FRESH34_PACKAGES,
                "fresh35": FRESH35_PACKAGES, "fresh36": FRESH36_PACKAGES,
                "fresh37": FRESH37_PACKAGES, "fresh38": FRESH38_PACKAGES,
                "fresh39": FRESH39_PACKAGES, "fresh40": FRESH40_PACKAGES,
                "fresh41": FRESH41_PACKAGES, "fresh42": FRESH42_PACKAGES,
                "fresh43": FRESH43_PACKAGES}
sys.path.insert(0, str(REPO))

from syncscan.join import statement_span  # noqa: E402

# -- categories of a runtime site ----------------------------------------------------------------
# direct:   the line called a torch function or tensor method that synchronised: what a linter sees
# module:   the line called a torch nn.Module / optimizer / DataLoader whose own code synchronised
#           (the sync is inside torch; the line itself is a plain call)
# backward: the sync ran in an autograd node during backward (it has no source line of its own)
# driver:   the harness (benchmarks/accuracy_collect.py), not counted
CATEGORIES = ("direct", "module", "backward", "driver")
_INSIDE_TORCH = ("torch/nn/modules/", "torch/optim/", "torch/utils/data/", "torch/amp/")


def category(site: dict) -> str:
    if site.get("backward"):
        return "backward"
    if site["package"] == "driver":
        return "driver"
    nearest = (site.get("torch_frames") or [""])[0]
    if nearest.startswith(_INSIDE_TORCH):
        return "module"
    return "direct"


# torch function the site called -> the rule that should flag it (for the to-do list of misses)
OP_RULE = {
    "Tensor.item": "SYN101", "Tensor.tolist": "SYN102",
    "Tensor.__int__": "SYN103", "Tensor.__float__": "SYN103", "Tensor.__complex__": "SYN103",
    "Tensor.__bool__": "SYN104", "torch.is_nonzero": "SYN104",
    "Tensor.__format__": "SYN105", "Tensor.__repr__": "SYN105", "Tensor.__str__": "SYN105",
    "torch.equal": "SYN107", "torch.allclose": "SYN107", "Tensor.equal": "SYN107", "Tensor.allclose": "SYN107",
    "Tensor.__index__": "SYN108",
    "Tensor.cpu": "SYN201", "Tensor.numpy": "SYN201", "Tensor.__array__": "SYN201",
    "torch.tensor": "SYN202", "torch.as_tensor": "SYN202", "Tensor.new_tensor": "SYN202",
    "torch.from_numpy": "SYN202",
    "Tensor.cuda": "SYN204",
    "Tensor.__setitem__": "SYN303", "Tensor.index_put_": "SYN303", "Tensor.index_put": "SYN303",
    "torch.nonzero": "SYN301", "Tensor.nonzero": "SYN301", "torch.argwhere": "SYN301",
    "Tensor.argwhere": "SYN301", "torch.where": "SYN301",
    "Tensor.__getitem__": "SYN302",
    "torch.masked_select": "SYN304", "Tensor.masked_select": "SYN304",
    "torch.unique": "SYN305", "Tensor.unique": "SYN305", "torch.unique_consecutive": "SYN305",
    "Tensor.unique_consecutive": "SYN305",
    "torch.bincount": "SYN307", "Tensor.bincount": "SYN307",
    "Tensor.masked_fill": "SYN308", "Tensor.masked_fill_": "SYN308", "torch.masked_fill": "SYN308",
    "torch.repeat_interleave": "SYN401", "Tensor.repeat_interleave": "SYN401",
    "torch.nn.functional.one_hot": "SYN402",
    "torch.histc": "SYN403", "Tensor.histc": "SYN403",
    "torch.nn.utils.clip_grad.clip_grad_norm_": "SYN406", "torch.normal": "SYN409",
    "torch.cuda.synchronize": "SYN501", "torch.cuda.Event.synchronize": "SYN502",
    "Tensor.record_stream": "SYN502", "torch.cuda.empty_cache": "SYN503",
    "torch.nn.functional.ctc_loss": "SYN208",
    # ops whose `Scalar` arguments read a tensor with .item() (rules/syn109_tensor_as_scalar_argument.py)
    **{f"{ns}.{op}{s}": "SYN109" for ns in ("torch", "Tensor") for s in ("", "_")
       for op in ("add", "sub", "subtract", "rsub", "index_add", "addmm", "addmv", "addr", "addbmm", "baddbmm",
                  "addcmul", "addcdiv", "renorm")},
    **{f"torch.nn.functional.{op}": "SYN109" for op in ("leaky_relu", "elu", "softplus", "hardtanh", "threshold")},
    "torch.full_like": "SYN109", "torch._ops.torchvision.nms": "SYN309", "torch._grouped_mm": "SYN407",
    "torch.sparse_coo_tensor": "SYN411",
}
SIZE_OPS = {"arange", "zeros", "ones", "empty", "full", "randn", "rand", "randint", "narrow", "linspace",
            "split", "view", "reshape", "expand", "new_zeros", "new_ones", "new_empty", "new_full",
            "zeros_like", "repeat", "tile", "interpolate", "pad", "roll", "topk", "chunk", "tensor_split",
            "flatten", "unflatten", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d"}


_BUILTIN_CALL = re.compile(r"(?<![.\w])(max|min|abs|sum|any|all|round)\(")


def split_op(key: str) -> tuple[str, str]:
    """'Tensor.__getitem__ [index: bool cuda tensor]' -> ('Tensor.__getitem__', 'index: bool cuda tensor')."""
    if key.endswith("]") and " [" in key:
        op, detail = key.split(" [", 1)
        return op, detail[:-1]
    return key, ""


# torch.linalg functions with no `_ex` variant that read the GPU on the host (SYN410; the recorder names them
# `torch.linalg.linalg_<name>`)
_HOST_CHECKED = frozenset(f"linalg_{n}" for n in ("eigh", "eigvalsh", "svd", "svdvals", "pinv", "eig", "eigvals",
                                                   "lstsq", "matrix_rank", "cond", "matrix_exp"))


def expected_rule(site: dict) -> str:
    """The rule that should catch a site, from the torch function it called, what it was called
    with (recorded at the time of the sync) and its source."""
    ops = site.get("ops") or {}
    # "?": the sync ran where the op recorder's mode was not active (autograd's device thread, e.g. an
    # adjoint solve inside backward); any named op of the same line says more
    named = {k: n for k, n in ops.items() if k != "?"} or ops
    op, detail = split_op(max(named, key=named.get)) if named else ("?", "")
    src = site.get("source", "")
    index, _, value = detail.partition("; value: ")
    if op == "Tensor.__getitem__":
        if "bool cuda" in index:
            return "SYN302"
        if "cpu" in index or "list" in index or "tuple of" in index:  # (`x[:, (i, j)]`: a host sequence)
            return "SYN206"
        if "slice with tensor bound" in index:
            return "SYN108"
    if op == "Tensor.__setitem__":
        if "bool cuda" in index:
            return "SYN303"
        if "cpu" in index or "list" in index:
            return "SYN206"
        if value in ("int", "float", "bool"):
            return "SYN207"
    if op in ("torch.tensor", "torch.as_tensor", "Tensor.new_tensor"):
        return "SYN203" if "cuda" in detail else "SYN202"
    if op in ("Tensor.to", "Tensor.cuda", "Tensor.copy_", "Tensor.type_as", "Tensor.type"):
        if "cuda" in detail and op != "Tensor.cuda" or "cpu" in src:
            return "SYN201"
        return "SYN204"
    if op == "Tensor.__bool__" and _BUILTIN_CALL.search(src):
        return "SYN106"
    if op in OP_RULE:
        return OP_RULE[op]
    if op.rsplit(".", 1)[-1] in _HOST_CHECKED or op in ("torch.svd", "torch.pinverse", "torch.matrix_exp"):
        return "SYN410"
    if op.startswith("torch.linalg.") or op in ("torch.cholesky", "torch.inverse"):
        return "SYN404"
    if op.startswith("torch.distributions."):
        return "SYN405"
    if op.rsplit(".", 1)[-1] in SIZE_OPS:
        return "SYN108"
    return "no rule (" + op + ")"


# -- sources ----------------------------------------------------------------------------------------

def _clean_version(v: str) -> str:
    return v.split("+")[0]


def ensure_sources(meta: dict, quiet: bool = False, packages: tuple = PACKAGES, repo_files: dict | None = None) -> dict:
    """Download (pip download --no-deps) and unpack the wheels of the measured versions, and copy the
    files `repo_files` ({repository: [path in it]}) of the measured training repositories (meta["repos"])
    at their commits; return {package: root folder that holds `<package>/...`}. Raises RuntimeError when
    pip or git fails."""
    versions = meta["versions"]
    py = "".join(versions["python"].split(".")[:2])
    wheels = CACHE / "wheels"
    roots = {}
    for pkg in packages:
        wheel = WHEEL_OF.get(pkg, pkg)
        ver = versions.get(wheel, "")
        if not ver or ver.startswith("unavailable"):
            continue
        ver = _clean_version(ver)
        root = CACHE / "src" / f"{pkg}-{ver}"
        roots[pkg] = root
        if (root / pkg).is_dir() or (root / f"{pkg}.py").is_file():
            continue
        wheels.mkdir(parents=True, exist_ok=True)
        found = sorted(wheels.glob(f"{wheel}-{ver}-*.whl"))
        if not found:
            # (older manylinux tags too: deeptime's wheel, fresh28, is manylinux_2_17 / manylinux2014 only)
            cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                   "--platform", "manylinux_2_28_x86_64", "--platform", "manylinux_2_17_x86_64",
                   "--platform", "manylinux2014_x86_64", "--python-version", py,
                   "-d", str(wheels), f"{wheel}=={ver}"]
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            if r.returncode != 0 and wheel in SDIST_ONLY:  # no wheel on the index: build the pure-Python one
                r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(wheels),
                                    f"{wheel}=={ver}"], capture_output=True, text=True, timeout=600)
            if r.returncode != 0:
                raise RuntimeError(f"pip download {wheel}=={ver} failed: {r.stderr.strip()[-300:]}")
            found = sorted(wheels.glob(f"{wheel}-{ver}-*.whl"))
            if not found:
                raise RuntimeError(f"pip download {wheel}=={ver}: no wheel appeared in {wheels}")
        tmp = root.with_name(root.name + ".tmp")
        with zipfile.ZipFile(found[0]) as z:
            # a package's modules, or the one module of a library published as a single file (rtdl_num_embeddings)
            members = [m for m in z.namelist() if (m.startswith(pkg + "/") and m.endswith(".py")) or m == f"{pkg}.py"]
            z.extractall(tmp, members)
        os.replace(tmp, root)
        if not quiet:
            print(f"unpacked {found[0].name} -> {root}", file=sys.stderr)
    for name, r in (meta.get("repos") or {}).items():
        root = CACHE / "src" / f"{name}-{r['commit'][:12]}"
        paths = sorted((repo_files or {}).get(name, ()))
        if any(not (root / name / f).is_file() for f in paths):  # copied before for fewer files
            shutil.rmtree(root / name, ignore_errors=True)
        if paths:
            copy_repo(r["github"], r["commit"], paths, root / name)
        roots[name] = root
    return roots


def repo_files(data: dict) -> dict:
    """{repository: the files of it that hold a recorded site or an executed line}: what scoring needs."""
    repos = set(data["meta"].get("repos") or {})
    out: dict = defaultdict(set)
    for rel in [s["path"] for s in data["sites"]] + list(data.get("executed", {})):
        top, _, rest = rel.partition("/")
        if top in repos and rest:
            out[top].add(rest)
    return out


def _mirror(owner_name: str) -> Path | None:
    """A local bare copy of a GitHub repository (the workplace's `fetch` puts them under /work/.mirror)."""
    d = Path("/work/.mirror") / owner_name.replace("/", "+") / "repo"
    if (d / ".git").is_dir():  # a snapshot kept as a checkout without its files
        d = d / ".git"
    return d if d.is_dir() else None


def copy_repo(owner_name: str, commit: str, paths: list, dest: Path) -> Path:
    """Copy `paths` (all files when empty) of a GitHub repository at `commit` into dest, from a local
    mirror or, failing that, a clone. Written atomically: a copy that exists is complete."""
    if dest.is_dir():
        return dest
    git_dir, clone = _mirror(owner_name), None
    try:
        if git_dir is None:
            clone = Path(tempfile.mkdtemp(prefix="syncscan-clone-"))
            subprocess.run(["git", "clone", "--quiet", "--bare", f"https://github.com/{owner_name}.git", str(clone)],
                           check=True, capture_output=True, timeout=900)
            git_dir = clone
        tar = subprocess.run(["git", f"--git-dir={git_dir}", "archive", "--format=tar", commit, *paths],
                             check=True, capture_output=True, timeout=600).stdout
    except (OSError, subprocess.SubprocessError) as e:
        raise RuntimeError(f"cannot copy {owner_name}@{commit[:12]}: {e}") from None
    finally:
        if clone is not None:
            shutil.rmtree(clone, ignore_errors=True)
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(tmp)], input=tar, check=True)
    os.replace(tmp, dest)
    return dest


def local_path(pkg: str, rel: str, roots: dict) -> Path | None:
    if rel.startswith("/"):  # a file outside any package (generated code in a temporary folder)
        return None
    if pkg == "repo":
        return REPO / rel
    if pkg in roots:
        return roots[pkg] / rel
    return None


# -- lint -------------------------------------------------------------------------------------------

def linter_at(rev: str) -> Path:
    """The linter (syncscan/ and rules/) of a git revision of this repository, unpacked under .bench/linters:
    run with it as the working folder, `python -m syncscan` imports that copy, not the installed one. Its
    rules go inside the package (syncscan/rules, as an install maps them), or the installed package's
    finder would supply the working tree's rules to the old engine."""
    sha = subprocess.run(["git", "rev-parse", "--verify", f"{rev}^{{commit}}"], capture_output=True, text=True,
                         cwd=REPO, check=False)
    if sha.returncode != 0:
        raise RuntimeError(f"--linter {rev}: not a commit of this repository")
    dest = CACHE / "linters" / sha.stdout.strip()[:12]
    if not dest.is_dir():
        tar = subprocess.run(["git", "archive", "--format=tar", sha.stdout.strip(), "syncscan", "rules"],
                             capture_output=True, cwd=REPO, check=True).stdout
        tmp = dest.with_name(dest.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        subprocess.run(["tar", "-x", "-C", str(tmp)], input=tar, check=True)
        os.replace(tmp / "rules", tmp / "syncscan" / "rules")
        os.replace(tmp, dest)
    return dest


def lint(files: list[Path], linter: Path | None = None) -> list[dict]:
    """`syncscan lint --all --format json --no-cache` on the files, as a user would run it (with the
    linter unpacked at `linter` when given)."""
    out = []
    chunk = 400
    for i in range(0, len(files), chunk):
        cmd = [sys.executable, "-m", "syncscan", "lint", "--all", "--format", "json", "--no-cache",
               "--exit-zero", *map(str, files[i:i + chunk])]
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=linter or REPO, timeout=900)
        if r.returncode != 0:
            raise RuntimeError(f"syncscan lint failed ({r.returncode}): {r.stderr[-500:]}")
        out.extend(json.loads(r.stdout or "[]"))
    return out


# -- merge (collector output -> committed data) ----------------------------------------------------

def _ranges(lines):
    out = []
    for n in sorted(set(lines)):
        if out and n == out[-1][1] + 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    return out


def _unranges(ranges):
    s = set()
    for a, b in ranges:
        s.update(range(a, b + 1))
    return s


def merge(raw_paths: list[str], out: Path = DATA, extra_versions: dict | None = None) -> dict:
    sites: dict = {}
    executed: dict = defaultdict(set)
    runs, metas, unattributed = [], [], 0
    for p in raw_paths:
        raw = json.loads(Path(p).read_text())
        metas.append(raw["meta"])
        unattributed += raw.get("unattributed", 0)
        have = {(r["model"], r.get("mode")) for r in runs}
        runs.extend(r for r in raw["models"] if (r["model"], r.get("mode")) not in have)
        for s in raw["sites"]:
            key = (s["path"], s["line"])
            m = sites.get(key)
            if m is None:
                sites[key] = m = {k: s[k] for k in ("package", "path", "line", "function", "source",
                                                    "torch_frames", "callers", "backward")}
                m.update(count=0, models={}, modes=[], ops={}, kinds=[])
            m["count"] += s["count"]
            for k, v in s["models"].items():
                m["models"][k] = m["models"].get(k, 0) + v
            for k, v in s["ops"].items():
                m["ops"][k] = m["ops"].get(k, 0) + v
            m["modes"] = sorted(set(m["modes"]) | set(s["modes"]))
            m["kinds"] = sorted(set(m["kinds"]) | set(s["kinds"]))
            m["backward"] = m["backward"] or s["backward"]
        for rel, lines in raw["executed"].items():
            executed[rel].update(lines)
    meta = dict(metas[0])
    meta.pop("started", None)
    meta["versions"] = {**meta["versions"], **(extra_versions or {})}
    data = {
        "about": "Source lines that synchronised (CPU waited for the GPU) when real model code ran under "
                 "torch.cuda.set_sync_debug_mode('warn'); recorded by benchmarks/accuracy_collect.py, "
                 "measured by benchmarks/accuracy.py. `path` is relative to site-packages (or to the "
                 "repository for package 'repo'); `executed` holds the line ranges that ran during the "
                 "measured steps, per file, for counting false flags.",
        "meta": meta,
        "runs": runs,
        "unattributed": unattributed,
        "sites": sorted(sites.values(), key=lambda s: (s["package"], s["path"], s["line"])),
        "executed": {rel: _ranges(v) for rel, v in sorted(executed.items())},
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")
    return data


# -- measure ---------------------------------------------------------------------------------------

def _pkg_of(rel: str, packages: set) -> str:
    top = rel.split("/")[0]
    return top if top in packages else "repo"


def counted_packages(data: dict) -> set | None:
    """The packages whose sites the recall counts: every one for the tuned set; for a held-out set, its
    libraries and training repositories (not the libraries of another set it reaches, nor the harness), and
    "other": files outside any package (code a library generated into a temporary folder), which stay
    unresolved."""
    own = SET_PACKAGES.get(data.get("meta", {}).get("set"))
    if own is None:
        return None
    return set(own) | set(data["meta"].get("repos") or {}) | {"other"}


def measure(data: dict, roots: dict, false_flags: bool = True, linter: Path | None = None) -> dict:
    counted = counted_packages(data)
    sites = [s for s in data["sites"] if counted is None or s["package"] in counted or s["package"] == "driver"]
    # sites in packages outside the counted set (tuned libraries under a held-out one), listed apart
    apart = [s for s in data["sites"] if counted is not None and s["package"] not in counted | {"driver"}]
    cat = {id(s): category(s) for s in sites}
    # paths: resolve and check the recorded source text still matches (fixtures may be edited)
    resolved, stale, unresolved = {}, [], []
    for s in sites:
        if s["package"] == "driver":  # the harness's own lines (its loss.backward() included)
            continue
        p = local_path(s["package"], s["path"], roots)
        if p is None or not p.is_file():
            unresolved.append(s)
            continue
        lines = p.read_text(encoding="utf-8").splitlines()
        if s["line"] > len(lines) or lines[s["line"] - 1].strip() != s["source"]:
            stale.append(s)
            continue
        resolved[id(s)] = p
    files = {resolved[id(s)] for s in sites if id(s) in resolved}
    exec_files = {}
    if false_flags:
        for rel, ranges in data.get("executed", {}).items():
            top = rel.split("/")[0].removesuffix(".py")  # a single-module library's file is its package
            pkg = top if top in roots else "repo"
            if counted is not None and top not in counted:
                continue
            p = local_path(pkg, rel, roots)
            if p is not None and p.is_file() and p.suffix == ".py":
                exec_files[p] = _unranges(ranges)
        files |= set(exec_files)
    findings = lint(sorted(files), linter)
    by_file = defaultdict(list)
    for f in findings:
        by_file[str(Path(f["path"]).resolve() if not os.path.isabs(f["path"]) else Path(f["path"]))].append(f)

    def hits(path: Path, line: int):
        a, b = statement_span(str(path), line)
        return [f for f in by_file.get(str(path), []) if a <= f["line"] <= b or f["line"] <= a <= f["end_line"]]

    matched = set()
    rows = []
    for s in sites:
        if id(s) not in resolved:
            continue
        h = hits(resolved[id(s)], s["line"])
        for f in h:
            matched.add(id(f))
        rows.append({"site": s, "category": cat[id(s)], "findings": h, "found": bool(h),
                     "with_rewrite": any(f.get("suggestion") or f.get("fix") for f in h),
                     "hot": any(f.get("context") == "hot" for f in h),
                     "expected": expected_rule(s)})
    result = {"rows": rows, "stale": stale, "unresolved": unresolved, "n_findings": len(findings), "n_files": len(files),
              "false_flags": None, "apart": apart}
    if false_flags:
        ff, confirmed, unexecuted = [], [], []
        for path, executed in exec_files.items():
            for f in by_file.get(str(path), []):
                if id(f) in matched:
                    confirmed.append(f)
                    continue
                a, b = statement_span(str(path), f["line"])
                if executed & set(range(a, max(b, f["end_line"]) + 1)):
                    ff.append(f)
                else:
                    unexecuted.append(f)
        result["false_flags"] = {"flags": ff, "confirmed": confirmed, "unexecuted": unexecuted,
                                 "n_exec_files": len(exec_files),
                                 "n_exec_lines": sum(len(v) for v in exec_files.values())}
    return result


def _ratio(a, b):
    return f"{a}/{b} = {100 * a / b:.1f}%" if b else "0/0"


def recall_figures(rows: list[dict], cats=("direct",)) -> dict:
    rs = [r for r in rows if r["category"] in cats]
    n = len(rs)
    return {"sites": n, "found": sum(r["found"] for r in rs),
            "found_with_rewrite": sum(r["with_rewrite"] for r in rs),
            "recall": (sum(r["found"] for r in rs) / n) if n else 0.0,
            "recall_with_rewrite": (sum(r["with_rewrite"] for r in rs) / n) if n else 0.0}


def _where(s: dict) -> str:
    return f"{s['path']}:{s['line']}"


def _models(s: dict) -> str:
    ms = sorted({k.split("/")[0] for k in s["models"]})
    return ", ".join(ms[:3]) + (f" +{len(ms) - 3}" if len(ms) > 3 else "")


def report(res: dict, data: dict, fmt: str = "text", examples: int = 8) -> str:
    rows = res["rows"]
    md = fmt == "md"
    out = []
    h = (lambda t: out.append(f"\n### {t}\n")) if md else (lambda t: out.append(f"\n== {t}"))
    meta = data["meta"]
    v = meta["versions"]
    if meta.get("set") in SET_PACKAGES:
        wheels = dict.fromkeys(WHEEL_OF.get(k, k) for k in SET_PACKAGES[meta["set"]])  # one per wheel, in order
        libs = ", ".join(f"{w} {v[w]}" for w in wheels if w in v)
        repos = ", ".join(f"{r['github']}@{r['commit'][:10]}" for r in (meta.get("repos") or {}).values())
        out.append(f"Device {meta['device']}, torch {v['torch']}, python {v.get('python')}; {libs}; "
                   f"repositories {repos}; collected {meta['date']}.")
    else:
        out.append(f"Device {meta['device']}, torch {v['torch']}, transformers {v.get('transformers')}, "
                   f"torchvision {v.get('torchvision')}, torchaudio {v.get('torchaudio')}, timm {v.get('timm')}, "
                   f"python {v.get('python')}; collected {meta['date']}.")
    runs = data["runs"]
    ok = [r for r in runs if r.get("status") == "ok"]
    out.append(f"Runs: {len(ok)} model/mode steps measured ({len({r['model'] for r in ok})} models); "
               f"{len(runs) - len(ok)} failed or skipped. Runtime sites: {len(data['sites'])} distinct "
               f"lines; by category: " + ", ".join(f"{c} {sum(r['category'] == c for r in rows)}"
                                                   for c in CATEGORIES[:3])
               + f", driver {sum(category(s) == 'driver' for s in data['sites'])}. "
               f"Lint: {res['n_findings']} findings in {res['n_files']} files.")
    if res["unresolved"]:
        out.append(f"WARNING: {len(res['unresolved'])} sites in packages whose source was not fetched "
                   f"(not counted): " + ", ".join(_where(s) for s in res["unresolved"][:10]))
    if res["stale"]:
        out.append(f"WARNING: {len(res['stale'])} sites whose recorded source no longer matches the file "
                   f"(not counted): " + ", ".join(_where(s) for s in res["stale"][:10]))
    if res.get("apart"):
        apart = Counter(s["package"] for s in res["apart"])
        out.append(f"Sites in libraries of another set (tuned, or the other held-out one) reached from this one "
                   f"(not counted): {len(res['apart'])} ("
                   + ", ".join(f"{k} {n}" for k, n in sorted(apart.items())) + ").")
    h("Recall")
    direct = recall_figures(rows)
    allc = recall_figures(rows, ("direct", "module", "backward"))
    in_scope = recall_figures([r for r in rows if not r["expected"].startswith("no rule")])
    tbl = [("direct sites (the line called the torch op that synced)", direct),
           ("direct sites of an op the rule catalog covers", in_scope),
           ("all sites (+ inside torch modules, backward)", allc)]
    if md:
        out.append("| sites | n | found | recall | with a concrete rewrite |")
        out.append("| --- | ---: | ---: | ---: | ---: |")
        for name, f in tbl:
            out.append(f"| {name} | {f['sites']} | {f['found']} | {100 * f['recall']:.1f}% | "
                       f"{f['found_with_rewrite']} ({100 * f['recall_with_rewrite']:.1f}%) |")
    else:
        for name, f in tbl:
            out.append(f"{name}: recall {_ratio(f['found'], f['sites'])}, "
                       f"with rewrite {_ratio(f['found_with_rewrite'], f['sites'])}")
    found = [r for r in rows if r["category"] == "direct" and r["found"]]
    out.append(("\n" if md else "") + f"Found direct sites flagged hot: {sum(r['hot'] for r in found)}, cold only: "
               f"{sum(not r['hot'] for r in found)}.")

    def table(title, key_of):
        h(title)
        groups = defaultdict(list)
        for r in rows:
            if r["category"] != "direct":
                continue
            for k in key_of(r):
                groups[k].append(r)
        if md:
            out.append("| | sites | found | recall | with rewrite |")
            out.append("| --- | ---: | ---: | ---: | ---: |")
        for k in sorted(groups):
            g = groups[k]
            f, w = sum(r["found"] for r in g), sum(r["with_rewrite"] for r in g)
            if md:
                out.append(f"| {k} | {len(g)} | {f} | {100 * f / len(g):.0f}% | {100 * w / len(g):.0f}% |")
            else:
                out.append(f"  {k:45s} {_ratio(f, len(g)):>20s}   rewrite {_ratio(w, len(g))}")
    table("Recall per package", lambda r: [r["site"]["package"]])
    table("Recall per model", lambda r: sorted({k.split("/")[0] for k in r["site"]["models"]}))
    table("Recall per mode", lambda r: r["site"]["modes"])
    table("Recall per expected rule", lambda r: [r["expected"]])

    h("Missed direct sites, by the rule that should catch them")
    missed = defaultdict(list)
    for r in rows:
        if r["category"] == "direct" and not r["found"]:
            missed[r["expected"]].append(r)
    for rule in sorted(missed):
        out.append(("\n" if md else "") + f"{rule} ({len(missed[rule])}):")
        for r in sorted(missed[rule], key=lambda r: _where(r["site"])):
            s = r["site"]
            ops = ",".join(sorted(s["ops"]))
            out.append(f"- `{_where(s)}` `{s['source']}` — {ops}; {s['count']}x; {_models(s)}")
    nr = [r for r in rows if r["category"] == "direct" and r["found"] and not r["with_rewrite"]]
    if nr:
        h("Found, but without a concrete rewrite")
        for r in sorted(nr, key=lambda r: _where(r["site"])):
            codes = ",".join(sorted({f["code"] for f in r["findings"]}))
            out.append(f"- `{_where(r['site'])}` `{r['site']['source']}` — {codes}")
    h("Sites inside torch (the line called an nn.Module whose torch code synced) and in backward")
    bw = [s for s in data["sites"] if s["package"] == "driver" and s.get("backward")]
    if bw:
        per_model = Counter()
        for s in bw:
            for k, n in s["models"].items():
                per_model[k.split("/")[0]] += n
        out.append(f"Syncs during the harness's `loss.backward()` (autograd nodes; no source line of their own): "
                   f"{sum(per_model.values())}, in " + ", ".join(f"{m} {n}" for m, n in sorted(per_model.items()))
                   + ".\n")
    for r in sorted((r for r in rows if r["category"] in ("module", "backward")), key=lambda r: _where(r["site"])):
        s = r["site"]
        inner = next((t for t in reversed(s["torch_frames"]) if "module.py" not in t), s["torch_frames"][-1]
                     if s["torch_frames"] else "")
        out.append(f"- [{r['category']}] `{_where(s)}` `{s['source']}` — in {inner}; "
                   f"{'found' if r['found'] else 'not flagged'}; {_models(s)}")
    ffr = res["false_flags"]
    if ffr is not None:
        h("False flags: findings on statements that ran and never synced")
        flags, conf, unex = ffr["flags"], ffr["confirmed"], ffr["unexecuted"]
        out.append(f"Over {ffr['n_exec_files']} files that ran ({ffr['n_exec_lines']} executed lines): "
                   f"{len(conf) + len(flags)} findings on executed statements, {len(conf)} confirmed by a runtime "
                   f"sync, {len(flags)} never synced (precision on executed code "
                   f"{100 * len(conf) / max(len(conf) + len(flags), 1):.1f}%); {len(unex)} more findings in "
                   f"code that did not run (not judged).")
        per = defaultdict(lambda: [0, 0, 0])
        for f in conf:
            per[f["code"]][0] += 1
        for f in flags:
            per[f["code"]][1] += 1
        for f in unex:
            per[f["code"]][2] += 1
        if md:
            out.append("\n| rule | confirmed | never synced | hot ones never synced | did not run |")
            out.append("| --- | ---: | ---: | ---: | ---: |")
        hot_ff = Counter(f["code"] for f in flags if f.get("context") == "hot")
        for code in sorted(per):
            c, n, u = per[code]
            out.append(f"| {code} | {c} | {n} | {hot_ff[code]} | {u} |" if md else
                       f"  {code}: confirmed {c}, never synced {n} ({hot_ff[code]} hot), did not run {u}")
        by_rule = defaultdict(list)
        for f in flags:
            by_rule[f["code"]].append(f)
        for code in sorted(by_rule):
            out.append(("\n" if md else "") + f"{code} never synced ({len(by_rule[code])}), examples:")
            for f in sorted(by_rule[code], key=lambda f: (f.get("context") != "hot", f["path"], f["line"]))[:examples]:
                out.append(f"- `{_short_path(f['path'])}:{f['line']}` [{f.get('context')}] `{_line(f)}` — "
                           f"{f['message']}")
    return "\n".join(out)


def _line(f: dict) -> str:
    try:
        return Path(f["path"]).read_text(encoding="utf-8").splitlines()[f["line"] - 1].strip()[:120]
    except (OSError, IndexError):
        return "?"


def _short_path(p: str) -> str:
    try:  # a fetched source: .bench/src/<package>-<version>/<package>/...
        return "/".join(Path(p).resolve().relative_to((CACHE / "src").resolve()).parts[1:])
    except ValueError:
        pass
    parts = Path(p).parts
    for i, part in enumerate(parts):
        if part in PACKAGES or part == "fixtures":
            return "/".join(parts[i:])
    return p


def figures(res: dict) -> dict:
    d = recall_figures(res["rows"])
    a = recall_figures(res["rows"], ("direct", "module", "backward"))
    out = {"direct": d, "all": a,
           "catalog": recall_figures([r for r in res["rows"] if not r["expected"].startswith("no rule")])}
    if res["false_flags"] is not None:
        ffr = res["false_flags"]
        out["false_flags"] = {"confirmed": len(ffr["confirmed"]), "never_synced": len(ffr["flags"]),
                              "not_run": len(ffr["unexecuted"]),
                              "per_rule": dict(Counter(f["code"] for f in ffr["flags"]))}
    return out


def measure_set(path: Path, false_flags: bool = True, linter: str | None = None, quiet: bool = False) -> tuple[dict, dict]:
    """(the set's data, `measure`'s result) for the sites file at `path`, its sources fetched, with the linter of
    the revision `linter` (None: this tree)."""
    data = json.loads(path.read_text())
    packages = PACKAGES + SET_PACKAGES.get(data["meta"].get("set"), ())
    roots = ensure_sources(data["meta"], quiet=quiet, packages=packages, repo_files=repo_files(data))
    return data, measure(data, roots, false_flags=false_flags, linter=linter_at(linter) if linter else None)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return _main(argv)
    except (RuntimeError, OSError, ValueError) as e:  # a missing data file, pip or git failing: one line
        print(f"accuracy.py: {e}", file=sys.stderr)
        return 2


def _main(argv: list) -> int:
    if argv and argv[0] == "merge":
        ap = argparse.ArgumentParser(prog="accuracy.py merge")
        ap.add_argument("raw", nargs="+")
        ap.add_argument("--set", choices=sorted(SETS), default="tuned", help="which set's data file to write")
        ap.add_argument("--out", default=None, help="the data file (default: the set's)")
        ap.add_argument("--version", action="append", default=[], metavar="PKG=VER",
                        help="a package version the collector did not record (seen on the same machine)")
        a = ap.parse_args(argv[1:])
        out = Path(a.out) if a.out else SETS[a.set]
        d = merge(a.raw, out, dict(v.split("=", 1) for v in a.version))
        print(f"{out}: {len(d['sites'])} sites, {len(d['runs'])} runs, {len(d['executed'])} files executed")
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", choices=sorted(SETS), default="tuned",
                    help="tuned: the models the rules were developed on; heldout: code they were never tuned "
                         "on; fresh, fresh2, ..., fresh43: a second to forty-fourth set, recorded before anyone here "
                         "looked at them")
    ap.add_argument("--data", default=None, help="the sites file (default: the set's)")
    ap.add_argument("--format", choices=("text", "md", "json"), default="text")
    ap.add_argument("--no-false-flags", action="store_true")
    ap.add_argument("--examples", type=int, default=8, help="false-flag examples shown per rule")
    ap.add_argument("--linter", metavar="REV", default=None,
                    help="score the linter of this git revision (e.g. a baseline commit) instead of the working tree")
    a = ap.parse_args(argv)
    data, res = measure_set(Path(a.data) if a.data else SETS[a.set], not a.no_false_flags, a.linter)
    if a.format == "json":
        print(json.dumps(figures(res), indent=2))
    else:
        print(report(res, data, a.format, a.examples))
    return 0


if __name__ == "__main__":
    sys.exit(main())
