#!/usr/bin/env bash
# The GPU figures of docs/profile-gpu.md and docs/benchmarks.md in one go, on a CUDA machine:
# predicted vs measured saving, the automatic fix's speed-up, profile + join + HTML on the
# fixtures, --fail-on-sync, and the GPU-only tests. Writes everything under ${OUT:-gpu-out}.
set -uo pipefail
OUT=${OUT:-gpu-out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
PY=${PY:-python3}
$PY -c "import torch; print(torch.__version__, torch.cuda.get_device_name())" | tee "$OUT/env.txt"

# about 7 minutes on an H100: every case twice (held-out ones included), traces kept as test data
# (ESTIMATE=0 / AUTOFIX=0 skip the two benchmarks)
[ "${ESTIMATE:-1}" = 0 ] || $PY benchmarks/estimate.py --repeat 2 --held-out --json "$OUT/estimate.json" --runs /tmp/est-runs \
    --export-tests "$OUT/estimate-data" 2>&1 | tee "$OUT/estimate.log"
[ "${AUTOFIX:-1}" = 0 ] || $PY benchmarks/autofix.py --json "$OUT/autofix.json" 2>&1 | tee "$OUT/autofix.log"

for f in masked_loss_naive masked_loss_fixed classic_loop_naive classic_loop_fixed; do
  $PY -m syncscan profile --fail-on-sync --html "$OUT/$f.html" --output "$OUT/$f.json" --logdir "/tmp/runs/$f" \
      "fixtures/$f.py" --device cuda --steps 1000 > "$OUT/$f.txt" 2>&1
  echo "$f: profile exit $?" | tee -a "$OUT/exits.txt"
done
$PY -m syncscan lint --costs "$OUT/masked_loss_naive.json" fixtures/masked_loss_naive.py > "$OUT/costs.txt"
$PY -m pytest -q -p no:cacheprovider -p syncscan.pytest_plugin tests/test_profile_gpu.py tests/test_guard.py \
    > "$OUT/gpu-tests.log" 2>&1
grep -E "passed|failed" "$OUT/gpu-tests.log" | tail -3
