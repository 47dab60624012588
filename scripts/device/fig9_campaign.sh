#!/bin/bash
# One call on a lent many-core machine (the `device` tool): spres-fig9 at m = M (a reduced form of
# its spec) and the scaling campaign. Needs python/rtsched/_core.abi3.so built here and carried;
# writes into $OUT (or /tmp/devout). What each variable does: the defaults below. Used for
# docs/examples/campaign-16cpu-run3 and docs/examples/spres-fig9-16cpu (their READMEs).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export PYTHONPATH=$ROOT/python PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/devout}; mkdir -p "$OUT"
M=${M:-15}; SAMPLES=${SAMPLES:-2}; HORIZON=${HORIZON:-5s}; FIG9_T=${FIG9_T:-200}
CAMP_M=${CAMP_M:-2,4,8,15}; CAMP_BUDGET=${CAMP_BUDGET:-150s}; CAMP_T=${CAMP_T:-270}
W=/tmp/devwork; rm -rf $W; mkdir -p $W/exp; cd $W
RTP=0; chrt -f 50 true 2>/dev/null && RTP=50
{ date -u; uname -a; nproc; python3 --version; grep -m1 "model name" /proc/cpuinfo; grep -m1 "cpu MHz" /proc/cpuinfo
  echo "rt_priority used: $RTP"; cat /proc/sys/kernel/sched_rt_runtime_us; ls /sys/kernel/debug/sched 2>&1 | head -3
  python3 -c "import numpy, matplotlib, pyarrow; print('numpy', numpy.__version__, 'mpl', matplotlib.__version__, 'pa', pyarrow.__version__)"; } > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"
sed -e "s/^samples = 20/samples = $SAMPLES/" -e "s/^horizon = \"30s\"/horizon = \"$HORIZON\"/" \
    -e "s/^inflate = \"pilot\"/inflate = \"${INFLATE:-pilot}\"/" -e "s/^m = \[2\]/m = [$M]/" -e "s/^rt_priority = 50/rt_priority = $RTP/" \
    "$ROOT/python/rtsched/experiments/specs/spres-fig9.toml" > exp/spres-fig9.toml
grep -E "^(samples|horizon|m|rt_priority) =" exp/spres-fig9.toml
T0=$(date +%s)
RTSCHED_EXPERIMENTS=$W/exp timeout -s INT -k 10 "$FIG9_T" python3 -m rtsched reproduce spres-fig9 --out fig9 2>&1 | tee "$OUT/fig9.log"
echo "fig9 took $(( $(date +%s) - T0 )) s"
[ -n "${SKIP_CAMP:-}" ] && { tar czf "$OUT/results.tgz" fig9; exit 0; }
T1=$(date +%s)
RTP_ARG=(); [ "$RTP" != 0 ] && RTP_ARG=(--rt-priority "$RTP")
timeout -s INT -k 20 "$CAMP_T" python3 -m rtsched measure-overheads --campaign --quick --m "$CAMP_M" \
    --budget "$CAMP_BUDGET" "${RTP_ARG[@]}" --out camp 2>&1 | tail -c 20000 > "$OUT/campaign.log"
echo "campaign took $(( $(date +%s) - T1 )) s"; tail -25 "$OUT/campaign.log"
tar czf "$OUT/results.tgz" fig9 camp 2>&1 | tail -2
ls -la "$OUT"
