#!/bin/bash
# One v100-doctor report per node, then one fleet table over them (issue 15). Read-only on every node.
#
#   sbatch --nodes=16 deploy/slurm/v100-doctor-fleet.sh [REPORT_DIR]      # REPORT_DIR on a shared filesystem
#   V100_DOCTOR="python3 -m doctor" sbatch ...                            # another way to start the doctor
#   V100_DOCTOR_ARGS="--model /models/qwen27b --max-seq-len 8192" sbatch ...   # extra flags for each node's run
#
# Each task exits 0 when its report is written: exit codes 1 and 2 are findings (warnings, failures), which
# the fleet table shows; 3 and 4 (bad input, a doctor bug) fail the task.
#SBATCH --job-name=v100-doctor
#SBATCH --ntasks-per-node=1
#SBATCH --time=00:10:00
#SBATCH --output=v100-doctor-%j.out
set -u
REPORTS=${1:-$PWD/v100-doctor-reports/${SLURM_JOB_ID:-manual}}
DOCTOR=${V100_DOCTOR:-v100-doctor}
mkdir -p "$REPORTS"
srun --nodes="${SLURM_JOB_NUM_NODES:-1}" --ntasks-per-node=1 --kill-on-bad-exit=0 \
  bash -c "$DOCTOR ${V100_DOCTOR_ARGS:-} --no-probe --no-tui -o \"$REPORTS/\$(hostname).json\" >/dev/null; code=\$?; [ \$code -le 2 ]"
$DOCTOR fleet "$REPORTS"
