# Shared set-up of the measurement scripts (sourced): paths to the release leet and
# the reference `wandb` CLI (LEET and WANDB override them), and a release build unless
# SKIP_BUILD=1.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
LEET=${LEET:-$TARGET/release/leet}
WANDB=${WANDB:-/opt/wandbvenv/bin/wandb}
if [[ -z "${SKIP_BUILD:-}" ]]; then
    (cd "$ROOT" && cargo build --release --quiet --bin leet)
fi
