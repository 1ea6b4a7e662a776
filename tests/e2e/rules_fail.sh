#!/usr/bin/env bash
# A wrong rule set as the backend under test: exit 1, and the JSON shows the
# wrong numbers beside the truth (the documents' numbers).
. "$(dirname "$0")/common.bash"
# expect_pair FILE EXPECTED OBSERVED: a check with these arrays, in that order
expect_pair() {
  if grep -A1 -E "\"expected\":[[:space:]]*\[$2\]," "$1" | grep -qE "\"observed\":[[:space:]]*\[$3\]"; then ok
  else bad "no check with expected [$2] and observed [$3] in $1"; fi
}
C58005="$SRC/cases/pytorch-58005"
expect_exit 1 -- "$BIN" --rules torch-nn --world 2 --json "$TMP/nn.json" "$C58005/allreduce_prod_scaled.case"
expect_pair "$TMP/nn.json" 30 12
expect_pair "$TMP/nn.json" 30 18
expect_exit 1 -- "$BIN" --rules c10d --world 2 --json "$TMP/c10d.json" "$C58005"
expect_pair "$TMP/c10d.json" 40 20
expect_pair "$TMP/c10d.json" 10 4
expect_pair "$TMP/c10d.json" 0 50
expect_exit 1 -- "$BIN" --rules gatherlayer --json "$TMP/gl.json" "$SRC/cases/allgather-zh"
expect_pair "$TMP/gl.json" "12, 12, 12, 12" "6, 6, 6, 6"
expect_pair "$TMP/gl.json" "18, 18, 18, 18" "9, 9, 9, 9"
# the contrastive loss: GatherLayer is silently wrong on the texts, right on the images
expect_exit 1 -- "$BIN" --rules gatherlayer --world 2 "$SRC/cases/losses/clip_contrastive.case"
expect_grep "fail per_rank\(txt\) rank 0 rules=gatherlayer" "$TMP/out"
if grep -q "fail per_rank(img)" "$TMP/out"; then bad "gatherlayer should get img right"; else ok; fi
expect_exit 2 -- "$BIN" --rules no-such-rules --world 2 "$C58005/allreduce_sum_square.case"
expect_grep "unknown rule set 'no-such-rules'" "$TMP/out"
finish
